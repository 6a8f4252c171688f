//! Turning raw ring-buffer bytes into PERF_RECORD_COMPRESSED records, generic
//! over the codec (no `dyn`): the compressing memcpy.
//!
//! Rules from the format notes (section 0, 5.6, 5.7b): type 81, unpadded,
//! every record ≤ 65 535 bytes, holding a block end (so it decodes to ≥ 1
//! byte) and never two frame ends, and no record decoding to more than
//! `mmap_len` bytes.
//!
//! Output-driven codecs (zstd streaming) may *hold* input across pushes
//! ([`Compressor::set_hold`]): a push then ends by sealing what output its
//! blocks made, without a flush, so zstd keeps making full blocks instead of
//! one short block per push. The caller flushes ([`Compressor::flush_into`])
//! before anything that must follow the held bytes in the file (plain
//! records, checkpoints, the end) and now and then, so held bytes reach the
//! file in bounded time; FINISHED_ROUND goes into the stream itself while
//! bytes are held (perf processes records it decompresses like any other).

use perfz_codecs::{Codec, Input, Step, MAX_RECORD_PAYLOAD};

use super::feature::CompressedInfo;
use super::record::{RecordHeader, RecordType};

/// The `mmap_len` we declare: perf's default ring mapping (129 pages). Every
/// record we write decodes to at most `Codec::max_input(65527)` < 65 528 bytes,
/// far below it, and perf 6.1's decoder wants room to spare (format notes 5.6).
pub const DECLARED_MMAP_LEN: u32 = 129 * 4096;

/// Largest record the compressor writes (header + payload).
pub const RECORD_MAX: usize = RecordHeader::SIZE + MAX_RECORD_PAYLOAD;

/// Raw bytes an output-driven record may take before it is sealed (when it
/// holds output): with what the codec held before it began
/// ([`Codec::MAX_HELD`]) it decodes to at most [`DECLARED_MMAP_LEN`], so
/// perf's reader, which makes room for `mmap_len` bytes per record, is never
/// given more — however large a push, however long bytes are held.
pub fn record_raw_limit<C: Codec>() -> usize {
    (DECLARED_MMAP_LEN as usize)
        .saturating_sub(C::MAX_HELD)
        .max(4096)
}

/// Compresses pushes into COMPRESSED records and keeps the numbers that go into
/// HEADER_COMPRESSED.
pub struct Compressor<C: Codec> {
    codec: C,
    /// One record being built: header, then the codec's output.
    rec: Box<[u8]>,
    max_in: usize,
    /// Raw bytes fed in (perf's "original" size).
    pub raw_bytes: u64,
    /// Bytes of records written, headers included (perf's "compressed" size).
    pub out_bytes: u64,
    pub records: u64,
    /// The most raw bytes any one record decodes to.
    pub max_record_raw: usize,
    /// Pushes end without a flush (output-driven codecs only).
    hold: bool,
    /// Raw bytes taken since the codec last flushed.
    unflushed: u64,
    /// The next flush ends the frame: the next push must flush.
    end_frame_due: bool,
}

impl<C: Codec> Compressor<C> {
    pub fn new(codec: C) -> Self {
        let max_in = codec.max_input(MAX_RECORD_PAYLOAD);
        assert!(max_in > 0, "a codec that cannot fit one byte into a record");
        Compressor {
            codec,
            rec: vec![0u8; RECORD_MAX].into_boxed_slice(),
            max_in,
            raw_bytes: 0,
            out_bytes: 0,
            records: 0,
            max_record_raw: 0,
            hold: false,
            unflushed: 0,
            end_frame_due: false,
        }
    }

    /// Whether pushes end without a flush (see the module notes). Only
    /// output-driven codecs hold; for the others this does nothing.
    pub fn set_hold(&mut self, hold: bool) {
        self.hold = hold && C::OUTPUT_DRIVEN;
    }

    /// True when the codec holds raw bytes no written record decodes to yet:
    /// a flush is needed before anything that must follow them.
    pub fn holds(&self) -> bool {
        self.unflushed > 0
    }

    /// Raw bytes one record takes at most.
    pub fn max_input(&self) -> usize {
        self.max_in
    }

    /// The flush ending the next push ends the codec's frame.
    pub fn end_frame_at_flush(&mut self) {
        self.end_frame_due = true;
        self.codec.end_frame_at_flush()
    }

    /// A new, independently decodable stream (see `Codec::restart`).
    pub fn restart(&mut self) -> Result<(), perfz_codecs::Error> {
        self.unflushed = 0;
        self.end_frame_due = false;
        self.codec.restart()
    }

    pub fn codec(&self) -> &C {
        &self.codec
    }

    /// The next piece of `rest` that fits one record, and what remains. Codecs
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

    /// Compresses `piece` (at most [`max_input`](Self::max_input) bytes) into
    /// one whole COMPRESSED record at the start of `dst` — the buffer that will
    /// be written, so the codec's output is the only copy — and returns the
    /// record's length. `dst` must hold [`RECORD_MAX`] bytes.
    pub fn record_into(
        &mut self,
        piece: Input<'_>,
        dst: &mut [u8],
    ) -> Result<usize, perfz_codecs::Error> {
        debug_assert!(piece.len() <= self.max_in && !piece.is_empty());
        let n = self.codec.compress(piece, &mut dst[RecordHeader::SIZE..])?;
        let size = (RecordHeader::SIZE + n) as u16; // n ≤ 65 527 by max_input
        let h = RecordHeader {
            type_: RecordType::COMPRESSED,
            misc: 0,
            size,
        };
        dst[..RecordHeader::SIZE].copy_from_slice(&h.to_le());
        self.raw_bytes += piece.len() as u64;
        self.out_bytes += size as u64;
        self.records += 1;
        self.max_record_raw = self.max_record_raw.max(piece.len());
        Ok(size as usize)
    }

    /// Output-driven ([`Codec::OUTPUT_DRIVEN`]): feeds `piece` to the codec,
    /// writing into `window`, the free part of the current record's payload
    /// (see [`Codec::stream`]); counts the raw bytes.
    pub fn stream(
        &mut self,
        piece: Input<'_>,
        window: &mut [u8],
        flush: bool,
    ) -> Result<Step, perfz_codecs::Error> {
        let step = self.codec.stream(piece, window, flush)?;
        self.raw_bytes += step.consumed as u64;
        self.unflushed += step.consumed as u64;
        if flush && step.done {
            self.unflushed = 0;
            self.end_frame_due = false;
        }
        Ok(step)
    }

    /// Output-driven: makes the first `payload` bytes after the header in
    /// `rec` one COMPRESSED record and returns its length. `decodes_to`
    /// bounds what it decodes to (see [`Cut`]) and so sizes
    /// HEADER_COMPRESSED's mmap_len.
    pub fn seal(&mut self, rec: &mut [u8], payload: usize, decodes_to: usize) -> usize {
        let size = (RecordHeader::SIZE + payload) as u16; // payload ≤ MAX_RECORD_PAYLOAD
        let h = RecordHeader {
            type_: RecordType::COMPRESSED,
            misc: 0,
            size,
        };
        rec[..RecordHeader::SIZE].copy_from_slice(&h.to_le());
        self.out_bytes += size as u64;
        self.records += 1;
        self.max_record_raw = self.max_record_raw.max(decodes_to);
        size as usize
    }

    /// Compresses `input` (one push: one or two slices) into as many records as
    /// needed in the compressor's own buffer, handing each to `emit`
    /// (recompress, decompress and eval; the recorder cuts into its sink's
    /// buffer with the same [`feed`](Self::feed)).
    pub fn push<E>(
        &mut self,
        input: Input<'_>,
        emit: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E>
    where
        E: From<perfz_codecs::Error>,
    {
        let mut own = OwnBuffer {
            rec: std::mem::take(&mut self.rec),
            emit,
        };
        let r = self.push_into(input, &mut own);
        self.rec = own.rec;
        r
    }

    /// One push of `input` into records built in `out`'s buffer.
    pub fn push_into<R: Records>(&mut self, input: Input<'_>, out: &mut R) -> Result<(), R::Error> {
        if input.is_empty() {
            return Ok(());
        }
        if C::OUTPUT_DRIVEN {
            let mut cut = self.cut_start();
            for piece in [input.first, input.second] {
                self.feed(&mut cut, piece, out)?;
            }
            return self.end(&mut cut, out);
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

    /// The record cutter of output-driven codecs ([`Codec::OUTPUT_DRIVEN`]),
    /// the one every path uses: feeds one piece of a push to the codec,
    /// which fills the current record's payload in `out`'s buffer; each
    /// full record is sealed and committed, and the cutting goes on in the
    /// next one.
    pub fn feed<R: Records>(
        &mut self,
        cut: &mut Cut,
        piece: &[u8],
        out: &mut R,
    ) -> Result<(), R::Error> {
        self.cut(cut, piece, false, out)
    }

    /// Where a push's cutting starts.
    pub fn cut_start(&self) -> Cut {
        Cut {
            fill: 0,
            fed: 0,
            held_before: (self.unflushed as usize).min(C::MAX_HELD),
        }
    }

    /// Ends a push: the codec flushes (unless it holds, see
    /// [`set_hold`](Self::set_hold)), and the last record is sealed.
    pub fn end<R: Records>(&mut self, cut: &mut Cut, out: &mut R) -> Result<(), R::Error> {
        if self.hold && !self.end_frame_due {
            // The last step consumed everything and left the window not
            // full, so its output ends at a block end (Codec::MAX_HELD).
            return self.seal_partial(cut, out);
        }
        self.cut(cut, &[], true, out)
    }

    /// Flushes what the codec holds into records (nothing if it holds
    /// nothing).
    pub fn flush_into<R: Records>(&mut self, out: &mut R) -> Result<(), R::Error> {
        if !self.holds() {
            return Ok(());
        }
        let mut cut = self.cut_start();
        self.cut(&mut cut, &[], true, out)
    }

    fn seal_partial<R: Records>(&mut self, cut: &mut Cut, out: &mut R) -> Result<(), R::Error> {
        if cut.fill == 0 {
            return Ok(());
        }
        let buf = out.buf()?;
        let n = self.seal(buf, cut.fill, cut.decodes_to());
        out.commit(n)?;
        *cut = self.cut_start();
        Ok(())
    }

    fn cut<R: Records>(
        &mut self,
        cut: &mut Cut,
        piece: &[u8],
        flush: bool,
        out: &mut R,
    ) -> Result<(), R::Error> {
        let limit = record_raw_limit::<C>();
        let mut rest = piece;
        loop {
            let buf = out.buf()?;
            let window = &mut buf[RecordHeader::SIZE + cut.fill..RECORD_MAX];
            // A record takes at most `limit` raw bytes while it holds
            // output; one that holds none yet takes on (it cannot be
            // sealed), and says so in what it decodes to.
            let room = limit.saturating_sub(cut.fed);
            let capped = room > 0 && rest.len() > room;
            let now = if capped { &rest[..room] } else { rest };
            let step = self.stream(Input::one(now), window, flush && !capped)?;
            cut.fill += step.produced;
            cut.fed += step.consumed;
            rest = &rest[step.consumed..];
            let done = step.done && !capped;
            let full = RecordHeader::SIZE + cut.fill == RECORD_MAX;
            // Not full: the step stopped with its input consumed, so its
            // output ends at a block end (Codec::MAX_HELD's contract).
            let at_limit = step.done && cut.fed >= limit && cut.fill > 0;
            let sealed = (full || at_limit || (flush && done && cut.fill > 0))
                .then(|| self.seal(buf, cut.fill, cut.decodes_to()));
            out.took(step.consumed);
            if let Some(n) = sealed {
                out.commit(n)?;
                *cut = self.cut_start();
            } else if step.consumed == 0 && step.produced == 0 && !step.done {
                return Err(perfz_codecs::Error::NoProgress.into());
            }
            if done {
                return Ok(());
            }
        }
    }

    /// HEADER_COMPRESSED for what was written (ratio rounded like perf's).
    pub fn info(&self) -> CompressedInfo {
        let ratio = if self.out_bytes == 0 {
            0.0
        } else {
            self.raw_bytes as f64 / self.out_bytes as f64
        };
        CompressedInfo {
            version: 0,
            codec: C::ID.0,
            level: self.codec.level() as u32,
            ratio: (ratio + 0.5) as u32,
            mmap_len: DECLARED_MMAP_LEN.max(self.max_record_raw as u32),
        }
    }
}

/// Where records are cut into: the buffer the next record is built in and
/// the commit of a finished one. The recorder's sink lends its own write
/// buffer (the codec's output is the only copy); conversions use the
/// compressor's.
pub trait Records {
    type Error: From<perfz_codecs::Error>;
    /// The buffer of the record being built ([`RECORD_MAX`] bytes at
    /// least; the same one until [`commit`](Records::commit)).
    fn buf(&mut self) -> Result<&mut [u8], Self::Error>;
    /// Its first `n` bytes are a finished record.
    fn commit(&mut self, n: usize) -> Result<(), Self::Error>;
    /// The codec took `n` raw bytes (for a copy meter).
    fn took(&mut self, _n: usize) {}
}

/// Where one push's cutting stands: payload bytes in the record being
/// built, raw bytes the codec took since it began, and what the codec held
/// then. A record decodes to at most those two together: its output ends
/// blocks made of bytes taken since it began or held before (held bytes
/// are bounded by [`Codec::MAX_HELD`] and by what came since the last
/// flush).
pub struct Cut {
    fill: usize,
    fed: usize,
    held_before: usize,
}

impl Cut {
    fn decodes_to(&self) -> usize {
        self.fed + self.held_before
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
}
