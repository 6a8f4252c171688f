//! One drain thread: what it owns, how the main thread stops it, and what
//! it hands back.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::event::ring::Ring;
use crate::format::{FeatureSet, FormatError};
use crate::push::scan::RecordCounts;
use crate::session::drain::{Drain, DrainReport};
use crate::session::error::Kept;
use crate::session::output::cut_back;
use crate::session::run::{self, Control, Drained, LoopOptions, Next};

/// What a drain thread hands back.
pub struct ThreadEnd {
    pub drained: Drained,
    pub report: DrainReport,
    /// What the build-id pass needs from this thread's rings.
    pub hits: Option<crate::push::scan::Hits>,
    /// After a failed write: what the thread kept of its data file.
    pub kept: Option<Kept>,
    /// Finishing its data file failed.
    pub finish_error: Option<io::Error>,
    pub cpu_seconds: f64,
}

/// What the main thread and the drain threads share.
pub struct Shared {
    pub stop: AtomicBool,
    /// Written once to wake every drain thread's poll at the stop.
    pub wake: OwnedFd,
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

pub fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: eventfd has no memory effects; the fd is checked and ours.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a new descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub fn signal(fd: &OwnedFd) {
    let one = 1u64.to_ne_bytes();
    // SAFETY: writes 8 bytes from a live buffer to our eventfd.
    unsafe { libc::write(fd.as_raw_fd(), one.as_ptr().cast(), 8) };
}

/// A drain thread's control: stop when the main thread says so.
struct ThreadControl(Arc<Shared>, usize);

impl Control for ThreadControl {
    fn stop(&mut self, drain: &dyn Drain, _: &RecordCounts) -> Next {
        // For --max-size, summed by the main thread (a count, no ordering).
        self.0.bytes[self.1].store(drain.bytes_written(), Ordering::Relaxed);
        if let Some(max) = self.0.max_streams {
            let total: u64 = self.0.bytes.iter().map(|b| b.load(Ordering::Relaxed)).sum();
            if total >= max {
                signal(&self.0.ended_fd);
            }
        }
        // Acquire pairs with the main thread's release store: the events
        // were disabled before, so the final pass sees everything.
        if self.0.stop.load(Ordering::Acquire) {
            Next::Stop
        } else {
            Next::Go
        }
    }
    fn hung_up(&mut self) {}
    fn wake_fd(&self) -> Option<RawFd> {
        Some(self.0.wake.as_raw_fd())
    }
}

fn pin(cpus: &[u32]) -> io::Result<()> {
    if cpus.is_empty() {
        return Ok(());
    }
    // SAFETY: cpu_set_t is plain data; zeroed is an empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        // SAFETY: CPU_SET writes a bit inside `set` (it checks the bound).
        unsafe { libc::CPU_SET(c as usize, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed; 0 = this thread.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// Everything a drain thread owns.
pub struct Job {
    pub drain: Box<dyn Drain + Send>,
    pub rings: Vec<(u32, Ring)>,
    pub fds: Vec<RawFd>,
    pub affinity: Vec<u32>,
    pub path: PathBuf,
    pub min_bytes: u64,
    pub min_push: u64,
    pub checkpoint: Option<Duration>,
}

impl Job {
    pub fn run(mut self, shared: Arc<Shared>, index: usize) -> ThreadEnd {
        // A CPU that went offline only costs the pinning; say nothing.
        let _ = pin(&self.affinity);
        let features = FeatureSet::default();
        let drained = run::drain_loop(
            self.drain.as_mut(),
            &mut self.rings,
            &self.fds,
            &mut ThreadControl(shared.clone(), index),
            &LoopOptions {
                min_bytes: self.min_bytes,
                min_push: self.min_push,
                checkpoint: self.checkpoint,
                features: &features,
            },
        );
        let report = self.drain.report();
        let hits = self.drain.take_hits();
        let (mut kept, mut finish_error) = (None, None);
        if drained.write_error.is_some() {
            let end = self.drain.checkpoint_end();
            kept = match self.drain.salvage(&features) {
                Ok(()) => Some(Kept::Everything(file_len(&self.path))),
                Err(_) => cut_back(&self.path, end),
            };
        } else if let Err(e) = self.drain.finish(&features) {
            finish_error = Some(match e {
                FormatError::Io(e) => e,
                other => io::Error::other(other),
            });
        }
        let cpu_seconds = thread_cpu_seconds();
        // Release: everything above happens before the main thread sees
        // the count (it then joins, which orders the rest).
        shared.ended.fetch_add(1, Ordering::Release);
        signal(&shared.ended_fd);
        ThreadEnd {
            drained,
            report,
            hits,
            kept,
            finish_error,
            cpu_seconds,
        }
    }
}

fn file_len(p: &std::path::Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}
