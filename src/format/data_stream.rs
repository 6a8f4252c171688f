//! One `data.N` file of perf's `--threads` directory format: a bare record
//! stream (no header, no features), read by perf up to the file's size. The
//! header, attrs and features live in the directory's `data` file.
//!
//! No FINISHED_ROUND either: perf's reader merges the directory's files by
//! timestamp, and a round in one file would flush the others' queued events
//! early. Nothing is patched, so a checkpoint only notes where the stream
//! stands (`DataStreamWriter::checkpoint`, no bytes written). After
//! `kill -9` perf opens the directory as long as no write was cut mid-way
//! (a torn `data.N` makes perf 6.1 stop with "failed to process sample");
//! `perfz recover DIR` cuts every `data.N` after its last whole record
//! (recover.rs).

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};

use super::writer::write_all_vectored;

/// Writes records to a `data.N` file from offset 0.
pub struct DataStreamWriter {
    f: File,
    /// Bytes of whole records written (a taken-back tail is cut at finish).
    size: u64,
    /// What the last checkpoint made durable: everything before it is whole
    /// records (and, compressed, whole pushes).
    checkpoint_end: Option<u64>,
    /// Records were written at offsets by someone else ([`account`](Self::account)):
    /// the cursor is behind `size`, so the next append seeks first.
    cursor_behind: bool,
}

impl DataStreamWriter {
    /// A writer that starts at offset 0 of `f` (a new, empty `data.N`).
    pub fn new(f: File) -> Self {
        DataStreamWriter {
            f,
            size: 0,
            checkpoint_end: None,
            cursor_behind: false,
        }
    }

    /// The file, for the async sink's writes at offsets.
    pub fn get_ref(&self) -> &File {
        &self.f
    }

    /// Where the next byte goes (for writers that write at offsets).
    pub fn data_end(&self) -> u64 {
        self.size
    }

    /// Counts `n` bytes written at offsets by someone else (the async sink).
    pub fn account(&mut self, n: u64) {
        self.size += n;
        self.cursor_behind = true;
    }

    /// Puts the cursor at the stream's end where positioned writes left it
    /// elsewhere (see `FileWriter::account`).
    fn cursor_to_end(&mut self) -> std::io::Result<()> {
        if std::mem::take(&mut self.cursor_behind) {
            self.f.seek(SeekFrom::Start(self.size))?;
        }
        Ok(())
    }

    /// Marks the stream as it is now as the point a crash falls back to
    /// (`perfz recover` cuts each `data.N` to its last whole record). There
    /// is nothing to patch in a bare stream (the features are in `data`), so
    /// it costs no bytes.
    pub fn checkpoint(&mut self) -> std::io::Result<Option<u64>> {
        self.f.flush()?;
        self.checkpoint_end = Some(self.size);
        Ok(Some(0))
    }

    /// Where the stream stood at the last checkpoint (`None` before the first).
    pub fn checkpoint_end(&self) -> Option<u64> {
        self.checkpoint_end
    }

    /// Cuts anything past the counted records (a region taken back after a
    /// failed write) and syncs the file.
    pub fn finish(self) -> std::io::Result<File> {
        let f = self.finish_unsynced()?;
        f.sync_all()?;
        Ok(f)
    }

    /// [`finish`](Self::finish) without the sync.
    pub fn finish_unsynced(mut self) -> std::io::Result<File> {
        self.f.flush()?;
        if self.f.metadata()?.len() != self.size {
            self.f.set_len(self.size)?;
        }
        self.f.seek(SeekFrom::Start(self.size))?;
        Ok(self.f)
    }
}

impl DataStreamWriter {
    /// Appends bytes that are whole records.
    pub fn write_records(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.cursor_to_end()?;
        self.f.write_all(bytes)?;
        self.size += bytes.len() as u64;
        Ok(())
    }

    /// Appends the concatenation of `parts` with one `writev`.
    pub fn write_records_vectored(&mut self, parts: &[&[u8]]) -> std::io::Result<()> {
        self.cursor_to_end()?;
        write_all_vectored(&mut self.f, parts)?;
        self.size += parts.iter().map(|p| p.len() as u64).sum::<u64>();
        Ok(())
    }

    /// Bytes of records written so far.
    pub fn data_size(&self) -> u64 {
        self.size
    }

    /// Takes back the last `n` bytes counted (cut at finish).
    pub fn forget(&mut self, n: u64) {
        self.size -= n.min(self.size);
        // The next write goes where the kept records end.
        let _ = self.f.seek(SeekFrom::Start(self.size));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn a_forgotten_tail_is_cut_and_overwritten() {
        let f = tempfile::tempfile().unwrap();
        let mut w = DataStreamWriter::new(f);
        w.write_records(&[1; 16]).unwrap();
        w.write_records_vectored(&[&[2; 8], &[3; 8]]).unwrap();
        w.forget(8);
        assert_eq!(w.data_size(), 24);
        let mut f = w.finish().unwrap();
        assert_eq!(f.metadata().unwrap().len(), 24);
        let mut all = Vec::new();
        f.seek(SeekFrom::Start(0)).unwrap();
        f.read_to_end(&mut all).unwrap();
        assert_eq!(&all[16..], &[2; 8]);
    }
}
