//! Where a conversion writes: a perf.data file, a pipe-mode file, or
//! standard output.

use std::fs::File;
use std::io::{BufWriter, Write};

use super::ConvertError;
use crate::format::writer::{FileWriter, PipeWriter};
use crate::format::FeatureSet;

/// The output, created when the first data record arrives (in pipe mode the
/// attrs and features arrive as records first).
pub enum Out {
    File(FileWriter<BufWriter<File>>),
    Pipe(PipeWriter<BufWriter<File>>),
    Stdout(PipeWriter<BufWriter<std::io::Stdout>>),
}

impl Out {
    pub fn write_records(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Out::File(w) => w.write_records(bytes),
            Out::Pipe(w) => w.write_records(bytes),
            Out::Stdout(w) => w.write_records(bytes),
        }
    }

    pub fn data_size(&self) -> u64 {
        match self {
            Out::File(w) => w.data_size(),
            Out::Pipe(w) => w.data_size(),
            Out::Stdout(w) => w.data_size(),
        }
    }

    /// Finishes the output: features and header (a file, synced), or a
    /// flush (a pipe).
    pub fn finish(self, features: &FeatureSet) -> Result<(), ConvertError> {
        match self {
            Out::File(w) => {
                let mut f = w.finish(features)?;
                f.flush()?;
                f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
            }
            Out::Pipe(w) => {
                w.finish()?;
            }
            Out::Stdout(w) => {
                w.finish()?;
            }
        }
        Ok(())
    }
}
