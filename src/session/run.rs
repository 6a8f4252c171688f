//! The drain loop around one drain unit: passes over its rings, checkpoints,
//! and poll() when there is nothing to do; a [`Control`] says when to stop.
//! The serial session runs it on the main thread with [`SessionControl`]
//! (signals, the workload's end, the status line); `--threads` runs one per
//! drain thread (see `threads`). Plain code; the per-record work is inside
//! [`Drain::pass`].

use std::io;
use std::os::fd::RawFd;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use super::control::{Channel, Command};
use super::drain::Drain;
use super::signals;
use super::status::StatusLine;
use crate::event::open::EventSet;
use crate::event::ring::Ring;
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
}

#[derive(Default, Debug, Clone)]
pub struct CheckpointStats {
    pub count: u64,
    pub bytes: u64,
    pub seconds: f64,
}

/// What one drain loop did.
#[derive(Default)]
pub struct Drained {
    pub counts: RecordCounts,
    pub wakeups: u64,
    /// The write that failed, if one did (the loop stops at once).
    pub write_error: Option<io::Error>,
    pub checkpoints: CheckpointStats,
    /// The loop ended for `--switch-output`: everything until now is in the
    /// current output, the recording goes on.
    pub switch: bool,
}

impl Drained {
    /// Adds a later loop of the same recording.
    pub fn add(&mut self, d: Drained) {
        let (a, b) = (&mut self.counts, d.counts);
        a.records += b.records;
        a.samples += b.samples;
        a.lost_records += b.lost_records;
        a.lost_events += b.lost_events;
        self.wakeups += d.wakeups;
        self.checkpoints.count += d.checkpoints.count;
        self.checkpoints.bytes += d.checkpoints.bytes;
        self.checkpoints.seconds += d.checkpoints.seconds;
        self.write_error = self.write_error.take().or(d.write_error);
        self.switch = d.switch;
    }
}

/// What a [`Control`] wants after a pass.
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
pub trait Control {
    /// Asked between passes: [`Next::Stop`] ends the loop after one final
    /// pass over every ring (the implementation disables the events it owns
    /// first).
    fn stop(&mut self, drain: &dyn Drain, counts: &RecordCounts) -> Next;
    /// Every event fd of the loop hung up (their tasks are gone).
    fn hung_up(&mut self);
    /// An fd that turns readable when [`stop`](Control::stop) should be
    /// asked again, so a sleeping loop wakes at once.
    fn wake_fd(&self) -> Option<RawFd> {
        None
    }
    /// The longest the loop may sleep in poll() before asking again.
    fn timeout_ms(&self) -> i32 {
        100
    }
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

/// Drains `rings` until `ctl` says stop, every fd in `event_fds` hung up, or
/// a write fails; then makes one final pass over every ring.
pub fn drain_loop(
    drain: &mut dyn Drain,
    rings: &mut [(u32, Ring)],
    event_fds: &[RawFd],
    ctl: &mut dyn Control,
    o: &LoopOptions<'_>,
) -> Drained {
    let mut d = Drained::default();
    // Every event fd polls its ring (redirected fds report the ring they
    // write into) and reports POLLHUP when its task is gone. The wake fd,
    // if any, comes last.
    let mut pfds: Vec<libc::pollfd> = event_fds
        .iter()
        .chain(ctl.wake_fd().as_ref())
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let n_events = event_fds.len();
    // A first checkpoint right after the side band: from here on, a crash
    // never leaves a file perf cannot open.
    if o.checkpoint.is_some() {
        if let Err(err) = checkpoint(drain, o.features, &mut d.checkpoints) {
            d.write_error = Some(err);
            return d;
        }
    }
    let mut last_cp = Instant::now();
    let mut final_pass = false;
    // After a wakeup the watermark was crossed; after a timeout, take
    // whatever waits.
    let mut threshold = o.min_bytes.max(o.min_push);
    loop {
        let moved = match drain.pass(rings, threshold, final_pass, &mut d.counts) {
            Ok(m) => m,
            Err(err) => {
                d.write_error = Some(err);
                break;
            }
        };
        if final_pass {
            break;
        }
        if o.checkpoint.is_some_and(|every| last_cp.elapsed() >= every) {
            // Everything that waits goes into the file before it is made whole.
            let r = drain
                .pass(rings, o.min_bytes, false, &mut d.counts)
                .and_then(|_| checkpoint(drain, o.features, &mut d.checkpoints));
            if let Err(err) = r {
                d.write_error = Some(err);
                break;
            }
            last_cp = Instant::now();
        }
        match ctl.stop(drain, &d.counts) {
            Next::Go => {}
            Next::Stop => {
                final_pass = true;
                continue;
            }
            Next::Switch => {
                if let Err(err) = drain.pass(rings, 1, true, &mut d.counts) {
                    d.write_error = Some(err);
                }
                d.switch = true;
                return d;
            }
        }
        if !moved {
            // SAFETY: pfds is a valid array of pollfd for its length.
            let n = unsafe {
                libc::poll(
                    pfds.as_mut_ptr(),
                    pfds.len() as libc::nfds_t,
                    ctl.timeout_ms(),
                )
            };
            threshold = if n == 0 {
                o.min_bytes
            } else {
                o.min_bytes.max(o.min_push)
            };
            if n > 0 {
                d.wakeups += 1;
                // A hung-up fd (its task is gone) stays readable forever:
                // drop it from the set, and stop when none is left.
                for p in pfds[..n_events]
                    .iter_mut()
                    .filter(|p| p.revents & (libc::POLLHUP | libc::POLLERR) != 0)
                {
                    p.fd = -1;
                }
                if n_events > 0 && pfds[..n_events].iter().all(|p| p.fd < 0) {
                    ctl.hung_up();
                    final_pass = true;
                }
            }
        }
    }
    d
}

/// How a serial session's loop ended.
pub struct Ended {
    pub drained: Drained,
    /// What `-D` / `--control` did that the user should hear about.
    pub notes: Vec<String>,
    pub stop_signal: Option<i32>,
    pub exit_status: Option<ExitStatus>,
    /// Waiting for the workload failed (the recording ended there).
    pub wait_error: Option<io::Error>,
}

/// When the recording ends or moves to a new output on its own:
/// `--duration`, `--max-size`, `--switch-output`.
#[derive(Default)]
pub struct Limits {
    /// `--duration`: stop at this time.
    pub end_at: Option<Instant>,
    /// `--max-size`: stop when the output holds this many bytes.
    pub max_size: Option<u64>,
    /// `--switch-output`.
    pub switch: Option<super::SwitchOutput>,
    /// When the current output was started.
    pub output_since: Option<Instant>,
    /// Why the recording stopped on its own, for the summary.
    pub reason: Option<String>,
}

impl Limits {
    /// `--max-size` and `--switch-output` (`--duration` is a stop reason
    /// every control checks, in `poll_ends`).
    fn next(&mut self, drain: &dyn Drain) -> Next {
        let now = Instant::now();
        if let Some(max) = self.max_size {
            if drain.bytes_written() >= max {
                self.reason = Some(format!(
                    "--max-size reached ({} bytes written)",
                    drain.bytes_written()
                ));
                return Next::Stop;
            }
        }
        let due = match self.switch {
            None => false,
            Some(super::SwitchOutput::Signal) => super::signals::usr2_taken(),
            Some(super::SwitchOutput::Size(n)) => drain.bytes_written() >= n,
            Some(super::SwitchOutput::Time(t)) => {
                self.output_since.get_or_insert(now).elapsed() >= t
            }
        };
        if due {
            self.output_since = Some(now);
            return Next::Switch;
        }
        Next::Go
    }

    fn timeout_ms(&self) -> i32 {
        let mut t = 100i32;
        let now = Instant::now();
        if let Some(e) = self.end_at {
            t = t.min(e.saturating_duration_since(now).as_millis() as i32);
        }
        if let (Some(super::SwitchOutput::Time(d)), Some(since)) = (self.switch, self.output_since)
        {
            t = t.min((since + d).saturating_duration_since(now).as_millis() as i32);
        }
        t.max(0)
    }
}

/// When the sampling events are switched on and off while recording.
#[derive(Default)]
pub struct Switching {
    /// `-D MS`: enable them at this time.
    pub enable_at: Option<Instant>,
    /// `--control`: commands from the user.
    pub channel: Option<Channel>,
    /// A `stop` command came.
    pub stopped: bool,
    /// A `snapshot` command came (taken by the loop).
    pub snapshot: bool,
    /// Enable / disable commands and what they did, for the summary.
    pub notes: Vec<String>,
}

impl Switching {
    /// Acts on a due delay and on waiting commands.
    fn tick(&mut self, set: &EventSet) {
        if self.enable_at.is_some_and(|t| Instant::now() >= t) {
            self.enable_at = None;
            if let Err(e) = set.enable_sampling() {
                self.notes
                    .push(format!("enabling the events after -D failed: {e}"));
            }
        }
        let Some(ch) = self.channel.as_mut() else {
            return;
        };
        let mut said = Vec::new();
        for c in ch.read(&mut said) {
            let r = match c {
                Command::Enable => set.enable_sampling(),
                Command::Disable => set.disable_sampling(),
                Command::Stop => {
                    self.stopped = true;
                    Ok(())
                }
                Command::Ping => Ok(()),
                Command::Snapshot => {
                    self.snapshot = true;
                    Ok(())
                }
            };
            if let Err(e) = r {
                self.notes.push(format!("--control {c:?} failed: {e}"));
            }
            ch.ack();
        }
        self.notes.extend(said);
    }

    fn timeout_ms(&self) -> i32 {
        self.enable_at.map_or(100, |t| {
            (t.saturating_duration_since(Instant::now()).as_millis() as i32).clamp(0, 100)
        })
    }
}

/// The serial session's control: stop signals, the workload's end, the
/// status line, `-D` and `--control`; disables the events when it stops.
pub struct SessionControl<'a> {
    pub set: &'a EventSet,
    pub child: Option<Child>,
    pub status: Option<StatusLine>,
    pub switching: Switching,
    pub limits: Limits,
    pub stop_signal: Option<i32>,
    pub exit_status: Option<ExitStatus>,
    pub wait_error: Option<io::Error>,
}

impl<'a> SessionControl<'a> {
    pub fn new(
        set: &'a EventSet,
        child: Option<Child>,
        status: Option<StatusLine>,
        switching: Switching,
    ) -> Self {
        SessionControl {
            set,
            child,
            status,
            switching,
            limits: Limits::default(),
            stop_signal: None,
            exit_status: None,
            wait_error: None,
        }
    }

    /// The control channel's fd, to wake a sleeping loop.
    pub fn channel_fd(&self) -> Option<RawFd> {
        self.switching.channel.as_ref().map(Channel::fd)
    }

    pub fn poll_timeout_ms(&self) -> i32 {
        self.switching.timeout_ms().min(self.limits.timeout_ms())
    }

    /// Acts on `-D` and `--control`, and says whether the recording should
    /// end: a stop signal or command came, or the workload (if there is
    /// one) ended.
    pub fn poll_ends(&mut self) -> bool {
        self.switching.tick(self.set);
        if self.limits.end_at.is_some_and(|t| Instant::now() >= t) {
            self.limits.reason = Some("--duration reached".into());
            return true;
        }
        if self.switching.stopped {
            return true;
        }
        if self.stop_signal.is_none() {
            self.stop_signal = signals::stop_requested();
        }
        if let Some(c) = self.child.as_mut() {
            if self.exit_status.is_none() && self.wait_error.is_none() {
                match c.try_wait() {
                    Ok(s) => self.exit_status = s,
                    Err(e) => self.wait_error = Some(e),
                }
            }
        }
        self.stop_signal.is_some() || self.exit_status.is_some() || self.wait_error.is_some()
    }

    /// After the loop: clears the status line, and ends a workload that still
    /// runs (stopped by a signal or a failed write), as perf does.
    pub fn end(mut self, drained: Drained) -> Ended {
        if let Some(s) = self.status.take() {
            s.clear();
        }
        let _ = self.set.disable();
        if let Some(mut c) = self.child.take() {
            if self.exit_status.is_none() {
                // SAFETY: kill has no memory effects; the pid is our own child.
                unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
                self.exit_status = c.wait().ok();
            }
        }
        let mut notes = std::mem::take(&mut self.switching.notes);
        notes.extend(self.limits.reason.take());
        Ended {
            drained,
            notes,
            stop_signal: self.stop_signal,
            exit_status: self.exit_status,
            wait_error: self.wait_error,
        }
    }
}

impl Control for SessionControl<'_> {
    fn stop(&mut self, drain: &dyn Drain, counts: &RecordCounts) -> Next {
        if let Some(s) = self.status.as_mut().filter(|s| s.due()) {
            s.update(&drain.report(), counts.lost_events);
        }
        let next = if self.poll_ends() {
            Next::Stop
        } else if std::mem::take(&mut self.switching.snapshot) {
            Next::Switch
        } else {
            self.limits.next(drain)
        };
        if next == Next::Stop {
            let _ = self.set.disable();
        }
        next
    }

    fn hung_up(&mut self) {
        let _ = self.set.disable();
    }

    fn wake_fd(&self) -> Option<RawFd> {
        self.channel_fd()
    }

    fn timeout_ms(&self) -> i32 {
        self.poll_timeout_ms()
    }
}
