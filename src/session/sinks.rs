//! What the session needs of a sink beyond pushing: checkpoints, finishing
//! the file, and salvaging it after a failed write. Implemented for the serial
//! sink over a file or a pipe, and for the async sink.

use std::fs::File;
use std::io;

use crate::format::data_stream::DataStreamWriter;
use crate::format::writer::{Checkpoint, FileWriter, PipeWriter, RecordSink};
use crate::format::{AttrEntry, FeatureSet, FormatError};
use crate::push::{AsyncSink, Backend, MemorySink, OffsetFile, SerialSink, Sink};

/// A sink the session can finish: everything written, features, header.
pub trait SessionSink: Sink + Sized {
    /// After a failed write: finalize with what was fully written. Only a
    /// sink that knows exactly what that is (the serial one) can; an async
    /// one cannot tell which buffers landed and says no (the session then
    /// rolls back to the checkpoint).
    fn salvage(self, features: &FeatureSet) -> Result<(), FormatError>;
    fn finish(self, features: &FeatureSet) -> Result<(), FormatError>;
    /// Makes what was written so far perf-readable (see `FileWriter::checkpoint`).
    /// Returns the bytes it used, `None` where the output cannot (a pipe).
    fn checkpoint(&mut self, features: &FeatureSet) -> io::Result<Option<u64>>;
    /// The file offset where the last checkpoint block ends.
    fn checkpoint_end(&self) -> Option<u64>;
    /// How writes are done, for the summary.
    fn describe(&self) -> String;
    /// Flight recorder: whether the next push should end the codec's frame
    /// and close the open segment after it.
    fn segment_due(&self) -> bool {
        false
    }
    fn close_segment(&mut self) {}
    /// Flight recorder: the retained records, oldest first.
    fn snapshot(&self) -> Option<Vec<u8>> {
        None
    }
    /// `--switch-output`: finishes the output written so far with
    /// `features` and goes on in `next`, a new perf.data of `attrs`.
    fn switch(&mut self, next: File, a: &[AttrEntry], f: &FeatureSet) -> Result<(), FormatError>;
}

/// What the output writer must do at the end, beyond the records.
pub trait Finish: RecordSink + Checkpoint + Sized {
    fn finish(self, features: &FeatureSet) -> Result<(), FormatError>;
    /// A writer of the same kind over `next` (`--switch-output`), or None
    /// where outputs cannot be switched (a pipe, a `data.N`).
    fn successor(&self, next: File, attrs: &[AttrEntry]) -> Result<Option<Self>, FormatError> {
        let _ = (next, attrs);
        Ok(None)
    }
    /// A pipe cannot be finalized after a failed write.
    const SALVAGEABLE: bool;
}

impl Finish for FileWriter<File> {
    const SALVAGEABLE: bool = true;
    fn finish(self, features: &FeatureSet) -> Result<(), FormatError> {
        let f = FileWriter::finish(self, features)?;
        f.sync_all()?;
        Ok(())
    }
    fn successor(&self, next: File, attrs: &[AttrEntry]) -> Result<Option<Self>, FormatError> {
        FileWriter::new(next, attrs).map(Some)
    }
}

fn cannot_switch() -> FormatError {
    FormatError::Unsupported(
        "this output cannot be switched (a pipe or the flight recorder's memory)".into(),
    )
}

impl Finish for PipeWriter<File> {
    const SALVAGEABLE: bool = false;
    fn finish(self, _: &FeatureSet) -> Result<(), FormatError> {
        PipeWriter::finish(self)?;
        Ok(())
    }
}

/// A `data.N` file: its features are in the directory's `data` file.
impl Finish for DataStreamWriter {
    const SALVAGEABLE: bool = true;
    fn finish(self, _: &FeatureSet) -> Result<(), FormatError> {
        DataStreamWriter::finish(self)?;
        Ok(())
    }
    fn successor(&self, next: File, _: &[AttrEntry]) -> Result<Option<Self>, FormatError> {
        Ok(Some(DataStreamWriter::new(next)))
    }
}

impl<W: Finish> SessionSink for SerialSink<W> {
    fn salvage(self, features: &FeatureSet) -> Result<(), FormatError> {
        if !W::SALVAGEABLE {
            return Err(FormatError::Unsupported(
                "a pipe cannot be finalized".into(),
            ));
        }
        // Records are written whole or counted as not written; the file
        // position of a half-done write does not matter (finish seeks).
        self.finish(features)
    }
    fn finish(self, features: &FeatureSet) -> Result<(), FormatError> {
        self.into_inner().finish(features)
    }
    fn checkpoint(&mut self, features: &FeatureSet) -> io::Result<Option<u64>> {
        self.out.checkpoint(features)
    }
    fn checkpoint_end(&self) -> Option<u64> {
        self.out.checkpoint_end()
    }
    fn describe(&self) -> String {
        "serial".into()
    }
    fn switch(&mut self, next: File, a: &[AttrEntry], f: &FeatureSet) -> Result<(), FormatError> {
        let new = self.out.successor(next, a)?.ok_or_else(cannot_switch)?;
        std::mem::replace(&mut self.out, new).finish(f)
    }
}

impl<B: Backend, W: OffsetFile + Finish> SessionSink for AsyncSink<B, W> {
    fn salvage(self, _: &FeatureSet) -> Result<(), FormatError> {
        Err(FormatError::Unsupported(
            "an async sink cannot tell which writes landed".into(),
        ))
    }
    fn finish(self, features: &FeatureSet) -> Result<(), FormatError> {
        Finish::finish(self.into_inner()?, features)
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
        Finish::finish(self.replace(new)?, f)
    }
}

/// The flight recorder: nothing to finish or salvage, no file to patch.
impl SessionSink for MemorySink {
    fn salvage(self, _: &FeatureSet) -> Result<(), FormatError> {
        Ok(())
    }
    fn finish(self, _: &FeatureSet) -> Result<(), FormatError> {
        Ok(())
    }
    fn checkpoint(&mut self, _: &FeatureSet) -> io::Result<Option<u64>> {
        Ok(None)
    }
    fn checkpoint_end(&self) -> Option<u64> {
        None
    }
    fn describe(&self) -> String {
        "memory (flight recorder)".into()
    }
    fn switch(&mut self, _: File, _: &[AttrEntry], _: &FeatureSet) -> Result<(), FormatError> {
        Err(cannot_switch())
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
