//! The start of a recording and the control of its loop: the events
//! enabled, the workload started, the drain at its realtime priority, and
//! only then the output in place of an existing one; the supervisor that
//! stops, gates and switches the loop from then on.

use std::time::{Duration, Instant};

use super::Recording;
use crate::event::target::Target;
use crate::session::error::{io_err, RecordError};
use crate::session::limits::{Gate, Limits};
use crate::session::options::SwitchOutput;
use crate::session::place::Place;
use crate::session::status::StatusLine;
use crate::session::supervisor::SessionSupervisor;

impl Recording<'_> {
    /// Starts the recording: enables the events (a forked workload enables
    /// its own, on exec), starts the workload or timing command, and only
    /// then lets the output replace an existing one.
    pub fn start(&mut self, out: &mut Place) -> Result<Option<std::process::Child>, RecordError> {
        let o = self.o;
        if !matches!(o.target, Target::Workload(_)) {
            let set = &self.prepared.set;
            if o.delay_ms.is_some() {
                set.enable_tracking()
            } else {
                set.enable()
            }
            .map_err(io_err("cannot enable the events"))?;
            if let Some(sw) = &self.prepared.switch_events {
                sw.enable()
                    .map_err(io_err("cannot enable --switch-output-event"))?;
            }
        }
        let child = match self.prepared.workload.take() {
            Some(w) => {
                let cmd = match &o.target {
                    Target::Workload(argv) => &argv[0],
                    _ => &o.timing_command[0],
                };
                let cmd = cmd.to_string_lossy().into_owned();
                Some(w.start().map_err(|err| RecordError::Start { cmd, err })?)
            }
            None => None,
        };
        // The workload runs (it must not inherit the policy): the drain
        // takes its realtime priority now (`--threads` drains take it
        // each, as they start).
        if let Some(prio) = o.realtime {
            if let Err(e) = set_realtime(prio) {
                if let Some(mut c) = child {
                    let _ = c.kill();
                    let _ = c.wait();
                }
                return Err(RecordError::Usage(format!(
                    "-r {prio}: cannot run at SCHED_FIFO priority {prio} ({e}): run as root, \
                     grant CAP_SYS_NICE, or raise `ulimit -r`"
                )));
            }
        }
        // Started: only now may an existing file become FILE.old.
        if let Err(e) = out.commit() {
            if let Some(mut c) = child {
                let _ = c.kill();
                let _ = c.wait();
            }
            return Err(RecordError::Output(e));
        }
        Ok(child)
    }

    /// The supervisor of the loop from now: the workload, `-D`,
    /// `--control` (its channel goes to this one supervisor), `--duration`,
    /// `--max-size`, `--switch-output` (the flight recorder snapshots on
    /// SIGUSR2, as perf's `--switch-output` does); `status`: the live status
    /// line, where asked.
    pub fn supervisor(
        &self,
        child: Option<std::process::Child>,
        status: bool,
    ) -> SessionSupervisor<'_> {
        let o = self.o;
        let now = Instant::now();
        let gate = Gate {
            enable_at: o
                .delay_ms
                .filter(|&d| d >= 0)
                .map(|d| now + Duration::from_millis(d as u64)),
            channel: self.channel.take(),
            ..Default::default()
        };
        let status = (status && o.status).then(StatusLine::new);
        let mut supervisor = SessionSupervisor::new(&self.prepared.set, child, status, gate);
        supervisor.limits = Limits {
            end_at: o.duration.map(|d| now + d),
            max_size: o.max_size,
            switch: match o.flight_recorder {
                Some(_) => Some(SwitchOutput::Signal),
                None => o.switch_output,
            },
            output_since: Some(now),
            reason: None,
        };
        supervisor
    }
}

/// The calling thread at SCHED_FIFO priority `prio`; children it forks
/// later start with the normal policy (SCHED_RESET_ON_FORK).
pub(in crate::session) fn set_realtime(prio: i32) -> std::io::Result<()> {
    let param = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: sched_setscheduler reads `param` (a valid sched_param on our
    // stack) for the calling thread (pid 0) and keeps no pointer to it.
    let r = unsafe {
        libc::sched_setscheduler(0, libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK, &param)
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
