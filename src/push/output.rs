//! Where a drain unit's records end up, and that place's life: a perf.data
//! file, a pipe, one `data.N` stream of a `--threads` directory, or the
//! flight recorder's memory ([`Segments`]). One type: what each kind does at
//! a checkpoint, a finish or a salvage ([`Output::finish_cutting_back`]) is
//! a match arm here, not a default body of a trait that says "not this
//! kind". The session makes each output and finishes it once it is handed
//! back ([`HandedBack`](super::HandedBack)); push/ only writes.
//!
//! An output handed back at a switch is finished without waiting for the disk
//! ([`Output::finish_unsynced`]) and synced on a thread of its own
//! ([`sync_in_background`]): an fsync on the drain under write-back load
//! took long enough for the rings to overflow (docs/BENCHMARKS.md,
//! "`--switch-output` under write-back load").

use std::fs::File;
use std::io;

use super::segments::Segments;
use crate::format::data_stream::DataStreamWriter;
use crate::format::writer::{FileWriter, PipeWriter, Salvage};
use crate::format::{FeatureSet, FormatError};

/// A drain unit's output.
pub enum Output {
    /// A file-mode perf.data: header patched at checkpoints and the end.
    File(FileWriter<File>),
    /// A pipe-mode stream: read as it comes, nothing patched or taken back.
    Pipe(PipeWriter<File>),
    /// One `data.N` of a `--threads` directory (its features are in `data`).
    Stream(DataStreamWriter),
    /// `--flight-recorder`: the newest records, in memory segments.
    Memory(Segments),
    /// Handed back at the end: nothing is written any more.
    Closed,
}

impl From<FileWriter<File>> for Output {
    fn from(w: FileWriter<File>) -> Self {
        Output::File(w)
    }
}

impl From<PipeWriter<File>> for Output {
    fn from(w: PipeWriter<File>) -> Self {
        Output::Pipe(w)
    }
}

impl From<DataStreamWriter> for Output {
    fn from(w: DataStreamWriter) -> Self {
        Output::Stream(w)
    }
}

impl From<Segments> for Output {
    fn from(m: Segments) -> Self {
        Output::Memory(m)
    }
}

/// A write after the unit handed its output back for the last time.
fn closed() -> io::Error {
    io::Error::other("the output was handed back: nothing is written after the end")
}

impl Output {
    /// Appends bytes that are whole records.
    pub fn write_records(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Output::File(w) => w.write_records(bytes),
            Output::Pipe(w) => w.write_records(bytes),
            Output::Stream(w) => w.write_records(bytes),
            Output::Memory(m) => {
                m.append(bytes);
                Ok(())
            }
            Output::Closed => Err(closed()),
        }
    }

    /// Appends the concatenation of `parts` (one `writev` into a file).
    pub fn write_records_vectored(&mut self, parts: &[&[u8]]) -> io::Result<()> {
        match self {
            Output::File(w) => w.write_records_vectored(parts),
            Output::Pipe(w) => w.write_records_vectored(parts),
            Output::Stream(w) => w.write_records_vectored(parts),
            Output::Memory(m) => {
                parts.iter().for_each(|p| m.append(p));
                Ok(())
            }
            Output::Closed => Err(closed()),
        }
    }

    /// Whether writing copies the bytes (into memory) rather than handing
    /// them to the kernel: for the copy meter.
    pub fn copies(&self) -> bool {
        matches!(self, Output::Memory(_))
    }

    /// Bytes of records written so far.
    pub fn data_size(&self) -> u64 {
        match self {
            Output::File(w) => w.data_size(),
            Output::Pipe(w) => w.data_size(),
            Output::Stream(w) => w.data_size(),
            Output::Memory(m) => m.written(),
            Output::Closed => 0,
        }
    }

    /// Takes back the last `n` bytes counted: a region written in several
    /// calls failed part way. (Memory never fails a write.)
    pub fn forget(&mut self, n: u64) {
        match self {
            Output::File(w) => w.forget(n),
            Output::Pipe(w) => w.forget(n),
            Output::Stream(w) => w.forget(n),
            Output::Memory(_) | Output::Closed => {}
        }
    }

    /// Makes the output readable as it is now; returns the bytes it used,
    /// `None` where it cannot (a pipe, memory, or features too large).
    pub fn checkpoint(&mut self, features: &FeatureSet) -> io::Result<Option<u64>> {
        match self {
            Output::File(w) => w.checkpoint(features),
            Output::Stream(w) => w.checkpoint(),
            Output::Pipe(_) | Output::Memory(_) | Output::Closed => Ok(None),
        }
    }

    /// Where the last checkpoint left the output: a crash falls back to it.
    pub fn checkpoint_end(&self) -> Option<u64> {
        match self {
            Output::File(w) => w.checkpoint_end(),
            Output::Stream(w) => w.checkpoint_end(),
            Output::Pipe(_) | Output::Memory(_) | Output::Closed => None,
        }
    }

    /// Writes what follows the records (features, header) and syncs.
    pub fn finish(self, features: &FeatureSet) -> Result<(), FormatError> {
        match self {
            Output::File(w) => w.finish(features)?.sync_all()?,
            Output::Pipe(w) => drop(w.finish()?),
            Output::Stream(w) => drop(w.finish()?),
            Output::Memory(_) | Output::Closed => {}
        }
        Ok(())
    }

    /// [`finish`](Self::finish) without waiting for the disk: what
    /// `--switch-output` does on the drain thread, where an fsync under
    /// write-back load took 0.2–0.4 s and the rings overflowed meanwhile.
    /// Returns the file for `sync_in_background` where it needs a sync,
    /// and what was left out: every write has landed (a lent output), but
    /// on a full disk only the features reading needs may fit
    /// ([`FileWriter::finish_cutting_back`]).
    pub fn finish_unsynced(
        self,
        features: &FeatureSet,
    ) -> Result<(Option<File>, Salvage), FormatError> {
        Ok(match self {
            Output::File(w) => {
                let (file, salvage) = w.finish_cutting_back(features, &[])?;
                (Some(file), salvage)
            }
            Output::Stream(w) => (Some(w.finish_unsynced()?), Salvage::default()),
            other => (other.finish(features).map(|()| None)?, Salvage::default()),
        })
    }

    /// [`finish`](Self::finish) where a write failed or may fail for want
    /// of room: where what follows the records does not fit, the records
    /// are cut back to one of `ends` (data sizes at record boundaries) where
    /// it does, or only the features needed to read them are written
    /// ([`FileWriter::finish_cutting_back`]); returns what was left out. A
    /// pipe cannot be finished after a failure (`after_failure`); memory
    /// has nothing to finish.
    pub fn finish_cutting_back(
        self,
        f: &FeatureSet,
        ends: &[u64],
        after_failure: bool,
    ) -> Result<Salvage, FormatError> {
        match self {
            Output::File(w) => {
                let (file, salvage) = w.finish_cutting_back(f, ends)?;
                file.sync_all()?;
                return Ok(salvage);
            }
            Output::Pipe(_) if after_failure => {
                return Err(FormatError::Unsupported(
                    "a pipe cannot be finalized".into(),
                ))
            }
            other => other.finish(f)?,
        }
        Ok(Salvage::default())
    }

    /// The file written at offsets by the async sink (a file or a stream).
    pub fn file(&self) -> Option<&File> {
        match self {
            Output::File(w) => Some(w.get_ref()),
            Output::Stream(w) => Some(w.get_ref()),
            Output::Pipe(_) | Output::Memory(_) | Output::Closed => None,
        }
    }

    /// Where the next data byte goes in [`file`](Self::file).
    pub fn next_offset(&self) -> u64 {
        match self {
            Output::File(w) => w.data_end(),
            Output::Stream(w) => w.data_end(),
            other => other.data_size(),
        }
    }

    /// Counts `n` bytes written at offsets by the async sink.
    pub fn account(&mut self, n: u64) {
        match self {
            Output::File(w) => w.account(n),
            Output::Stream(w) => w.account(n),
            Output::Pipe(_) | Output::Memory(_) | Output::Closed => {}
        }
    }

    /// The flight recorder's memory, where this is it.
    pub fn segments(&self) -> Option<&Segments> {
        match self {
            Output::Memory(m) => Some(m),
            _ => None,
        }
    }

    /// The flight recorder's memory, to close a segment.
    pub fn segments_mut(&mut self) -> Option<&mut Segments> {
        match self {
            Output::Memory(m) => Some(m),
            _ => None,
        }
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
