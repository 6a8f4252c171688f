//! The drain loop around one drain unit: passes over its rings, checkpoints,
//! and poll() when there is nothing to do; a [`Supervisor`] says when to stop.
//! The serial session runs it on the main thread with the supervisor
//! (signals, the workload's end, the status line); `--threads` runs one per
//! drain thread (see `threads`). Plain code; the per-record work is inside
//! [`Unit::pass`](crate::push::unit::Unit::pass).
//!
//! While data keeps coming a pass drains only rings holding a sixteenth of
//! their size (`LoopOptions::min_push`): fewer, larger pushes mean fewer
//! flushes, records and writes, where a context-switch heavy stream would
//! otherwise spin through pushes of a few hundred bytes. A pass that moved
//! nothing sleeps in poll(), woken when a ring is half full (the wakeup
//! watermark); after a poll timeout whatever waits is drained, and so before
//! each checkpoint. What the codec holds is flushed once it has waited
//! [`HOLD_MAX`]. A first checkpoint right after the side band means a file
//! is never unreadable.
//!
//! The loop ends on the supervisor's word (a stop signal or command, the
//! workload's end, a limit) or when every event fd hung up: the events are
//! disabled, then a final pass takes every ring, whatever `--mmap-flush`
//! says. A failed write ends it at once. `Next::Switch` (`--switch-output`,
//! a flight-recorder snapshot, a request in a drain thread's mailbox) ends
//! one loop with everything waiting pushed; [`drain_all`] acts on it and
//! runs the next.

use crate::push::unit::Unit;
use std::io;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

use super::cpu_wait::{add_waits, CpuWait};
use crate::event::ring::Ring;
use crate::format::FeatureSet;
use crate::transform::scan::RecordCounts;

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
}

/// What one drain loop did.
#[derive(Default)]
pub struct Drained {
    pub counts: RecordCounts,
    pub wakeups: u64,
    /// The write that failed, if one did (the loop stops at once).
    pub write_error: Option<io::Error>,
    /// Checkpoints taken, the bytes they wrote and the seconds they took.
    pub checkpoints: u64,
    pub checkpoint_bytes: u64,
    pub checkpoint_seconds: f64,
    /// The loop ended for `--switch-output`: everything until now is in the
    /// current output, the recording goes on.
    pub switch: bool,
    /// How long the drain had waited for its CPU before each pass that
    /// found new losses (ns; see `cpu_wait`).
    pub cpu_waits: Vec<u64>,
}

impl Drained {
    /// Adds a later loop of the same recording.
    pub fn add(&mut self, d: Drained) {
        let (a, b) = (&mut self.counts, d.counts);
        a.records += b.records;
        a.samples += b.samples;
        a.lost_records += b.lost_records;
        a.lost_events += b.lost_events;
        a.max_lost = a.max_lost.max(b.max_lost);
        a.times.merge(b.times);
        self.wakeups += d.wakeups;
        self.checkpoints += d.checkpoints;
        self.checkpoint_bytes += d.checkpoint_bytes;
        self.checkpoint_seconds += d.checkpoint_seconds;
        self.write_error = self.write_error.take().or(d.write_error);
        self.switch = d.switch;
        add_waits(&mut self.cpu_waits, &d.cpu_waits);
    }
}

/// What a [`Supervisor`] wants after a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    Go,
    /// End after one final pass over every ring.
    Stop,
    /// Put everything waiting into the current output and return, to go on
    /// in a new one (`--switch-output`).
    Switch,
}

/// Tells a drain loop when to end.
pub trait Supervisor {
    /// Asked between passes: [`Next::Stop`] ends the loop after one final
    /// pass over every ring (the implementation disables the events it owns
    /// first).
    fn stop(&mut self, unit: &dyn Unit, counts: &RecordCounts) -> Next;
    /// Every event fd of the loop hung up (their tasks are gone).
    fn hung_up(&mut self);
    /// An fd that turns readable when [`stop`](Supervisor::stop) should be
    /// asked again, so a sleeping loop wakes at once.
    fn wake_fd(&self) -> Option<RawFd> {
        None
    }
    /// The longest the loop may sleep in poll() before asking again.
    fn timeout_ms(&self) -> i32 {
        100
    }
}

/// The longest pushed bytes stay held in the codec (see
/// `push::compressor`) before the loop flushes them into the output: what a
/// reader of a live output (`-o -`) waits at most beyond the drain, and
/// what a recorder killed outright (SIGKILL) loses at most. One flush per
/// 100 ms costs one short block, where one per push cost one per wake-up.
pub const HOLD_MAX: Duration = Duration::from_millis(100);

fn checkpoint(unit: &mut dyn Unit, features: &FeatureSet, d: &mut Drained) -> io::Result<()> {
    let t = Instant::now();
    if let Some(n) = unit.checkpoint(features)? {
        d.checkpoints += 1;
        d.checkpoint_bytes += n;
    }
    d.checkpoint_seconds += t.elapsed().as_secs_f64();
    Ok(())
}

/// The loop every strategy runs: drains `rings` until the end or a write
/// error, and between loops acts on each `--switch-output` or snapshot the
/// control asked for with `on_switch` (given the drain and what was drained
/// so far); `on_switch` returning false ends the recording.
pub fn drain_all(
    unit: &mut dyn Unit,
    rings: &mut [(u32, Ring)],
    event_fds: &[RawFd],
    supervisor: &mut dyn Supervisor,
    o: &LoopOptions<'_>,
    mut on_switch: impl FnMut(&mut dyn Unit, &mut Drained) -> bool,
) -> Drained {
    let mut drained = Drained::default();
    loop {
        let d = drain_loop(unit, rings, event_fds, supervisor, o);
        drained.add(d);
        if !drained.switch || drained.write_error.is_some() {
            break;
        }
        drained.switch = false;
        if !on_switch(unit, &mut drained) {
            break;
        }
    }
    drained
}

/// Drains `rings` until `supervisor` says stop, every fd in `event_fds`
/// hung up, or a write fails; then makes one final pass over every ring.
pub fn drain_loop(
    unit: &mut dyn Unit,
    rings: &mut [(u32, Ring)],
    event_fds: &[RawFd],
    supervisor: &mut dyn Supervisor,
    o: &LoopOptions<'_>,
) -> Drained {
    let mut d = Drained::default();
    let mut pfds = poll_set(event_fds, supervisor.wake_fd());
    let n_events = event_fds.len();
    // A first checkpoint right after the side band: from here on, a crash
    // never leaves a file perf cannot open.
    if o.checkpoint.is_some() {
        if let Err(err) = checkpoint(unit, o.features, &mut d) {
            d.write_error = Some(err);
            return d;
        }
    }
    let mut last_cp = Instant::now();
    let mut final_pass = false;
    // After a wakeup the watermark was crossed; after a timeout, take
    // whatever waits.
    let mut threshold = o.min_bytes.max(o.min_push);
    // Since when the codec holds bytes not in the output.
    let mut last_flush = Instant::now();
    let mut cpu_wait = CpuWait::default();
    loop {
        let min = if final_pass { 1 } else { threshold };
        let moved = match pass(unit, rings, min, &mut d, &mut cpu_wait) {
            Ok(m) => m,
            Err(err) => {
                d.write_error = Some(err);
                break;
            }
        };
        if final_pass {
            break;
        }
        if let Err(err) = upkeep(unit, rings, o, &mut d, &mut last_flush, &mut last_cp) {
            d.write_error = Some(err);
            break;
        }
        match supervisor.stop(unit, &d.counts) {
            Next::Go => {}
            Next::Stop => {
                final_pass = true;
                continue;
            }
            Next::Switch => return ended_for_switch(unit, rings, d, cpu_wait),
        }
        if !moved {
            cpu_wait.sleeping(Instant::now());
            let (next, all_hung_up) = sleep(&mut pfds, n_events, supervisor, o, &mut d);
            threshold = next;
            final_pass |= all_hung_up;
        }
    }
    d.cpu_waits = cpu_wait.waits;
    d
}

/// Every event fd polls its ring (redirected fds report the ring they
/// write into) and reports POLLHUP when its task is gone. The wake fd, if
/// any, comes last.
fn poll_set(event_fds: &[RawFd], wake_fd: Option<RawFd>) -> Vec<libc::pollfd> {
    event_fds
        .iter()
        .chain(wake_fd.as_ref())
        .map(|&fd| pollin(fd))
        .collect()
}

/// One pass of `unit` over `rings` draining those holding `min` bytes; a
/// loss it finds is noted for the CPU-wait statistics.
fn pass(
    unit: &mut dyn Unit,
    rings: &mut [(u32, Ring)],
    min: u64,
    d: &mut Drained,
    cpu_wait: &mut CpuWait,
) -> io::Result<bool> {
    let lost_before = d.counts.lost_events;
    let moved = unit.pass(rings, min, &mut d.counts)?;
    if d.counts.lost_events > lost_before {
        cpu_wait.lost();
    }
    Ok(moved)
}

/// The loop ends for a switch: everything waiting pushed into the current
/// output first.
fn ended_for_switch(
    unit: &mut dyn Unit,
    rings: &mut [(u32, Ring)],
    mut d: Drained,
    cpu_wait: CpuWait,
) -> Drained {
    if let Err(err) = unit.pass(rings, 1, &mut d.counts) {
        d.write_error = Some(err);
    }
    d.switch = true;
    d.cpu_waits = cpu_wait.waits;
    d
}

/// The loop's own writes between passes: what the codec held flushed once
/// [`HOLD_MAX`] has passed, a checkpoint when one is due (after a pass:
/// everything that waits goes into the file before it is made whole).
fn upkeep(
    unit: &mut dyn Unit,
    rings: &mut [(u32, Ring)],
    o: &LoopOptions<'_>,
    d: &mut Drained,
    last_flush: &mut Instant,
    last_cp: &mut Instant,
) -> io::Result<()> {
    // Whatever was held is flushed at most HOLD_MAX after it was pushed
    // (a unit that holds nothing does nothing).
    if last_flush.elapsed() >= HOLD_MAX {
        unit.flush()?;
        *last_flush = Instant::now();
    }
    if o.checkpoint.is_some_and(|every| last_cp.elapsed() >= every) {
        unit.pass(rings, o.min_bytes, &mut d.counts)?;
        checkpoint(unit, o.features, d)?;
        *last_cp = Instant::now();
    }
    Ok(())
}

/// Sleeps in poll until a ring crosses its watermark, a task hangs up or
/// the control's timeout passes. Returns the next pass's threshold (after
/// a timeout, whatever waits) and whether every event fd has hung up.
fn sleep(
    pfds: &mut [libc::pollfd],
    n_events: usize,
    supervisor: &mut dyn Supervisor,
    o: &LoopOptions<'_>,
    d: &mut Drained,
) -> (u64, bool) {
    // SAFETY: pfds is a valid array of pollfd for its length.
    let n = unsafe {
        libc::poll(
            pfds.as_mut_ptr(),
            pfds.len() as libc::nfds_t,
            supervisor.timeout_ms(),
        )
    };
    let threshold = if n == 0 {
        o.min_bytes
    } else {
        o.min_bytes.max(o.min_push)
    };
    if n <= 0 {
        return (threshold, false);
    }
    d.wakeups += 1;
    // A hung-up fd (its task is gone) stays readable forever: drop it from
    // the set, and stop when none is left.
    for p in pfds[..n_events]
        .iter_mut()
        .filter(|p| p.revents & (libc::POLLHUP | libc::POLLERR) != 0)
    {
        p.fd = -1;
    }
    let all = n_events > 0 && pfds[..n_events].iter().all(|p| p.fd < 0);
    if all {
        supervisor.hung_up();
    }
    (threshold, all)
}

/// `fd` polled for reading.
pub(super) fn pollin(fd: RawFd) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}
