//! Writing perf.data: file mode (header patched at the end) and pipe mode.
//!
//! `FileWriter`: id arrays, attrs (trimmed to the 128 bytes perf 6.1 takes), records, then at
//! `finish` (or a `checkpoint`, docs/FORMAT.md) the features after the data and the header.
//! `PipeWriter` (pipe.rs): the 16-byte header, HEADER_ATTR / HEADER_FEATURE records (COMPRESSED before any
//! compressed record), the end marker and HEADER_TRACING_DATA, then the records.
//! A finish after a write failed for want of room: salvage.rs.

use std::io::{Seek, SeekFrom, Write};

use super::attr::AttrEntry;
use super::feature::FeatureSet;
use super::header::{FileHeader, Section, FILE_HEADER_SIZE};
use super::record::{RecordHeader, RecordType};
use super::FormatError;

/// Attrs as perf 6.1 accepts them, all of one size.
fn attrs_for_perf61(attrs: &[AttrEntry]) -> Result<Vec<AttrEntry>, FormatError> {
    let out = attrs
        .iter()
        .map(|a| {
            Ok(AttrEntry {
                attr: a.attr.for_perf61()?,
                ..a.clone()
            })
        })
        .collect::<Result<Vec<_>, FormatError>>()?;
    if let Some(first) = out.first() {
        if out.iter().any(|a| a.attr.raw.len() != first.attr.raw.len()) {
            return Err(FormatError::Unsupported(
                "attrs of different sizes in one file".into(),
            ));
        }
    }
    Ok(out)
}

/// A file-mode perf.data being written: ids, attrs, then records; features and
/// the final header at [`finish`](FileWriter::finish).
pub struct FileWriter<W: Write + Seek> {
    w: W,
    header: FileHeader,
    /// End of the last checkpoint block, if one was written.
    checkpoint_end: Option<u64>,
    /// The cursor is not at [`data_end`](Self::data_end): someone else
    /// wrote records at offsets ([`account`](Self::account)), which moves no
    /// cursor, so the next [`write_records`](Self::write_records) seeks first.
    cursor_behind: bool,
}

/// Record type of the block a checkpoint leaves in the data section: perf's
/// obsolete HEADER_EVENT_TYPE (65), which perf 6.1 reads and skips whatever
/// its size.
pub const SKIP_RECORD: RecordType = RecordType(65);

impl<W: Write + Seek> FileWriter<W> {
    /// Writes the id arrays and attr entries and a header with `data.size = 0`,
    /// as perf does, so a file cut short still has its attrs.
    pub fn new(mut w: W, attrs: &[AttrEntry]) -> Result<Self, FormatError> {
        let attrs = attrs_for_perf61(attrs)?;
        let attr_size = attrs.first().map_or(128, |a| a.attr.raw.len()) as u64 + 16;
        w.seek(SeekFrom::Start(FILE_HEADER_SIZE))?;
        let mut pos = FILE_HEADER_SIZE;
        let mut id_secs = Vec::new();
        for a in &attrs {
            for id in &a.ids {
                w.write_all(&id.to_le_bytes())?;
            }
            let size = 8 * a.ids.len() as u64;
            id_secs.push(Section { offset: pos, size });
            pos += size;
        }
        let attrs_sec = Section {
            offset: pos,
            size: attr_size * attrs.len() as u64,
        };
        for (a, ids) in attrs.iter().zip(&id_secs) {
            w.write_all(&a.attr.raw)?;
            w.write_all(&ids.to_le())?;
        }
        let header = FileHeader {
            attr_size,
            attrs: attrs_sec,
            data: Section {
                offset: attrs_sec.end().unwrap(),
                size: 0,
            },
            features: [0; 4],
        };
        let mut fw = FileWriter {
            w,
            header,
            checkpoint_end: None,
            cursor_behind: false,
        };
        fw.write_header()?;
        Ok(fw)
    }

    fn write_header(&mut self) -> std::io::Result<()> {
        let end = self.header.data.end().unwrap();
        self.w.seek(SeekFrom::Start(0))?;
        self.w.write_all(&self.header.to_le())?;
        self.w.seek(SeekFrom::Start(end))?;
        Ok(())
    }

    /// Where the next data byte goes (for writers that write at offsets).
    pub fn data_end(&self) -> u64 {
        self.header.data.end().unwrap()
    }

    /// Counts `n` bytes written to the data section at offsets by someone
    /// else (the async sink), so the header and feature table land after them
    /// and the next records appended here go after them too (a positioned
    /// write moves no cursor: before this was known, the LOST_SAMPLES the
    /// end appends after an `--aio` recording that lost samples went to the
    /// last checkpoint's end, over records, and left garbage at the end).
    pub fn account(&mut self, n: u64) {
        self.header.data.size += n;
        self.cursor_behind = true;
    }

    /// Puts the cursor at the data's end where positioned writes left it
    /// elsewhere.
    fn cursor_to_end(&mut self) -> std::io::Result<()> {
        if std::mem::take(&mut self.cursor_behind) {
            self.w.seek(SeekFrom::Start(self.data_end()))?;
        }
        Ok(())
    }

    /// The underlying writer.
    pub fn get_ref(&self) -> &W {
        &self.w
    }

    /// Makes the file readable by perf as it is now, whatever happens next
    /// (`kill -9`, a full disk).
    ///
    /// perf finds the feature table at `data.offset + data.size`, right where
    /// the next records go. So the checkpoint writes, at the data's end, one
    /// block that is two things at once: a feature table whose first entry
    /// belongs to the reserved feature bit 0 (which perf 6.1 and perfz skip),
    /// and — the same first 8 bytes read as a record header — a skip record
    /// ([`SKIP_RECORD`]) spanning the whole block. The header's `data.size`
    /// stops right before the block; later records go after it, so the table
    /// is never overwritten, and once the header moves past it the block is an
    /// ordinary record perf reads and ignores. Returns the block's size, or
    /// `None` if the features do not fit one record.
    pub fn checkpoint(&mut self, features: &FeatureSet) -> std::io::Result<Option<u64>> {
        let at = self.data_end();
        let mut rest = features.clone();
        rest.remove(0);
        // Entry 0 (16 bytes), then the real table and sections right after it.
        let (tail, mut bitmap) = feature_block(&rest, at + 16);
        bitmap[0] |= 1;
        let size = (16 + tail.len()).div_ceil(8) * 8;
        let Ok(size16) = u16::try_from(size) else {
            return Ok(None);
        };
        let mut block = Vec::with_capacity(size);
        // Entry 0 (feature bit 0): its offset field is the skip record's header.
        block.extend_from_slice(
            &RecordHeader {
                type_: SKIP_RECORD,
                misc: 0,
                size: size16,
            }
            .to_le(),
        );
        block.extend_from_slice(&0u64.to_le_bytes());
        block.extend_from_slice(&tail);
        block.resize(size, 0);
        self.w.seek(SeekFrom::Start(at))?;
        self.w.write_all(&block)?;
        self.w.flush()?;
        // The block is written before the header points at it.
        let on_disk = FileHeader {
            features: bitmap,
            ..self.header.clone()
        };
        self.w.seek(SeekFrom::Start(0))?;
        self.w.write_all(&on_disk.to_le())?;
        self.header.data.size += size as u64;
        self.checkpoint_end = Some(self.data_end());
        self.w.seek(SeekFrom::Start(self.data_end()))?;
        self.w.flush()?;
        Ok(Some(size as u64))
    }

    /// Where the last checkpoint block ends: everything before it is what a
    /// crash leaves readable.
    pub fn checkpoint_end(&self) -> Option<u64> {
        self.checkpoint_end
    }

    /// Writes the feature table and sections after the data and the final header.
    pub fn finish(mut self, features: &FeatureSet) -> Result<W, FormatError> {
        self.write_tail(features)?;
        Ok(self.w)
    }

    fn write_tail(&mut self, features: &FeatureSet) -> std::io::Result<()> {
        let table_at = self.header.data.end().unwrap();
        let (block, bitmap) = feature_block(features, table_at);
        self.w.seek(SeekFrom::Start(table_at))?;
        self.w.write_all(&block)?;
        self.header.features = bitmap;
        self.write_header()?;
        self.w.flush()
    }
}

impl<W: Write + Seek> FileWriter<W> {
    /// Appends bytes that are whole records (or, over several calls, a
    /// sequence of them).
    pub fn write_records(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.cursor_to_end()?;
        self.w.write_all(bytes)?;
        self.header.data.size += bytes.len() as u64;
        Ok(())
    }

    /// Appends the concatenation of `parts` (the two slices of a wrapped
    /// ring region) with one `writev`.
    pub fn write_records_vectored(&mut self, parts: &[&[u8]]) -> std::io::Result<()> {
        self.cursor_to_end()?;
        write_all_vectored(&mut self.w, parts)?;
        self.header.data.size += parts.iter().map(|p| p.len() as u64).sum::<u64>();
        Ok(())
    }

    /// Bytes of records written so far.
    pub fn data_size(&self) -> u64 {
        self.header.data.size
    }

    /// Takes back the last `n` bytes counted: a region written in several
    /// calls failed part way (a later finish writes over them).
    pub fn forget(&mut self, n: u64) {
        self.header.data.size -= n.min(self.header.data.size);
        // The next records go where the kept ones end.
        self.cursor_behind = true;
    }
}

/// Header-only user records (FINISHED_ROUND, FINISHED_INIT).
pub fn empty_record(t: RecordType) -> [u8; 8] {
    RecordHeader {
        type_: t,
        misc: 0,
        size: 8,
    }
    .to_le()
}

/// `write_all` for up to 64 slices with `writev`, retrying partial writes.
/// No allocation: it runs on the push path.
pub fn write_all_vectored(w: &mut impl Write, parts: &[&[u8]]) -> std::io::Result<()> {
    let mut arr = [std::io::IoSlice::new(&[]); 64];
    if parts.iter().filter(|p| !p.is_empty()).count() > arr.len() {
        return parts.iter().try_for_each(|p| w.write_all(p));
    }
    let mut n = 0;
    for p in parts.iter().filter(|p| !p.is_empty()) {
        arr[n] = std::io::IoSlice::new(p);
        n += 1;
    }
    let mut bufs = &mut arr[..n];
    while !bufs.is_empty() {
        match w.write_vectored(bufs) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => std::io::IoSlice::advance_slices(&mut bufs, n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The feature index table for `features` as it is laid out at file offset
/// `at` — one entry per feature bit 1..256 in ascending order — followed by the
/// sections it points to; and the feature bitmap that goes with it.
pub fn feature_block(features: &FeatureSet, at: u64) -> (Vec<u8>, [u64; 4]) {
    let bits: Vec<u32> = features
        .sections
        .keys()
        .copied()
        .filter(|&b| b > 0 && b < 256)
        .collect();
    let mut off = at + 16 * bits.len() as u64;
    let mut block = Vec::new();
    let mut bitmap = [0u64; 4];
    for &b in &bits {
        let len = features.sections[&b].len() as u64;
        block.extend_from_slice(
            &Section {
                offset: off,
                size: len,
            }
            .to_le(),
        );
        off += len;
        bitmap[(b / 64) as usize] |= 1 << (b % 64);
    }
    for &b in &bits {
        block.extend_from_slice(&features.sections[&b]);
    }
    (block, bitmap)
}

mod pipe;
mod salvage;
pub use pipe::PipeWriter;
pub use salvage::Salvage;

#[cfg(test)]
mod tests;
