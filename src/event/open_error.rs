//! Why a session's events could not be opened or mapped, each way in
//! words that say what to do.

use std::io;

/// Why the session's events could not be opened or mapped.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// perf_event_open(2) failed for one event.
    #[error("cannot open event {event} on cpu {cpu}{}: {err}{hint}", .pid.map(|p| format!(" for pid {p}")).unwrap_or_default())]
    Open {
        /// The event's name as given to `-e`.
        event: String,
        /// The cpu asked for (-1: any cpu, per thread).
        cpu: i32,
        /// The task asked for (`None`: every task on the cpu).
        pid: Option<i32>,
        /// The kernel's error.
        err: io::Error,
        /// What to do about it, with a leading space (may be empty).
        hint: String,
    },
    /// A named event this machine cannot count (perf's words; only the
    /// default `cycles` falls back to cpu-clock, as perf's).
    #[error("The {event} event is not supported.")]
    NotSupported {
        /// The event as given to `-e`.
        event: String,
    },
    /// `-b`/`-j` on an event without branch stacks (perf's words).
    #[error("{event}: PMU Hardware or event type doesn't support branch stack sampling.")]
    NoBranchStack {
        /// The event as given to `-e`.
        event: String,
    },
    /// A ring buffer could not be mapped, even at the smallest size.
    #[error("cannot map a ring buffer for cpu {cpu}: {err} (tried down to {pages} pages; raise `ulimit -l` or /proc/sys/kernel/perf_event_mlock_kb)")]
    Map {
        /// The cpu (or -1) of the ring.
        cpu: i32,
        /// The last size tried, in data pages.
        pages: usize,
        /// The kernel's error.
        err: io::Error,
    },
    /// The kernel refused a tracepoint's `--filter`.
    #[error("the kernel refused the filter {filter:?} on {event}: {err} (the fields a filter may name are in the event's format file under /sys/kernel/tracing/events/)")]
    Filter {
        /// The tracepoint's name as given to `-e`.
        event: String,
        /// The filter expression.
        filter: String,
        /// The kernel's error.
        err: io::Error,
    },
    /// `-G`'s cgroup could not be opened.
    #[error("cannot monitor cgroup {name} for {event}: {err} (-G names a cgroup under the perf_event hierarchy, e.g. system.slice/x.service)")]
    Cgroup {
        /// The event as given to `-e`.
        event: String,
        /// The cgroup as given to `-G`.
        name: String,
        /// Why it could not be opened.
        err: io::Error,
    },
    /// An ioctl on an event fd failed (`PERF_EVENT_IOC_ID`, `SET_OUTPUT`).
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl OpenError {
    /// perf_event_open(2) said the task is gone (ESRCH).
    pub fn no_such_process(&self) -> bool {
        matches!(self, OpenError::Open { err, .. } if err.raw_os_error() == Some(libc::ESRCH))
    }
}
