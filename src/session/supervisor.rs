//! The recording's supervisor on the main thread: stop signals, the
//! workload's end, the status line, the limits and switches of
//! [`super::limits`]; it ends the workload and disables the events when the
//! recording stops. A workload that exits or is killed is seen by
//! `try_wait` between passes (its events' fds hang up too); the loop then
//! makes its final pass. Drain threads have a `ThreadSupervisor` of their
//! own (threads/job.rs), which the main thread stops with a shared flag.

use crate::push::unit::Unit;
use std::io;
use std::os::fd::RawFd;
use std::process::{Child, ExitStatus};
use std::time::Instant;

use super::control::Channel;
use super::limits::{Gate, Limits};
use super::run::{Drained, Next, Supervisor};
use super::signals;
use super::status::StatusLine;
use crate::event::open::EventSet;
use crate::notes::Notes;
use crate::transform::scan::RecordCounts;

/// How a serial session's loop ended.
pub struct Ended {
    pub drained: Drained,
    /// What `-D` / `--control` did that the user should hear about.
    pub notes: Notes,
    pub stop_signal: Option<i32>,
    pub exit_status: Option<ExitStatus>,
    /// perfz ended the workload (a limit, `--control stop`, a failed
    /// write): its exit status is perfz's doing, not its own.
    pub ended_workload: bool,
    /// Waiting for the workload failed (the recording ended there).
    pub wait_error: Option<io::Error>,
}

/// The serial session's control: stop signals, the workload's end, the
/// status line, `-D` and `--control`; disables the events when it stops.
pub struct SessionSupervisor<'a> {
    pub set: &'a EventSet,
    pub child: Option<Child>,
    pub status: Option<StatusLine>,
    pub gate: Gate,
    pub limits: Limits,
    pub stop_signal: Option<i32>,
    pub exit_status: Option<ExitStatus>,
    pub wait_error: Option<io::Error>,
}

impl<'a> SessionSupervisor<'a> {
    pub fn new(
        set: &'a EventSet,
        child: Option<Child>,
        status: Option<StatusLine>,
        gate: Gate,
    ) -> Self {
        SessionSupervisor {
            set,
            child,
            status,
            gate,
            limits: Limits::default(),
            stop_signal: None,
            exit_status: None,
            wait_error: None,
        }
    }

    /// The control channel's fd, to wake a sleeping loop.
    pub fn channel_fd(&self) -> Option<RawFd> {
        self.gate.channel.as_ref().map(Channel::fd)
    }

    pub fn poll_timeout_ms(&self) -> i32 {
        self.gate.timeout_ms().min(self.limits.timeout_ms())
    }

    /// Acts on `-D` and `--control`, and says whether the recording should
    /// end: a stop signal or command came, or the workload (if there is
    /// one) ended.
    pub fn poll_ends(&mut self) -> bool {
        self.gate.tick(self.set);
        if self.limits.end_at.is_some_and(|t| Instant::now() >= t) {
            self.limits.reason = Some("--duration reached".into());
            return true;
        }
        if self.gate.stopped {
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

    /// What the recording does next, its current output holding `written`
    /// bytes: stop (a signal, a command, the workload's end, a limit),
    /// switch (`--switch-output`, a snapshot) or go on.
    pub fn next(&mut self, written: u64) -> Next {
        if self.poll_ends() {
            Next::Stop
        } else if std::mem::take(&mut self.gate.snapshot) {
            Next::Switch
        } else {
            self.limits.next(written)
        }
    }

    /// After the loop: clears the status line, and ends a workload that still
    /// runs (stopped by a signal or a failed write), as perf does.
    pub fn end(mut self, drained: Drained) -> Ended {
        if let Some(s) = self.status.take() {
            s.clear();
        }
        let _ = self.set.disable();
        let mut ended_workload = false;
        if let Some(mut c) = self.child.take() {
            // Ended on its own meanwhile? The rings hang up as its events
            // go, a moment before it is a zombie: give it that moment.
            for _ in 0..20 {
                if self.exit_status.is_some() {
                    break;
                }
                self.exit_status = c.try_wait().ok().flatten();
                if self.exit_status.is_none() && self.stop_signal.is_none() {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                } else {
                    break;
                }
            }
            if self.exit_status.is_none() {
                ended_workload = true;
                // SAFETY: kill has no memory effects; the pid is our own child.
                unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
                self.exit_status = c.wait().ok();
            }
        }
        let mut notes = std::mem::take(&mut self.gate.notes);
        notes.extend(self.limits.reason.take());
        Ended {
            drained,
            notes,
            stop_signal: self.stop_signal,
            exit_status: self.exit_status,
            ended_workload,
            wait_error: self.wait_error,
        }
    }
}

impl Supervisor for SessionSupervisor<'_> {
    fn stop(&mut self, unit: &dyn Unit, counts: &RecordCounts) -> Next {
        if let Some(s) = self.status.as_mut().filter(|s| s.due()) {
            s.update(&unit.report(), counts.lost_events);
        }
        let next = self.next(unit.bytes_written());
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
