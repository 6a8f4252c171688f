//! What a sink does besides pushing ([`Lifecycle`]), for the serial sink
//! over any perf.data output, the async sink and the flight recorder's
//! memory.

use std::fs::File;
use std::io;

use super::aio::{AsyncSink, Backend, OffsetFile};
use super::{MemorySink, SerialSink, Sink};
use crate::format::output::{sync_in_background, Output};
use crate::format::{AttrEntry, FeatureSet, FormatError};

fn cannot_switch() -> FormatError {
    FormatError::Unsupported(
        "this output cannot be switched (a pipe or the flight recorder's memory)".into(),
    )
}

/// What a sink does besides pushing, each capability opt-in: finishing
/// the output, salvaging it after a failed write, checkpoints, switching
/// outputs, and the flight recorder's segments and snapshots. A sink
/// without one keeps the default, which says so.
pub trait Lifecycle: Sink + Sized {
    /// Whether the codec may hold pushed bytes between pushes (see
    /// `push::compressor`). The flight recorder's segments are each whole
    /// when retained (a snapshot takes them as they are), so it never holds.
    const HOLDS: bool = true;
    /// After a failed write: finalize with what was fully written, where the
    /// sink knows what that is (the serial sink: its writes; the async one:
    /// the writes that landed before the first that failed). The default
    /// says no, and the session rolls back to the checkpoint.
    fn salvage(self, features: &FeatureSet) -> Result<(), FormatError> {
        let _ = features;
        Err(FormatError::Unsupported(
            "this sink cannot be finalized after a failed write".into(),
        ))
    }
    /// Writes what follows the records (nothing, for memory).
    fn finish(self, features: &FeatureSet) -> Result<(), FormatError> {
        let _ = features;
        Ok(())
    }
    /// Makes what was written so far perf-readable (see `FileWriter::checkpoint`).
    /// Returns the bytes it used, `None` where the output cannot (a pipe).
    fn checkpoint(&mut self, features: &FeatureSet) -> io::Result<Option<u64>> {
        let _ = features;
        Ok(None)
    }
    /// The file offset where the last checkpoint block ends.
    fn checkpoint_end(&self) -> Option<u64> {
        None
    }
    /// How writes are done, for the summary.
    fn describe(&self) -> String;
    /// Flight recorder: whether the next push should end the codec's frame
    /// and close the open segment after it.
    fn segment_due(&self) -> bool {
        false
    }
    /// Flight recorder: closes the open segment (after the push that ended
    /// its frame) and drops the oldest beyond the size.
    fn close_segment(&mut self) {}
    /// Flight recorder: the retained records, oldest first.
    fn snapshot(&self) -> Option<Vec<u8>> {
        None
    }
    /// `--switch-output`: finishes the output written so far with the
    /// features `f` and goes on in `next`, a new perf.data of the attrs `a`.
    fn switch(&mut self, next: File, a: &[AttrEntry], f: &FeatureSet) -> Result<(), FormatError> {
        let _ = (next, a, f);
        Err(cannot_switch())
    }
}

impl<W: Output> Lifecycle for SerialSink<W> {
    fn salvage(self, features: &FeatureSet) -> Result<(), FormatError> {
        if !W::SALVAGEABLE {
            return Err(FormatError::Unsupported(
                "a pipe cannot be finalized".into(),
            ));
        }
        // Records are written whole or counted as not written; the file
        // position of a half-done write does not matter (finish seeks).
        // Where the features do not fit after them, the last records go
        // (back to a recent write's end) rather than everything since the
        // last checkpoint.
        let ends = self.ends.as_slice().to_vec();
        self.into_inner().finish_cutting_back(features, &ends)
    }
    fn finish(self, features: &FeatureSet) -> Result<(), FormatError> {
        self.into_inner().finish(features)
    }
    fn checkpoint(&mut self, features: &FeatureSet) -> io::Result<Option<u64>> {
        let r = self.out.checkpoint(features)?;
        let end = self.out.data_size();
        self.ends.push(end);
        Ok(r)
    }
    fn checkpoint_end(&self) -> Option<u64> {
        self.out.checkpoint_end()
    }
    fn describe(&self) -> String {
        "serial".into()
    }
    fn switch(&mut self, next: File, a: &[AttrEntry], f: &FeatureSet) -> Result<(), FormatError> {
        let new = self.out.successor(next, a)?.ok_or_else(cannot_switch)?;
        // The write ends were the old output's.
        self.ends = Default::default();
        let old = std::mem::replace(&mut self.out, new);
        sync_in_background(old.finish_unsynced(f)?);
        Ok(())
    }
}

impl<B: Backend, W: OffsetFile> Lifecycle for AsyncSink<B, W> {
    fn salvage(self, features: &FeatureSet) -> Result<(), FormatError> {
        // The writes that landed before the first that did not.
        AsyncSink::salvage(self, features)
    }
    fn finish(self, features: &FeatureSet) -> Result<(), FormatError> {
        Output::finish(self.into_inner()?, features)
    }
    fn checkpoint(&mut self, features: &FeatureSet) -> io::Result<Option<u64>> {
        AsyncSink::checkpoint(self, features)
    }
    fn checkpoint_end(&self) -> Option<u64> {
        AsyncSink::checkpoint_end(self)
    }
    fn describe(&self) -> String {
        format!("async ({})", self.backend_name())
    }
    fn switch(&mut self, next: File, a: &[AttrEntry], f: &FeatureSet) -> Result<(), FormatError> {
        let new = self
            .writer()
            .successor(next, a)?
            .ok_or_else(cannot_switch)?;
        sync_in_background(self.replace(new)?.finish_unsynced(f)?);
        Ok(())
    }
}

/// The flight recorder: nothing to finish or salvage, no file to patch.
impl Lifecycle for MemorySink {
    const HOLDS: bool = false;
    fn salvage(self, _: &FeatureSet) -> Result<(), FormatError> {
        Ok(()) // nothing was written: nothing to salvage
    }
    fn describe(&self) -> String {
        "memory (flight recorder)".into()
    }
    fn segment_due(&self) -> bool {
        MemorySink::segment_due(self)
    }
    fn close_segment(&mut self) {
        MemorySink::close_segment(self)
    }
    fn snapshot(&self) -> Option<Vec<u8>> {
        Some(MemorySink::snapshot(self))
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;

    use super::{Lifecycle, SerialSink};
    use crate::format::output::Output;
    use crate::format::writer::RecordSink;
    use crate::format::{AttrEntry, FeatureSet, FormatError};

    /// An output that refuses to be finished with a sync: a switch runs on
    /// the drain thread, which must not wait for the disk.
    struct NoSyncHere;

    impl RecordSink for NoSyncHere {
        fn write_records(&mut self, _: &[u8]) -> std::io::Result<()> {
            Ok(())
        }
        fn data_size(&self) -> u64 {
            0
        }
        fn forget(&mut self, _: u64) {}
    }

    impl Output for NoSyncHere {
        const SALVAGEABLE: bool = true;
        fn finish(self, _: &FeatureSet) -> Result<(), FormatError> {
            panic!("a switch synced the finished output on the drain thread")
        }
        fn finish_unsynced(self, _: &FeatureSet) -> Result<Option<File>, FormatError> {
            Ok(Some(tempfile::tempfile()?))
        }
        fn successor(&self, _: File, _: &[AttrEntry]) -> Result<Option<Self>, FormatError> {
            Ok(Some(NoSyncHere))
        }
    }

    #[test]
    fn a_switch_finishes_the_output_without_syncing_it_on_the_drain() {
        let mut s = SerialSink::new(NoSyncHere);
        // The old sink called `finish` here, which syncs (and panics above).
        s.switch(tempfile::tempfile().unwrap(), &[], &FeatureSet::default())
            .unwrap();
    }
}
