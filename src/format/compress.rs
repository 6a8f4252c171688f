//! Turning raw ring-buffer bytes into PERF_RECORD_COMPRESSED records, generic
//! over the codec (no `dyn`): the compressing memcpy.
//!
//! Rules from the format notes (section 0 and 5.7): type 81, unpadded, one
//! codec unit (one zstd flush) per record and never a unit cut in two, every
//! record ≤ 65 535 bytes and decoding to ≥ 1 byte.

use perfz_codecs::{Codec, Input, Step, MAX_RECORD_PAYLOAD};

use super::feature::CompressedInfo;
use super::record::{RecordHeader, RecordType};

/// The `mmap_len` we declare: perf's default ring mapping (129 pages). Every
/// record we write decodes to at most `Codec::max_input(65527)` < 65 528 bytes,
/// far below it, and perf 6.1's decoder wants room to spare (format notes 5.6).
pub const DECLARED_MMAP_LEN: u32 = 129 * 4096;

/// Largest record the compressor writes (header + payload).
pub const RECORD_MAX: usize = RecordHeader::SIZE + MAX_RECORD_PAYLOAD;

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
        }
    }

    /// Raw bytes one record takes at most.
    pub fn max_input(&self) -> usize {
        self.max_in
    }

    /// The flush ending the next push ends the codec's frame.
    pub fn end_frame_at_flush(&mut self) {
        self.codec.end_frame_at_flush()
    }

    /// A new, independently decodable stream (see `Codec::restart`).
    pub fn restart(&mut self) -> Result<(), perfz_codecs::Error> {
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
        Ok(step)
    }

    /// Output-driven: makes the first `payload` bytes after the header in
    /// `rec` one COMPRESSED record and returns its length. `push_len`, the
    /// length of the push it belongs to, bounds what it decodes to (every
    /// push ends with a flush) and so sizes HEADER_COMPRESSED's mmap_len.
    pub fn seal(&mut self, rec: &mut [u8], payload: usize, push_len: usize) -> usize {
        let size = (RecordHeader::SIZE + payload) as u16; // payload ≤ MAX_RECORD_PAYLOAD
        let h = RecordHeader {
            type_: RecordType::COMPRESSED,
            misc: 0,
            size,
        };
        rec[..RecordHeader::SIZE].copy_from_slice(&h.to_le());
        self.out_bytes += size as u64;
        self.records += 1;
        self.max_record_raw = self.max_record_raw.max(push_len);
        size as usize
    }

    /// Compresses `input` (one push: one or two slices) into as many records as
    /// needed in the compressor's own buffer, handing each to `emit`.
    pub fn push<E>(
        &mut self,
        input: Input<'_>,
        mut emit: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E>
    where
        E: From<perfz_codecs::Error>,
    {
        let mut rest = input;
        let mut rec = std::mem::take(&mut self.rec);
        if C::OUTPUT_DRIVEN && !rest.is_empty() {
            let mut fill = 0;
            loop {
                let step = match self.stream(rest, &mut rec[RecordHeader::SIZE + fill..], true) {
                    Ok(s) => s,
                    Err(e) => {
                        self.rec = rec;
                        return Err(e.into());
                    }
                };
                fill += step.produced;
                rest = rest.split_at(step.consumed).1;
                if fill > 0 && (step.done || RecordHeader::SIZE + fill == RECORD_MAX) {
                    let n = self.seal(&mut rec, fill, input.len());
                    fill = 0;
                    if let Err(e) = emit(&rec[..n]) {
                        self.rec = rec;
                        return Err(e);
                    }
                }
                if step.done {
                    break;
                }
            }
            rest = Input::default();
        }
        while !rest.is_empty() {
            let (now, later) = self.split(rest);
            let n = match self.record_into(now, &mut rec) {
                Ok(n) => n,
                Err(e) => {
                    self.rec = rec;
                    return Err(e.into());
                }
            };
            if let Err(e) = emit(&rec[..n]) {
                self.rec = rec;
                return Err(e);
            }
            rest = later;
        }
        self.rec = rec;
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
            mmap_len: DECLARED_MMAP_LEN.max(self.max_record_raw as u32),
        }
    }
}
