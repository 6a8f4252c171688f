//! One stream of records (a data section, a pipe, or one `data.N` file), with
//! COMPRESSED records decoded on the fly through one decoder for the whole
//! stream. Decoded records may straddle COMPRESSED records; the partial tail is
//! carried over, as perf does.
//!
//! The decoder is made at the first compressed record, from
//! HEADER_COMPRESSED's codec id, and appends into a carry-over buffer whose
//! incomplete tail waits for the next compressed record. Memory per stream
//! is bounded by `mmap_len + DECODE_MARGIN` (64 KiB) of decoded bytes, with
//! `mmap_len` in 1..=`MAX_MMAP_LEN` (256 MiB), plus one 64 KiB outer record;
//! the zstd decoder's window is capped at 2^27 (codecs' `MAX_WINDOW_LOG`).

use std::io::Read;

use perfz_codecs::AnyDecoder;

use super::endian::Endian;
use super::feature::CompressedInfo;
use super::record::{Record, RecordHeader, RecordType};
use super::FormatError;

mod ahead;
mod decode;
mod payload;

/// Slack allowed on top of the declared `mmap_len` when decoding one record:
/// what may be left over from the previous record.
pub const DECODE_MARGIN: usize = 64 * 1024;
/// Largest `mmap_len` we accept: perf ring buffers this large are not used in
/// practice, and it caps what one record may make us allocate.
pub const MAX_MMAP_LEN: u32 = 256 << 20;
/// Largest AUX trace payload one AUXTRACE record may carry (perf's AUX
/// areas are at most a few hundred MiB).
pub const MAX_AUXTRACE: u64 = 1 << 30;

/// Whether `t` can be a record type: the kernel's and perf's (below 128)
/// and simpleperf's (32768 and up, below 33024). A pipe whose next
/// "record" is none of these has ended in something else (bytes appended,
/// perf's own messages), and is read up to there, as perf reads it.
fn plausible_type(t: RecordType) -> bool {
    t.0 < 128 || (32768..33024).contains(&t.0)
}

pub(crate) struct RecordStream {
    src: Box<dyn Read + Send>,
    endian: Endian,
    stream: Option<u32>,
    /// Offset of the next outer record and, for file sections, where they end.
    pos: u64,
    end: Option<u64>,
    decoder: Option<(AnyDecoder, usize)>,
    /// COMPRESSED records pass through undecoded (`PerfReader::open_raw`).
    pub raw: bool,
    /// The payload that followed the last HEADER_TRACING_DATA record.
    pub tracing_data: Vec<u8>,
    /// The outer record at hand, or a batch of plain ones read ahead
    /// (`outer_end`: where the current one ends, and the next of the
    /// batch starts where it is short of `outer`'s end).
    outer: Vec<u8>,
    outer_offset: u64,
    outer_end: usize,
    inner: Vec<u8>,
    inner_pos: usize,
    /// The record `advance` stopped on: (nested, start, header).
    cur: (bool, usize, RecordHeader),
    /// Decompressed bytes of a record the end of the stream cut off.
    pub cut_off: usize,
    /// What ended a pipe before its last record made sense (bytes after
    /// the last record, a record of size 0, a record cut off): the records
    /// before it are read, as perf reads them.
    pub damage: Option<FormatError>,
    /// Whether a record was read: a stream damaged at its first is no
    /// recording, and an error.
    any: bool,
    /// Where outer records are read and decoded on a thread of their own.
    ahead: Option<ahead::Ahead>,
}

impl RecordStream {
    pub fn new(
        src: Box<dyn Read + Send>,
        endian: Endian,
        pos: u64,
        end: Option<u64>,
        stream: Option<u32>,
    ) -> Self {
        RecordStream {
            src,
            endian,
            stream,
            pos,
            end,
            decoder: None,
            raw: false,
            tracing_data: Vec::new(),
            outer: Vec::with_capacity(1 << 16),
            outer_offset: pos,
            outer_end: 0,
            inner: Vec::new(),
            inner_pos: 0,
            cut_off: 0,
            damage: None,
            any: false,
            ahead: None,
            cur: (
                false,
                0,
                RecordHeader {
                    type_: RecordType(0),
                    misc: 0,
                    size: 0,
                },
            ),
        }
    }

    /// Fills `outer[from..to]` with as much as the source has; returns how much.
    fn fill(&mut self, from: usize, to: usize) -> Result<usize, FormatError> {
        self.outer.resize(to, 0);
        let mut got = 0;
        while from + got < to {
            match self.src.read(&mut self.outer[from + got..to]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        self.outer.truncate(from + got);
        Ok(got)
    }

    /// The record `advance` last stopped on.
    pub fn current(&self) -> Record<'_> {
        let (nested, start, header) = self.cur;
        let (bytes, offset) = if nested {
            // A decoded record's offset is its COMPRESSED record's.
            let bytes = &self.inner[start..start + header.size as usize];
            (bytes, self.outer_offset)
        } else {
            let bytes = &self.outer[start..self.outer_end];
            (bytes, self.outer_offset + start as u64)
        };
        Record {
            header,
            bytes,
            offset,
            nested,
            stream: self.stream,
        }
    }

    /// Moves to the next record: outer records as they are in the stream
    /// (COMPRESSED included), each followed by the records decoded from it.
    /// Returns false at the end of the stream.
    pub fn advance(&mut self, codec: Option<&CompressedInfo>) -> Result<bool, FormatError> {
        let left = self.inner.len() - self.inner_pos;
        if left >= RecordHeader::SIZE {
            let at = self.inner_pos;
            let h = RecordHeader::parse(self.inner[at..at + 8].try_into().unwrap(), self.endian);
            let size = h.size as usize;
            if size < RecordHeader::SIZE {
                return Err(FormatError::invalid(
                    self.outer_offset,
                    format!("a record inside the compressed data has size {size}, below the 8-byte header"),
                ));
            }
            if left >= size {
                self.inner_pos += size;
                self.cur = (true, at, h);
                return Ok(true);
            }
        }
        if self.outer_end < self.outer.len() {
            return Ok(self.next_in_batch());
        }
        // Keep only the incomplete tail (< 64 KiB: no record is larger).
        self.inner.drain(..self.inner_pos);
        self.inner_pos = 0;
        if self.ahead.is_some() {
            return self.take_ahead();
        }
        self.next_outer(codec)
    }

    /// Reads the next outer record, decoding it into `inner` where it is
    /// compressed. Returns false at the end of the stream; a pipe (a stream
    /// without a known end) that stops making sense ends there, the damage
    /// kept in `damage`.
    fn next_outer(&mut self, codec: Option<&CompressedInfo>) -> Result<bool, FormatError> {
        match self.read_outer(codec) {
            Err(e) if self.end.is_none() && self.any && e.is_damage() => {
                self.damage = Some(e);
                self.finish()
            }
            Ok(true) => {
                self.any = true;
                Ok(true)
            }
            other => other,
        }
    }

    /// Reads the next outer record into `outer` (and what follows it),
    /// decoding it into `inner` where it is compressed.
    fn read_outer(&mut self, codec: Option<&CompressedInfo>) -> Result<bool, FormatError> {
        // No batch of plain records is left (`fill` reuses `outer`).
        self.outer_end = usize::MAX;
        if self.end.is_some_and(|end| self.pos >= end) {
            return self.finish();
        }
        let offset = self.pos;
        let got = self.fill(0, RecordHeader::SIZE)?;
        if got == 0 && self.end.is_none() {
            return self.finish();
        }
        if got < RecordHeader::SIZE {
            return Err(FormatError::Truncated {
                offset,
                what: format!("record header: {got} of 8 bytes before the end of the file"),
            });
        }
        let mut h = RecordHeader::parse(self.outer[..8].try_into().unwrap(), self.endian);
        if h.type_ == RecordType::COMPRESSED2 {
            h.size = self.compressed2_size(h, offset)?;
        }
        self.check_header(h, offset)?;
        let size = h.size as usize;
        // The header (and a COMPRESSED2's data_size) is in `outer` already.
        let have = self.outer.len().min(size);
        let got = self.fill(have, size)? + have;
        if got < size {
            return Err(FormatError::Truncated {
                offset,
                what: format!(
                    "{} record of {size} bytes: the file ends after {}",
                    h.type_, got
                ),
            });
        }
        self.pos = offset + size as u64;
        self.outer_offset = offset;
        self.payload_after(h, offset)?;
        if h.type_.is_compressed() && !self.raw {
            self.decode(h, codec, offset)?;
        }
        self.cur = (false, 0, h);
        self.outer_end = self.outer.len();
        Ok(true)
    }

    /// Checks the outer record header `h` read at `offset`: at least its own
    /// size, a record type where a pipe may end in other bytes, and within
    /// the data section.
    fn check_header(&self, h: RecordHeader, offset: u64) -> Result<(), FormatError> {
        let size = h.size as usize;
        if size < RecordHeader::SIZE {
            return Err(FormatError::invalid(
                offset,
                format!(
                    "{} record has size {size}, below its 8-byte header",
                    h.type_
                ),
            ));
        }
        if self.end.is_none() && !plausible_type(h.type_) {
            return Err(FormatError::invalid(
                offset,
                format!(
                    "{} is no record type (bytes that are not records follow)",
                    h.type_
                ),
            ));
        }
        if let Some(end) = self.end {
            if offset + size as u64 > end {
                return Err(FormatError::Truncated {
                    offset,
                    what: format!("{} record of {size} bytes runs past the end of the data section at {end:#x}", h.type_),
                });
            }
        }
        Ok(())
    }

    /// The end of the stream. Decompressed bytes left over are the start of
    /// a record the recording's end cut off: a recorder stopped before it
    /// flushed its codec (killed, or its writes failed) leaves that. perf
    /// drops them silently; so do we, and say how many (`cut_off`).
    fn finish(&mut self) -> Result<bool, FormatError> {
        self.cut_off = self.inner.len();
        Ok(false)
    }
}

#[cfg(test)]
mod tests;
