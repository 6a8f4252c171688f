//! One drain thread: what it owns, how the main thread stops it, and what
//! it hands back.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::event::ring::Ring;
use crate::format::FeatureSet;
use crate::push::drain::{Drain, DrainReport};
use crate::push::scan::{Hits, RecordCounts};
use crate::session::destination::cut_back;
use crate::session::error::{format_io, Kept, RecordError};
use crate::session::run::{self, Control, Drained, LoopOptions, Next};

/// What a drain thread hands back.
pub struct ThreadEnd {
    pub drained: Drained,
    pub report: DrainReport,
    /// What the build-id pass needs from this thread's rings.
    pub hits: Option<Hits>,
    /// Flight recorder: the records it retained at the end.
    pub retained: Option<Vec<u8>>,
    /// After a failed write: what the thread kept of its data file.
    pub kept: Option<Kept>,
    /// Finishing its data file failed.
    pub finish_error: Option<io::Error>,
    pub cpu_seconds: f64,
}

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

/// Resets an eventfd that was signalled (non-blocking: nothing waits).
pub fn clear(fd: &OwnedFd) {
    let mut v = [0u8; 8];
    // SAFETY: reads at most 8 bytes into a live buffer from our eventfd.
    unsafe { libc::read(fd.as_raw_fd(), v.as_mut_ptr().cast(), 8) };
}

/// What the main thread asks of a drain thread between its passes.
pub enum Request {
    /// `--switch-output`: put everything waiting into the current data.N,
    /// finish it, and go on in this file (a new codec stream).
    Switch(std::fs::File),
    /// `--flight-recorder`: drain everything waiting and hand over the
    /// retained records.
    Snapshot,
}

/// A drain thread's answer to a [`Request`].
pub struct Reply {
    pub index: usize,
    /// What the build-id pass needs, gathered since the last request.
    pub hits: Option<Hits>,
    pub report: DrainReport,
    /// A snapshot's records, oldest first (empty for a switch).
    pub records: Vec<u8>,
    /// The switch failed (the thread stops writing).
    pub error: Option<io::Error>,
    /// The thread had ended before it saw the request.
    pub gone: bool,
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
            .filter(|r| !matches!(r, Ok(r) if r.gone))
            .collect()
    }
}

/// A drain thread's wake-up fd and the request waiting for it.
pub struct Mailbox {
    fd: OwnedFd,
    /// The waiting request, and whether the thread has ended (it then
    /// takes none: the main thread must not wait for its reply).
    state: Mutex<(Option<Request>, bool)>,
}

impl Mailbox {
    pub fn new() -> io::Result<Mailbox> {
        Ok(Mailbox {
            fd: eventfd()?,
            state: Mutex::new((None, false)),
        })
    }

    /// Leaves `r` for the thread and wakes it; false if it has ended.
    pub fn post(&self, r: Request) -> bool {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.1 {
            return false;
        }
        st.0 = Some(r);
        signal(&self.fd);
        true
    }

    /// Wakes the thread (at the stop).
    pub fn wake(&self) {
        signal(&self.fd);
    }

    fn pending(&self) -> bool {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .is_some()
    }

    fn take(&self) -> Option<Request> {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .take()
    }

    /// The thread ends: no request after this; one that came meanwhile
    /// is returned, to be answered as gone.
    fn close(&self) -> Option<Request> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.1 = true;
        st.0.take()
    }
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
            return Next::Stop;
        }
        let mailbox = &self.0.mailboxes[self.1];
        clear(&mailbox.fd);
        if mailbox.pending() {
            Next::Switch
        } else {
            Next::Go
        }
    }
    fn hung_up(&mut self) {}
    fn wake_fd(&self) -> Option<RawFd> {
        Some(self.0.mailboxes[self.1].fd.as_raw_fd())
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
    pub fn run(mut self, shared: Arc<Shared>, index: usize, replies: Sender<Reply>) -> ThreadEnd {
        // A CPU that went offline only costs the pinning; say nothing.
        let _ = pin(&self.affinity);
        let features = FeatureSet::default();
        let mailbox = &shared.mailboxes[index];
        let mut drained = self.drain_all(&shared, index, &replies, &features);
        // What the codec holds goes out before the report is taken: the
        // directory's HEADER_COMPRESSED (mmap_len, sizes) is made from it and
        // must count the last record.
        if drained.write_error.is_none() {
            if let Err(e) = self.drain.flush() {
                drained.write_error = Some(e);
            }
        }
        debug_assert!(
            drained.write_error.is_some() || !self.drain.holds(),
            "a report taken with bytes held misses the last record"
        );
        let report = self.drain.report();
        let hits = self.drain.take_hits();
        // The flight recorder's last snapshot is written from these.
        let retained = self.drain.snapshot();
        let (mut kept, mut finish_error) = (None, None);
        if drained.write_error.is_some() {
            let end = self.drain.checkpoint_end();
            kept = match self.drain.salvage(&features) {
                Ok(()) => Some(Kept::Everything(file_len(&self.path))),
                Err(_) => cut_back(&self.path, end),
            };
        } else if let Err(e) = self.drain.finish(&features) {
            finish_error = Some(format_io(e));
        }
        if mailbox.close().is_some() {
            let _ = replies.send(Reply {
                index,
                hits: None,
                report: report.clone(),
                records: Vec::new(),
                error: None,
                gone: true,
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
            retained,
            kept,
            finish_error,
            cpu_seconds,
        }
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
        let on_request = |drain: &mut (dyn Drain + Send), _: &mut Drained| {
            let Some(r) = mailbox.take() else {
                return true;
            };
            let reply = answer(drain, r, index);
            let failed = reply.error.is_some();
            let _ = replies.send(reply);
            !failed
        };
        let o = LoopOptions {
            min_bytes: self.min_bytes,
            min_push: self.min_push,
            checkpoint: self.checkpoint,
            features,
        };
        let mut ctl = ThreadControl(shared.clone(), index);
        run::drain_all(
            self.drain.as_mut(),
            &mut self.rings,
            &self.fds,
            &mut ctl,
            &o,
            on_request,
        )
    }
}

fn file_len(p: &std::path::Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}

/// Acts on a request after a pass that drained everything waiting.
fn answer(drain: &mut (dyn Drain + Send), r: Request, index: usize) -> Reply {
    let hits = drain.take_hits();
    let (records, error) = match r {
        Request::Snapshot => (drain.snapshot().unwrap_or_default(), None),
        Request::Switch(next) => {
            let e = drain.switch_output(next, &[], &FeatureSet::default());
            (Vec::new(), e.err().map(format_io))
        }
    };
    Reply {
        index,
        hits,
        report: drain.report(),
        records,
        error,
        gone: false,
    }
}
