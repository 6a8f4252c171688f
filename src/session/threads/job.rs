//! One drain thread: what it owns, how the main thread stops it, and what
//! it hands back.

use std::io;
use std::os::fd::{OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use std::time::Duration;

use super::line::line;
use crate::event::cpus;
use crate::event::ring::Ring;
use crate::format::FeatureSet;
use crate::push::unit::Unit;
use crate::push::{HandedBack, Output};
use crate::session::cpu_wait;
use crate::session::error::RecordError;
use crate::session::layout::DrainGroup;
use crate::session::mailbox::{signal, Mailbox, Reply, Request};
use crate::session::run::{self, Drained, LoopOptions, Next, Supervisor};
use crate::session::summary::ThreadSummary;
use crate::session::unit::{answer, Units};
use crate::transform::scan::RecordCounts;

/// What the main thread and the drain threads share.
pub struct Shared {
    pub stop: AtomicBool,
    /// One per drain thread: its wake-up fd and the request waiting for it.
    pub mailboxes: Vec<Mailbox>,
    /// Drain threads that have ended, and an eventfd the main thread waits
    /// on for them.
    pub ended: AtomicUsize,
    pub ended_fd: OwnedFd,
    /// Bytes each thread has written to its data.N (`--max-size`).
    pub bytes: Vec<AtomicU64>,
    /// `--max-size` less what `data` holds: the thread whose pass crosses
    /// it wakes the main thread at once (not at its next 100 ms check), so
    /// the files pass the limit by at most about one ring per thread.
    pub max_streams: Option<u64>,
}

/// The drain threads as the main thread sees them: what they share, and
/// the channel their answers come back on (only they hold its senders).
pub struct Pool {
    pub shared: Arc<Shared>,
    pub replies: Receiver<Reply>,
}

impl Pool {
    pub fn threads(&self) -> usize {
        self.shared.mailboxes.len()
    }

    /// Posts one request per thread and collects the answers of the
    /// threads that took theirs (a thread that has ended takes none).
    pub fn ask(&self, requests: Vec<Request>) -> Result<Vec<Reply>, RecordError> {
        let mut posted = 0;
        for (m, r) in self.shared.mailboxes.iter().zip(requests) {
            posted += m.post(r) as usize;
        }
        (0..posted)
            .map(|_| {
                self.replies.recv().map_err(|_| RecordError::Io {
                    what: "a drain thread".into(),
                    err: io::Error::other("it ended without answering"),
                })
            })
            .filter(|r| !matches!(r, Ok(Reply::Gone)))
            .collect()
    }
}

/// The drain threads as the destination reaches them: through their
/// mailboxes, between two of their loops.
impl Units for Pool {
    fn count(&self) -> usize {
        self.threads()
    }

    fn hand_over(&mut self, next: Vec<Output>) -> Result<Vec<Option<HandedBack>>, RecordError> {
        let mut handed: Vec<Option<HandedBack>> = (0..self.threads()).map(|_| None).collect();
        for r in self.ask(next.into_iter().map(Request::HandOver).collect())? {
            if let Reply::Handed(i, h) = r {
                handed[i] = Some(h);
            }
        }
        Ok(handed)
    }

    fn snapshot(&mut self) -> Result<Vec<Option<io::Result<HandedBack>>>, RecordError> {
        let mut copies: Vec<Option<_>> = (0..self.threads()).map(|_| None).collect();
        for r in self.ask((0..self.threads()).map(|_| Request::Snapshot).collect())? {
            if let Reply::Snapshot(i, copy) = r {
                copies[i] = Some(copy);
            }
        }
        Ok(copies)
    }

    fn write_side_band(&mut self, _: &[u8]) -> io::Result<()> {
        // A directory's side band is in its `data`.
        Ok(())
    }
}

/// A drain thread's control: stop when the main thread says so.
struct ThreadSupervisor(Arc<Shared>, usize);

impl Supervisor for ThreadSupervisor {
    fn stop(&mut self, unit: &dyn Unit, _: &RecordCounts) -> Next {
        // For --max-size, summed by the main thread (a count, no ordering).
        self.0.bytes[self.1].store(unit.bytes_written(), Ordering::Relaxed);
        if let Some(max) = self.0.max_streams {
            let total: u64 = self.0.bytes.iter().map(|b| b.load(Ordering::Relaxed)).sum();
            if total >= max {
                signal(&self.0.ended_fd);
            }
        }
        // Acquire pairs with the main thread's release store: the events
        // were disabled before, so the final pass sees everything.
        if self.0.stop.load(Ordering::Acquire) {
            return Next::Stop;
        }
        let mailbox = &self.0.mailboxes[self.1];
        mailbox.clear();
        if mailbox.pending() {
            Next::Switch
        } else {
            Next::Go
        }
    }
    fn hung_up(&mut self) {}
    fn wake_fd(&self) -> Option<RawFd> {
        Some(self.0.mailboxes[self.1].wake_fd())
    }
}

/// Everything a drain thread owns.
pub struct Job {
    pub unit: Box<dyn Unit + Send>,
    pub rings: Vec<(u32, Ring)>,
    pub fds: Vec<RawFd>,
    /// Its rings and the CPUs it runs on.
    pub group: DrainGroup,
    /// The CPUs whose rings it drains (none for per-thread rings).
    pub cpus: Vec<u32>,
    pub path: PathBuf,
    pub min_bytes: u64,
    pub min_push: u64,
    pub checkpoint: Option<Duration>,
}

impl Job {
    /// Runs the thread to its end: its line of the summary, how its loops
    /// went (added up) and its output handed back.
    pub fn run(
        mut self,
        shared: Arc<Shared>,
        index: usize,
        replies: Sender<Reply>,
    ) -> (ThreadSummary, Drained, HandedBack) {
        // A CPU that went offline only costs the pinning; say nothing.
        let _ = cpus::pin_this_thread(&self.group.affinity);
        let features = FeatureSet::default();
        let mailbox = &shared.mailboxes[index];
        let mut drained = self.drain_all(&shared, index, &replies, &features);
        let handed = self.unit.end(drained.write_error.take());
        if mailbox.close().is_some() {
            let _ = replies.send(Reply::Gone);
        }
        let Job {
            group, cpus, path, ..
        } = self;
        let file = (path.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let cpu_seconds = cpu_wait::thread_cpu_seconds();
        let line = line(file, cpus, group, &drained, &handed, cpu_seconds);
        // Release: everything above happens before the main thread sees
        // the count (it then joins, which orders the rest).
        shared.ended.fetch_add(1, Ordering::Release);
        signal(&shared.ended_fd);
        (line, drained, handed)
    }
}

impl Job {
    /// Drains until the end or a write error, answering the main thread's
    /// requests (switch, snapshot) between loops.
    fn drain_all(
        &mut self,
        shared: &Arc<Shared>,
        index: usize,
        replies: &Sender<Reply>,
        features: &FeatureSet,
    ) -> Drained {
        let mailbox = &shared.mailboxes[index];
        let on_request = |unit: &mut dyn Unit, _: &mut Drained| {
            let Some(r) = mailbox.take() else {
                return true;
            };
            let reply = answer(unit, r, index);
            // A write that failed ends the thread (its output is handed back).
            let failed = reply.failed();
            let _ = replies.send(reply);
            !failed
        };
        let o = LoopOptions {
            min_bytes: self.min_bytes,
            min_push: self.min_push,
            checkpoint: self.checkpoint,
            features,
        };
        let mut supervisor = ThreadSupervisor(shared.clone(), index);
        run::drain_all(
            &mut *self.unit,
            &mut self.rings,
            &self.fds,
            &mut supervisor,
            &o,
            on_request,
        )
    }
}
