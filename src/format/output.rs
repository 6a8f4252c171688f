//! What an output of perf.data records does besides taking them: making
//! what it holds readable now (a checkpoint), finishing, and a successor for
//! `--switch-output` — for a file, a pipe and a `data.N` stream.

use std::fs::File;
use std::io;

use super::data_stream::DataStreamWriter;
use super::writer::{FileWriter, PipeWriter, RecordSink};
use super::{AttrEntry, FeatureSet, FormatError};

/// A perf.data output being written.
pub trait Output: RecordSink + Sized {
    /// Makes the output readable as it is now; returns the bytes it used,
    /// `None` where the output cannot (a pipe, or features too large).
    fn checkpoint(&mut self, features: &FeatureSet) -> io::Result<Option<u64>> {
        let _ = features;
        Ok(None)
    }
    /// Where the last checkpoint left the output: a crash falls back to it.
    fn checkpoint_end(&self) -> Option<u64> {
        None
    }
    /// Writes what follows the records (features, header) and syncs.
    fn finish(self, features: &FeatureSet) -> Result<(), FormatError>;
    /// [`finish`](Self::finish) without waiting for the disk: what
    /// `--switch-output` does on the drain thread, where an fsync under
    /// write-back load took 0.2–0.4 s and the rings overflowed meanwhile.
    /// Returns the file for [`sync_in_background`] where it needs a sync.
    fn finish_unsynced(self, features: &FeatureSet) -> Result<Option<File>, FormatError> {
        self.finish(features).map(|()| None)
    }
    /// [`finish`](Self::finish) after a write failed: where what follows the
    /// records does not fit (no room), the records are cut back to one of
    /// `ends` (data sizes at record boundaries) where it does.
    fn finish_cutting_back(self, features: &FeatureSet, ends: &[u64]) -> Result<(), FormatError> {
        let _ = ends;
        self.finish(features)
    }
    /// An output of the same kind over `next` (`--switch-output`), or None
    /// where outputs cannot be switched (a pipe).
    fn successor(&self, next: File, attrs: &[AttrEntry]) -> Result<Option<Self>, FormatError> {
        let _ = (next, attrs);
        Ok(None)
    }
    /// Whether it can be finished after a failed write (not a pipe).
    const SALVAGEABLE: bool;
}

impl Output for FileWriter<File> {
    const SALVAGEABLE: bool = true;
    fn checkpoint(&mut self, features: &FeatureSet) -> io::Result<Option<u64>> {
        FileWriter::checkpoint(self, features)
    }
    fn checkpoint_end(&self) -> Option<u64> {
        FileWriter::checkpoint_end(self)
    }
    fn finish(self, features: &FeatureSet) -> Result<(), FormatError> {
        let f = FileWriter::finish(self, features)?;
        f.sync_all()?;
        Ok(())
    }
    fn finish_unsynced(self, features: &FeatureSet) -> Result<Option<File>, FormatError> {
        Ok(Some(FileWriter::finish(self, features)?))
    }
    fn finish_cutting_back(self, features: &FeatureSet, ends: &[u64]) -> Result<(), FormatError> {
        let f = FileWriter::finish_cutting_back(self, features, ends)?;
        f.sync_all()?;
        Ok(())
    }
    fn successor(&self, next: File, attrs: &[AttrEntry]) -> Result<Option<Self>, FormatError> {
        FileWriter::new(next, attrs).map(Some)
    }
}

/// Syncs a finished output on a thread of its own, so the drain does not
/// wait for the disk. A sync error goes unreported, and where the thread
/// cannot start the file is closed unsynced: either way the output is whole
/// in the page cache, as perf leaves every output it writes (it never syncs).
pub fn sync_in_background(file: Option<File>) {
    let Some(file) = file else { return };
    let _ = std::thread::Builder::new()
        .name("perfz-sync".into())
        .spawn(move || {
            let _ = file.sync_all();
        });
}

/// A pipe is read as it comes: nothing to patch, nothing to take back.
impl Output for PipeWriter<File> {
    const SALVAGEABLE: bool = false;
    fn finish(self, _: &FeatureSet) -> Result<(), FormatError> {
        PipeWriter::finish(self)?;
        Ok(())
    }
}

/// A `data.N` file: its features are in the directory's `data` file.
impl Output for DataStreamWriter {
    const SALVAGEABLE: bool = true;
    fn checkpoint(&mut self, _: &FeatureSet) -> io::Result<Option<u64>> {
        DataStreamWriter::checkpoint(self)
    }
    fn checkpoint_end(&self) -> Option<u64> {
        DataStreamWriter::checkpoint_end(self)
    }
    fn finish(self, _: &FeatureSet) -> Result<(), FormatError> {
        DataStreamWriter::finish(self)?;
        Ok(())
    }
    fn finish_unsynced(self, _: &FeatureSet) -> Result<Option<File>, FormatError> {
        Ok(Some(DataStreamWriter::finish_unsynced(self)?))
    }
    fn successor(&self, next: File, _: &[AttrEntry]) -> Result<Option<Self>, FormatError> {
        Ok(Some(DataStreamWriter::new(next)))
    }
}
