//! When a recording stops, switches output or turns sampling on and off by
//! itself or on the user's word: `--duration`, `--max-size`,
//! `--switch-output`, `-D` and `--control`.
//!
//! These are checks of the supervisor, the same in every strategy: a limit
//! reached is the normal end (final pass, LOST_SAMPLES, features), and
//! `--switch-output` is a `Next::Switch` like a snapshot.

use std::time::Instant;

use super::control::{Channel, ControlCommand};
use super::run::Next;
use crate::event::open::EventSet;
use crate::notes::Notes;

/// When the recording ends or moves to a new output on its own:
/// `--duration`, `--max-size`, `--switch-output`.
#[derive(Default)]
pub struct Limits {
    /// `--duration`: stop at this time.
    pub end_at: Option<Instant>,
    /// `--max-size`: stop when the output holds this many bytes.
    pub max_size: Option<u64>,
    /// `--switch-output`.
    pub switch: Option<super::options::SwitchOutput>,
    /// When the current output was started.
    pub output_since: Option<Instant>,
    /// Why the recording stopped on its own, for the summary.
    pub reason: Option<String>,
}

impl Limits {
    /// `--max-size` and `--switch-output` (`--duration` is a stop reason
    /// every control checks, in `poll_ends`).
    /// `written`: bytes of records in the current output.
    pub fn next(&mut self, written: u64) -> Next {
        let now = Instant::now();
        if let Some(max) = self.max_size {
            if written >= max {
                self.reason = Some(format!("--max-size reached ({written} bytes written)"));
                return Next::Stop;
            }
        }
        let due = match self.switch {
            None => false,
            Some(super::options::SwitchOutput::Signal) => super::signals::usr2_taken(),
            Some(super::options::SwitchOutput::Size(n)) => written >= n,
            Some(super::options::SwitchOutput::Time(t)) => {
                self.output_since.get_or_insert(now).elapsed() >= t
            }
        };
        if due {
            self.output_since = Some(now);
            return Next::Switch;
        }
        Next::Go
    }

    pub fn timeout_ms(&self) -> i32 {
        let mut t = 100i32;
        let now = Instant::now();
        if let Some(e) = self.end_at {
            t = t.min(e.saturating_duration_since(now).as_millis() as i32);
        }
        if let (Some(super::options::SwitchOutput::Time(d)), Some(since)) =
            (self.switch, self.output_since)
        {
            t = t.min((since + d).saturating_duration_since(now).as_millis() as i32);
        }
        t.max(0)
    }
}

/// The sampling gate: when the sampling events are switched on and off
/// while recording (`-D`, `--control` enable / disable).
#[derive(Default)]
pub struct Gate {
    /// `-D MS`: enable them at this time.
    pub enable_at: Option<Instant>,
    /// `--control`: commands from the user.
    pub channel: Option<Channel>,
    /// A `stop` command came.
    pub stopped: bool,
    /// A `snapshot` command came (taken by the loop).
    pub snapshot: bool,
    /// Enable / disable commands and what they did, for the summary.
    pub notes: Notes,
}

impl Gate {
    /// Acts on a due delay and on waiting commands.
    pub fn tick(&mut self, set: &EventSet) {
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
        let mut said = Notes::new();
        for c in ch.read(&mut said) {
            let r = match c {
                ControlCommand::Enable => set.enable_sampling(),
                ControlCommand::Disable => set.disable_sampling(),
                ControlCommand::Stop => {
                    self.stopped = true;
                    Ok(())
                }
                ControlCommand::Ping => Ok(()),
                ControlCommand::Snapshot => {
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

    pub fn timeout_ms(&self) -> i32 {
        self.enable_at.map_or(100, |t| {
            (t.saturating_duration_since(Instant::now()).as_millis() as i32).clamp(0, 100)
        })
    }
}
