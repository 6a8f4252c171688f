//! The control loop around a drain unit: passes over the rings, checkpoints,
//! stop signals, the workload's end, and poll() when there is nothing to do.
//! Plain code; the per-record work is inside [`Drain::pass`].

use std::io;
use std::os::fd::AsRawFd;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use super::drain::Drain;
use super::error::io_err;
use super::signals;
use super::status::StatusLine;
use super::RecordError;
use crate::event::open::EventSet;
use crate::format::FeatureSet;
use crate::push::scan::RecordCounts;

/// What the loop was told.
pub struct LoopOptions<'a> {
    /// Don't drain a ring holding fewer bytes than this (except at the end).
    pub min_bytes: u64,
    /// While data keeps coming (no poll in between), drain only rings
    /// holding at least this much: many tiny pushes cost a flush, a record
    /// and a write each. After a poll timeout every ring is drained.
    pub min_push: u64,
    pub checkpoint: Option<Duration>,
    /// The features checkpoints write.
    pub features: &'a FeatureSet,
    pub status: Option<StatusLine>,
}

#[derive(Default, Debug)]
pub struct CheckpointStats {
    pub count: u64,
    pub bytes: u64,
    pub seconds: f64,
}

/// How the loop ended.
pub struct Ended {
    pub counts: RecordCounts,
    pub wakeups: u64,
    pub stop_signal: Option<i32>,
    pub exit_status: Option<ExitStatus>,
    /// The write that failed, if one did (the loop stops at once).
    pub write_error: Option<io::Error>,
    pub checkpoints: CheckpointStats,
}

fn checkpoint(
    drain: &mut dyn Drain,
    features: &FeatureSet,
    cp: &mut CheckpointStats,
) -> io::Result<()> {
    let t = Instant::now();
    if let Some(n) = drain.checkpoint(features)? {
        cp.count += 1;
        cp.bytes += n;
    }
    cp.seconds += t.elapsed().as_secs_f64();
    Ok(())
}

/// Runs until the workload exits, a stop signal arrives, every event's task
/// is gone, or a write fails; then makes one final pass over every ring.
pub fn run(
    drain: &mut dyn Drain,
    set: &mut EventSet,
    mut child: Option<Child>,
    mut o: LoopOptions<'_>,
) -> Result<Ended, RecordError> {
    let mut e = Ended {
        counts: RecordCounts::default(),
        wakeups: 0,
        stop_signal: None,
        exit_status: None,
        write_error: None,
        checkpoints: CheckpointStats::default(),
    };
    // Every event fd polls its ring (redirected fds report the ring they
    // write into) and reports POLLHUP when its task is gone.
    let mut pfds: Vec<libc::pollfd> = set
        .fds
        .iter()
        .map(|f| libc::pollfd {
            fd: f.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // A first checkpoint right after the side band: from here on, a crash
    // never leaves a file perf cannot open.
    if o.checkpoint.is_some() {
        if let Err(err) = checkpoint(drain, o.features, &mut e.checkpoints) {
            e.write_error = Some(err);
        }
    }
    let mut last_cp = Instant::now();
    let mut final_pass = false;
    // After a wakeup the watermark was crossed; after a timeout, take
    // whatever waits.
    let mut threshold = o.min_bytes.max(o.min_push);
    while e.write_error.is_none() {
        let moved = match drain.pass(&mut set.rings, threshold, final_pass, &mut e.counts) {
            Ok(m) => m,
            Err(err) => {
                e.write_error = Some(err);
                break;
            }
        };
        if final_pass {
            break;
        }
        if let Some(s) = o.status.as_mut().filter(|s| s.due()) {
            s.update(&drain.report(), e.counts.lost_events);
        }
        if o.checkpoint.is_some_and(|every| last_cp.elapsed() >= every) {
            // Everything that waits goes into the file before it is made whole.
            if let Err(err) = drain.pass(&mut set.rings, o.min_bytes, false, &mut e.counts) {
                e.write_error = Some(err);
                break;
            }
            if let Err(err) = checkpoint(drain, o.features, &mut e.checkpoints) {
                e.write_error = Some(err);
                break;
            }
            last_cp = Instant::now();
        }
        if e.stop_signal.is_none() {
            e.stop_signal = signals::stop_requested();
        }
        if let Some(c) = child.as_mut() {
            if e.exit_status.is_none() {
                e.exit_status = c.try_wait().map_err(io_err("waiting for the workload"))?;
            }
        }
        if e.stop_signal.is_some() || e.exit_status.is_some() {
            let _ = set.disable();
            final_pass = true;
            continue;
        }
        if !moved {
            // SAFETY: pfds is a valid array of pollfd for its length.
            let n = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, 100) };
            threshold = if n == 0 {
                o.min_bytes
            } else {
                o.min_bytes.max(o.min_push)
            };
            if n > 0 {
                e.wakeups += 1;
                // A hung-up fd (its task is gone) stays readable forever:
                // drop it from the set, and stop when none is left.
                for p in pfds
                    .iter_mut()
                    .filter(|p| p.revents & (libc::POLLHUP | libc::POLLERR) != 0)
                {
                    p.fd = -1;
                }
                if pfds.iter().all(|p| p.fd < 0) {
                    let _ = set.disable();
                    final_pass = true;
                }
            }
        }
    }
    if let Some(s) = o.status.take() {
        s.clear();
    }
    if e.write_error.is_some() {
        let _ = set.disable();
    }
    if let Some(mut c) = child {
        if e.exit_status.is_none() {
            // Stopped by a signal (or a failed write) while the workload
            // still runs: end it, as perf does.
            // SAFETY: kill has no memory effects; the pid is our own child.
            unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
            e.exit_status = c.wait().ok();
        }
    }
    Ok(e)
}
