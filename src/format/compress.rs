//! Turning raw ring-buffer bytes into PERF_RECORD_COMPRESSED records, generic
//! over the codec (no `dyn`): the compressing memcpy.
//!
//! Rules from the format notes (section 0, 5.6, 5.7b): type 81, unpadded,
//! every record ≤ 65 535 bytes, holding a block end (so it decodes to ≥ 1
//! byte) and never two frame ends, and no record decoding to more than
//! `mmap_len` bytes.
//!
//! Codecs that cut units by input (lz4, snappy, zstd one-shot) make one
//! record per unit here; output-driven codecs (zstd streaming) are cut by
//! output in a record window the compressor keeps (`cutter.rs`).

use perfz_codecs::{Codec, Input, MAX_RECORD_PAYLOAD};

use super::feature::CompressedInfo;
use super::record::{RecordHeader, RecordType};

/// The `mmap_len` we declare: perf's default ring mapping (129 pages). No
/// record we write decodes to more (units: at most `Codec::max_input(65527)`
/// bytes; output-driven records: `cutter::RECORD_RAW_LIMIT` and what was
/// held), and perf 6.1's decoder wants room to spare (format notes 5.6).
pub const DECLARED_MMAP_LEN: u32 = 129 * 4096;

/// The mmap_len an output of codec `id` declares when its records decoded
/// to at most `largest` bytes: perf's ring size at least, and the codec's
/// own bound where its records may decode to more (lz4,
/// [`CodecId::declared_decode_min`](perfz_codecs::CodecId::declared_decode_min)),
/// so a file cut off after a checkpoint, or announced before its records (a
/// pipe), reads whole.
pub fn declared_mmap_len(id: perfz_codecs::CodecId, largest: usize) -> u32 {
    DECLARED_MMAP_LEN
        .max(largest.min(u32::MAX as usize) as u32)
        .max(id.declared_decode_min())
}

/// Largest record the compressor writes (header + payload).
pub const RECORD_MAX: usize = RecordHeader::SIZE + MAX_RECORD_PAYLOAD;

/// Compresses pushes into COMPRESSED records and keeps the numbers that go into
/// HEADER_COMPRESSED.
pub struct Compressor<C: Codec> {
    pub(super) codec: C,
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
    /// Output-driven codecs: the record being cut (see `cutter.rs`).
    pub(super) window: super::cutter::RecordWindow,
}

impl<C: Codec> Compressor<C> {
    pub fn new(codec: C) -> Self {
        let max_in = codec.max_input(MAX_RECORD_PAYLOAD);
        assert!(max_in > 0, "a codec that cannot fit one byte into a record");
        let window = super::cutter::RecordWindow::new::<C>(&codec);
        Compressor {
            window,
            codec,
            rec: vec![0u8; RECORD_MAX].into_boxed_slice(),
            max_in,
            raw_bytes: 0,
            out_bytes: 0,
            records: 0,
            max_record_raw: 0,
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
            self.window.end_frame_due = true;
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
            mmap_len: declared_mmap_len(C::ID, self.max_record_raw),
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
    /// A finished record built elsewhere (the output-driven window).
    fn emit(&mut self, rec: &[u8]) -> Result<(), Self::Error> {
        self.buf()?[..rec.len()].copy_from_slice(rec);
        self.commit(rec.len())
    }
    /// The codec took `n` raw bytes (for a copy meter).
    fn took(&mut self, _n: usize) {}
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
