//! The async sink's backend: io_uring or a writer thread doing `pwrite`,
//! chosen once at the start ([`Backend`], an enum, not a trait), and what
//! it hands back when a write is done ([`Done`]).

use std::fs::File;
use std::io;

use super::{ThreadBackend, UringBackend};

/// A write the backend is done with: its buffer back, where it was written
/// and whether all of it landed.
pub struct Done {
    /// The buffer submitted, now free to fill again.
    pub buf: Box<[u8]>,
    /// File offset the write was submitted at.
    pub offset: u64,
    /// Bytes the write was submitted for (all of them landed where
    /// `result` is `Ok`).
    pub len: usize,
    /// `Ok` when every byte submitted landed; the write's error otherwise.
    pub result: io::Result<()>,
}

/// Writes whole buffers at file offsets, asynchronously: io_uring, or a
/// writer thread doing `pwrite`, chosen once at the start.
pub enum Backend {
    /// io_uring (boxed: its ring state is ten times the thread's).
    Uring(Box<UringBackend>),
    /// A writer thread doing `pwrite`.
    Thread(ThreadBackend),
    /// A log of submissions, for the tests.
    #[cfg(test)]
    Log(super::tests::Log),
}

impl From<UringBackend> for Backend {
    fn from(b: UringBackend) -> Self {
        Backend::Uring(Box::new(b))
    }
}

impl From<ThreadBackend> for Backend {
    fn from(b: ThreadBackend) -> Self {
        Backend::Thread(b)
    }
}

/// One call, whichever backend.
macro_rules! each {
    ($b:expr, $x:ident => $e:expr) => {
        match $b {
            Backend::Uring($x) => $e,
            Backend::Thread($x) => $e,
            #[cfg(test)]
            Backend::Log($x) => $e,
        }
    };
}

impl Backend {
    /// Queues `buf[..len]` for writing at `offset`; the backend owns the buffer
    /// until it hands it back (also when this fails: as a failed `Done`).
    pub fn submit(&mut self, buf: Box<[u8]>, len: usize, offset: u64) -> io::Result<()> {
        each!(self, b => b.submit(buf, len, offset))
    }
    /// A write that is done, landed or failed; with `wait`, blocks until one
    /// is. An error here is the backend's own (its ring or thread is gone).
    pub fn reclaim(&mut self, wait: bool) -> io::Result<Option<Done>> {
        each!(self, b => b.reclaim(wait))
    }
    /// Waits for every write in flight and gives them back.
    pub fn drain(&mut self, done: &mut Vec<Done>) -> io::Result<()> {
        each!(self, b => b.drain(done))
    }
    /// A short name for messages.
    pub fn name(&self) -> &'static str {
        each!(self, b => b.name())
    }
    /// Writes go to `file` from now on (nothing may be in flight).
    pub fn retarget(&mut self, file: &File) -> io::Result<()> {
        each!(self, b => b.retarget(file))
    }
}
