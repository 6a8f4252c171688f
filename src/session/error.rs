//! What can go wrong in a recording, one variant per kind of failure. A
//! failed write ([`RecordError::WriteFailed`]) says what the output kept
//! ([`Kept`]: every record written before it, or the file up to its last
//! checkpoint).

use std::io;

use crate::event::open::OpenError;
use crate::format::writer::Salvage;
use crate::format::FormatError;

/// What a failed recording kept (file size in bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    /// Every record written before the failure, finalized.
    Everything(u64),
    /// The file cut back to its last checkpoint.
    Checkpoint(u64),
    /// Finalized after leaving out what did not fit: the last records, or
    /// the features a reader can do without.
    Partly(u64, Salvage),
}

impl Kept {
    /// What a salvage that succeeded kept of a file now `size` bytes.
    pub fn salvaged(size: u64, s: Salvage) -> Kept {
        if s.whole() {
            Kept::Everything(size)
        } else {
            Kept::Partly(size, s)
        }
    }

    /// The same, said of a size of `size` bytes (a directory's).
    pub fn with_size(self, size: u64) -> Kept {
        match self {
            Kept::Everything(_) => Kept::Everything(size),
            Kept::Checkpoint(_) => Kept::Checkpoint(size),
            Kept::Partly(_, s) => Kept::Partly(size, s),
        }
    }
}

/// What a failed recording's message says it kept.
fn said(kept: &Option<Kept>) -> String {
    match kept {
        Some(Kept::Everything(n)) => format!("the file was finalized with every record written before the failure ({n} bytes) and opens in perf report"),
        Some(Kept::Checkpoint(n)) => format!("kept the recording up to the last checkpoint ({n} bytes), which perf report opens"),
        Some(Kept::Partly(n, s)) => {
            let records = match s.dropped {
                0 => "every record written before the failure".to_string(),
                d => format!("the records written before the failure but the last {d} bytes of them"),
            };
            let features = if s.features_cut {
                ", without the features that did not fit after them (only what reading them needs)"
            } else {
                ", to make room for its features"
            };
            format!("the file was finalized with {records}{features} ({n} bytes) and opens in perf report")
        }
        None => "nothing could be kept (a file without a recording in it is removed)".to_string(),
    }
}

/// Why a recording failed.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The events could not be opened, filtered or mapped (see [`OpenError`]).
    #[error(transparent)]
    Open(#[from] OpenError),
    /// A perf.data format or I/O error (see [`FormatError`]).
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The codec could not be set up or failed.
    #[error(transparent)]
    Codec(#[from] perfz_codecs::Error),
    /// The options contradict each other or name something that is not there.
    #[error("{0}")]
    Usage(String),
    /// The output cannot be created where asked.
    #[error("{0}")]
    Output(io::Error),
    /// The workload (or timing command) could not be started.
    #[error("cannot run {cmd}: {err}")]
    Start {
        /// `argv[0]` of the workload or timing command.
        cmd: String,
        /// Why it could not be started.
        err: io::Error,
    },
    /// A system call outside the output failed (reading /proc, enabling
    /// events, waiting for the workload, starting the writer thread).
    #[error("{what}: {err}")]
    Io {
        /// What failed, for the message ("cannot enable the events").
        what: String,
        /// The call's error.
        err: io::Error,
    },
    /// Writing the output failed mid-recording; `kept` says what is left.
    #[error("writing {path} failed: {err}; {}", said(.kept))]
    WriteFailed {
        /// The output being written.
        path: String,
        /// The write's error.
        err: io::Error,
        /// What is left of the output; `None` where nothing could be kept.
        kept: Option<Kept>,
    },
}

pub(super) fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> RecordError {
    let what = what.into();
    move |err| RecordError::Io { what, err }
}

/// A format error where an I/O error is wanted (the I/O error itself, when
/// that is what it was).
pub fn format_io(e: FormatError) -> io::Error {
    match e {
        FormatError::Io(e) => e,
        other => io::Error::other(other),
    }
}

/// A write error with what was being written.
pub fn io_err_context(e: std::io::Error, what: &str) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{what}: {e}"))
}
