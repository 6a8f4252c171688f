//! Turning raw ring-buffer bytes into PERF_RECORD_COMPRESSED records, generic
//! over the codec (no `dyn`): the compressing memcpy.
//!
//! Rules from the format notes (section 0, 5.6, 5.7b): type 81, unpadded,
//! every record ≤ 65 535 bytes, holding a block end (so it decodes to ≥ 1
//! byte) and never two frame ends, and no record decoding to more than
//! `mmap_len` bytes. Or, chosen once per compressor
//! ([`Compressor::with_format`]), type 83 (COMPRESSED2: a u64 data_size
//! after the header, the payload padded to 8 bytes, at most 65 512 bytes
//! of it) under the same rules.
//!
//! Codecs that cut chunks by input (snappy, zstd one-shot) make one record
//! per chunk here (a push larger than `max_input`, the most input whose output
//! fits a record's 65 527 bytes, makes several); output-driven codecs
//! (streaming zstd, lz4) are cut by output in a record window the compressor
//! keeps (`cutter.rs`).
//!
//! One compressor cuts records for every caller, into a `Records`: the
//! recorder lends its sink's buffer (`Sink::record_buf` and `commit`), so
//! the codec's output, written straight after the 8-byte header, is the
//! only copy; conversions and eval use the compressor's own buffer
//! ([`Compressor::push`], each record handed to a closure).

use perfz_codecs::{Codec, Input};

use super::cutter::RecordWindow;
use super::records::{declared_mmap_len, Records, Tally, RECORD_MAX};
use crate::format::feature::CompressedInfo;
use crate::format::CompressedFormat;

/// Compresses pushes into COMPRESSED (or COMPRESSED2) records and keeps the
/// numbers that go into HEADER_COMPRESSED.
pub struct Compressor<C: Codec> {
    codec: C,
    /// One record being built: header, then the codec's output.
    rec: Box<[u8]>,
    /// The record type written, chosen once.
    format: CompressedFormat,
    max_in: usize,
    /// What was written so far.
    pub(crate) tally: Tally,
    /// Output-driven codecs: the record being cut (see `cutter.rs`).
    window: RecordWindow,
}

impl<C: Codec> Compressor<C> {
    /// A compressor over `codec` writing COMPRESSED records (the default
    /// format), nothing written yet.
    pub fn new(codec: C) -> Self {
        Self::with_format(codec, CompressedFormat::default())
    }

    /// A compressor over `codec` writing records of `format`.
    pub fn with_format(codec: C, format: CompressedFormat) -> Self {
        let max_in = codec.max_input(format.max_payload());
        assert!(max_in > 0, "a codec that cannot fit one byte into a record");
        let window = RecordWindow::new::<C>(&codec, format);
        Compressor {
            window,
            codec,
            rec: vec![0u8; RECORD_MAX].into_boxed_slice(),
            format,
            max_in,
            tally: Tally::default(),
        }
    }

    /// Raw bytes one record takes at most.
    pub fn max_input(&self) -> usize {
        self.max_in
    }

    /// The flush ending the next push ends the codec's frame.
    pub fn end_frame_at_flush(&mut self) {
        if C::OUTPUT_DRIVEN {
            // Passed on at the push's last flush only (cutter.rs): a flush
            // inside the push must not end the frame.
            self.window.end_frame_due();
        } else {
            self.codec.end_frame_at_flush()
        }
    }

    /// A new, independently decodable stream (see `Codec::restart`).
    pub fn restart(&mut self) -> Result<(), perfz_codecs::Error> {
        debug_assert!(!self.holds(), "restart with bytes held: flush first");
        self.window.reset::<C>(&self.codec);
        self.codec.restart()
    }

    /// The codec underneath.
    pub fn codec(&self) -> &C {
        &self.codec
    }

    /// Whether pushes end without a flush. Only output-driven codecs hold;
    /// for the others this does nothing.
    pub fn set_hold(&mut self, hold: bool) {
        self.window.set_hold(hold && C::OUTPUT_DRIVEN);
    }

    /// True when pushed bytes are not in a written record yet: a flush is
    /// needed before anything that must follow them.
    pub fn holds(&self) -> bool {
        self.window.holds()
    }

    /// Feeds one slice of a push to the codec (output-driven codecs); full
    /// records go to `out`.
    pub fn feed<R: Records>(&mut self, slice: &[u8], out: &mut R) -> Result<(), R::Error> {
        self.window
            .feed(&mut self.codec, &mut self.tally, slice, out)
    }

    /// Ends a push: with hold, nothing (the record stays open); else, or
    /// where the frame must end, a flush and the record sealed.
    pub fn end<R: Records>(&mut self, out: &mut R) -> Result<(), R::Error> {
        self.window.end(&mut self.codec, &mut self.tally, out)
    }

    /// Flushes what the codec holds and seals the record: everything pushed
    /// is then in records given to `out`.
    pub fn flush_into<R: Records>(&mut self, out: &mut R) -> Result<(), R::Error> {
        self.window
            .flush_into(&mut self.codec, &mut self.tally, out)
    }

    /// The next part of `rest` that fits one record, and what remains. Codecs
    /// that make a frame per slice are never given both slices of a wrap, so
    /// no record holds two frame ends (perf 6.1 cannot read that).
    pub fn split<'a>(&self, rest: Input<'a>) -> (Input<'a>, Input<'a>) {
        let limit = if C::FRAME_PER_SLICE && !rest.first.is_empty() {
            self.max_in.min(rest.first.len())
        } else {
            self.max_in
        };
        rest.split_at(limit)
    }

    /// Compresses `part` (at most [`max_input`](Self::max_input) bytes) into
    /// one whole record of the format at the start of `dst` — the buffer
    /// that will be written, so the codec's output is the only copy — and
    /// returns the record's length. `dst` must hold `RECORD_MAX` bytes.
    pub fn record_into(
        &mut self,
        part: Input<'_>,
        dst: &mut [u8],
    ) -> Result<usize, perfz_codecs::Error> {
        debug_assert!(part.len() <= self.max_in && !part.is_empty());
        let n = self
            .codec
            .compress(part, &mut dst[self.format.prefix()..])?;
        // n ≤ the format's max_payload by max_input
        let size = self.format.seal(dst, n);
        self.tally.raw_bytes += part.len() as u64;
        self.tally.record(size, part.len());
        Ok(size)
    }

    /// Compresses `input` (one push: one or two slices) into as many records as
    /// needed in the compressor's own buffer, handing each to `emit`
    /// (recompress, decompress and eval; the recorder's pusher uses the same
    /// [`feed`](Self::feed) and [`end`](Self::end)).
    pub fn push<E>(
        &mut self,
        input: Input<'_>,
        emit: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E>
    where
        E: From<perfz_codecs::Error>,
    {
        self.with_own_buffer(emit, |c, own| c.push_into(input, own))
    }

    /// Flushes what the codec holds into records handed to `emit` (see
    /// [`set_hold`](Self::set_hold)).
    pub fn flush<E>(&mut self, emit: impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), E>
    where
        E: From<perfz_codecs::Error>,
    {
        self.with_own_buffer(emit, |c, own| c.flush_into(own))
    }

    /// Runs `f` with records built in the compressor's own buffer and
    /// handed to `emit`.
    fn with_own_buffer<E, F>(
        &mut self,
        emit: F,
        f: impl FnOnce(&mut Self, &mut OwnBuffer<F>) -> Result<(), E>,
    ) -> Result<(), E>
    where
        E: From<perfz_codecs::Error>,
        F: FnMut(&[u8]) -> Result<(), E>,
    {
        let mut own = OwnBuffer {
            rec: std::mem::take(&mut self.rec),
            emit,
        };
        let r = f(self, &mut own);
        self.rec = own.rec;
        r
    }

    /// One push of `input` into records built in `out`'s buffer.
    pub fn push_into<R: Records>(&mut self, input: Input<'_>, out: &mut R) -> Result<(), R::Error> {
        if input.is_empty() {
            return Ok(());
        }
        if C::OUTPUT_DRIVEN {
            for slice in [input.first, input.second] {
                self.feed(slice, out)?;
            }
            return self.end(out);
        }
        let mut rest = input;
        while !rest.is_empty() {
            let (now, later) = self.split(rest);
            out.took(now.len());
            let n = self.record_into(now, out.buf()?)?;
            out.commit(n)?;
            rest = later;
        }
        Ok(())
    }

    /// HEADER_COMPRESSED for what was written (ratio rounded like perf's).
    pub fn info(&self) -> CompressedInfo {
        let t = &self.tally;
        let ratio = if t.out_bytes == 0 {
            0.0
        } else {
            t.raw_bytes as f64 / t.out_bytes as f64
        };
        CompressedInfo {
            version: 0,
            codec: C::ID.0,
            level: self.codec.level() as u32,
            ratio: (ratio + 0.5) as u32,
            mmap_len: declared_mmap_len(C::ID, t.max_record_raw),
        }
    }
}

/// The compressor's own buffer, each record handed to `emit`.
struct OwnBuffer<F> {
    rec: Box<[u8]>,
    emit: F,
}

impl<E: From<perfz_codecs::Error>, F: FnMut(&[u8]) -> Result<(), E>> Records for OwnBuffer<F> {
    type Error = E;
    fn buf(&mut self) -> Result<&mut [u8], E> {
        Ok(&mut self.rec)
    }
    fn commit(&mut self, n: usize) -> Result<(), E> {
        (self.emit)(&self.rec[..n])
    }
    fn emit(&mut self, rec: &[u8]) -> Result<(), E> {
        (self.emit)(rec)
    }
}

#[cfg(test)]
mod tests;
