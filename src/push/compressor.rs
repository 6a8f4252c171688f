//! Turning raw ring-buffer bytes into PERF_RECORD_COMPRESSED records, generic
//! over the codec (no `dyn`): the compressing memcpy.
//!
//! Rules from the format notes (section 0, 5.6, 5.7b): type 81, unpadded,
//! every record ≤ 65 535 bytes, holding a block end (so it decodes to ≥ 1
//! byte) and never two frame ends, and no record decoding to more than
//! `mmap_len` bytes.
//!
//! Codecs that cut chunks by input (snappy, zstd one-shot) make one record
//! per chunk here (a push larger than `max_input`, the most input whose output
//! fits a record's 65 527 bytes, makes several); output-driven codecs
//! (streaming zstd, lz4) are cut by output in a record window the compressor
//! keeps (`cutter.rs`).
//!
//! One compressor cuts records for every caller, into a [`Records`]: the
//! recorder lends its sink's buffer (`Sink::record_buf` and `commit`), so
//! the codec's output, written straight after the 8-byte header, is the
//! only copy; conversions and eval use the compressor's own buffer
//! ([`Compressor::push`], each record handed to a closure).

use perfz_codecs::{Codec, Input, MAX_RECORD_PAYLOAD};

use super::cutter::RecordWindow;
use super::records::{declared_mmap_len, Records, Tally, RECORD_MAX};
use crate::format::feature::CompressedInfo;
use crate::format::record::{RecordHeader, RecordType};

/// Compresses pushes into COMPRESSED records and keeps the numbers that go into
/// HEADER_COMPRESSED.
pub struct Compressor<C: Codec> {
    codec: C,
    /// One record being built: header, then the codec's output.
    rec: Box<[u8]>,
    max_in: usize,
    /// What was written so far.
    pub tally: Tally,
    /// Output-driven codecs: the record being cut (see `cutter.rs`).
    window: RecordWindow,
}

impl<C: Codec> Compressor<C> {
    /// A compressor over `codec`, nothing written yet.
    pub fn new(codec: C) -> Self {
        let max_in = codec.max_input(MAX_RECORD_PAYLOAD);
        assert!(max_in > 0, "a codec that cannot fit one byte into a record");
        let window = RecordWindow::new::<C>(&codec);
        Compressor {
            window,
            codec,
            rec: vec![0u8; RECORD_MAX].into_boxed_slice(),
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

    /// Feeds one piece of a push to the codec (output-driven codecs); full
    /// records go to `out`.
    pub fn feed<R: Records>(&mut self, piece: &[u8], out: &mut R) -> Result<(), R::Error> {
        self.window
            .feed(&mut self.codec, &mut self.tally, piece, out)
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
        self.tally.raw_bytes += piece.len() as u64;
        self.tally.record(size as usize, piece.len());
        Ok(size as usize)
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
            for piece in [input.first, input.second] {
                self.feed(piece, out)?;
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
mod tests {
    use super::*;
    use crate::push::records::DECLARED_MMAP_LEN;
    use perfz_codecs::{CodecSpec, ZstdCodec};
    use zstd_oracle::stream::raw::{Decoder, InBuffer, Operation, OutBuffer};

    fn bytes(kind: usize, n: usize) -> Vec<u8> {
        let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ kind as u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        match kind {
            // Incompressible (raw blocks).
            0 => (0..n).map(|_| rnd() as u8).collect(),
            // About 4:3: 128 KiB blocks stay compressed blocks larger than
            // a record (the case a window could hold no block end in).
            1 => (0..n).map(|_| rnd() as u8 & 63).collect(),
            // Runs of one byte (tiny blocks).
            2 => vec![0u8; n],
            // Repeats with variation, like perf records.
            _ => (0..n)
                .map(|i| {
                    if rnd() % 16 == 0 {
                        rnd() as u8
                    } else {
                        (i % 251) as u8
                    }
                })
                .collect(),
        }
    }

    /// The records `data` makes in pushes of `push` bytes (each split in two
    /// slices somewhere, as a ring wrap does), flushed after every
    /// `flush_every` pushes and at the end.
    fn records_of<C: Codec>(
        c: &mut Compressor<C>,
        data: &[u8],
        push: usize,
        flush_every: usize,
    ) -> Vec<Vec<u8>> {
        let mut recs: Vec<Vec<u8>> = Vec::new();
        let mut keep = |r: &[u8]| {
            recs.push(r.to_vec());
            Ok::<(), perfz_codecs::Error>(())
        };
        for (i, chunk) in data.chunks(push).enumerate() {
            let k = (i * 7919) % (chunk.len() + 1);
            c.push(Input::two(&chunk[..k], &chunk[k..]), &mut keep)
                .unwrap();
            if i % flush_every == flush_every - 1 {
                c.flush(&mut keep).unwrap();
            }
        }
        c.flush(&mut keep).unwrap();
        recs
    }

    /// Every record holds a block end (decodes to at least one byte, read by
    /// the `zstd` crate's decoder in order), decodes to no more than the
    /// declared mmap_len, and all of them to exactly what was pushed: at
    /// every ratio, with and without holding, pushes small and large.
    #[test]
    fn every_record_decodes_to_one_byte_or_more_and_within_mmap_len() {
        for level in ["zstd:1", "zstd:3", "zstd:-5"] {
            let CodecSpec::Zstd(p) = level.parse::<CodecSpec>().unwrap() else {
                unreachable!()
            };
            for kind in 0..4 {
                let data = bytes(kind, 3 << 20);
                for hold in [false, true] {
                    for push in [1_000usize, 70_000, 300_000, 1 << 20] {
                        let mut c = Compressor::new(ZstdCodec::new(&p).unwrap());
                        c.set_hold(hold);
                        let recs = records_of(&mut c, &data, push, usize::MAX);
                        assert_eq!(c.info().mmap_len, DECLARED_MMAP_LEN);
                        let mut dec = Decoder::new().unwrap();
                        let mut out = vec![0u8; 1 << 20];
                        let mut got = Vec::new();
                        for (j, r) in recs.iter().enumerate() {
                            assert!(r.len() <= RECORD_MAX);
                            let payload = &r[RecordHeader::SIZE..];
                            let mut i = InBuffer::around(payload);
                            let mut n = 0;
                            while i.pos < payload.len() {
                                let mut o = OutBuffer::around(&mut out[..]);
                                dec.run(&mut i, &mut o).unwrap();
                                let k = o.pos();
                                got.extend_from_slice(&out[..k]);
                                n += k;
                            }
                            let what = format!(
                                "{level} kind {kind} hold {hold} push {push}: record {j} of {}",
                                recs.len()
                            );
                            assert!(n >= 1, "{what} decodes to nothing");
                            assert!(n <= DECLARED_MMAP_LEN as usize, "{what} decodes to {n}");
                        }
                        assert!(got == data, "{level} kind {kind} hold {hold} push {push}");
                    }
                }
            }
        }
    }

    /// lz4 (records end where full, blocks where its encoder ends them or a
    /// flush does): every record decodes, through perfz's own lz4 decoder,
    /// to no more than the compressor's count of the most a record took
    /// (`max_record_raw`: what it fed plus what was held when it began),
    /// and that to no more than the bound lz4 files declare, on data from
    /// incompressible to runs of zeros, with flushes now and then as the
    /// drain makes them.
    #[test]
    fn lz4_records_decode_within_the_declared_mmap_len() {
        use perfz_codecs::{Decoder, Lz4Codec, Lz4Decoder};
        for kind in 0..4 {
            let data = bytes(kind, 12 << 20);
            for push in [1_000usize, 70_000, 300_000, 1 << 20] {
                for flush_every in [1usize, 3, 50, usize::MAX] {
                    let mut c = Compressor::new(Lz4Codec::new());
                    c.set_hold(true);
                    let recs = records_of(&mut c, &data, push, flush_every);
                    let declared = c.tally.max_record_raw;
                    assert!(declared <= perfz_codecs::CodecId::LZ4_RECORD_DECODE_MAX as usize);
                    assert_eq!(
                        c.info().mmap_len,
                        perfz_codecs::CodecId::LZ4_RECORD_DECODE_MAX
                    );
                    let mut dec = Lz4Decoder::new();
                    let mut got = Vec::new();
                    for (j, r) in recs.iter().enumerate() {
                        let n = dec
                            .decompress(&r[RecordHeader::SIZE..], &mut got, usize::MAX)
                            .unwrap();
                        assert!(
                            n <= declared,
                            "kind {kind} push {push} flush every {flush_every}: record {j} of {} \
                             decodes to {n}, counted {declared}",
                            recs.len()
                        );
                    }
                    assert!(got == data, "kind {kind} push {push} flush {flush_every}");
                }
            }
        }
    }
}
