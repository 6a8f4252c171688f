//! One event fd: opened for a task or a `-G` cgroup, its tracepoint
//! filter set (`--exclude-perf`'s too), and what to do when the kernel
//! refuses it.

use std::io;
use std::os::fd::OwnedFd;

use super::events::EventSpec;
use super::open_error::OpenError;
use super::sys;
use crate::format::Attr;

/// What to do about the kernel's `err` on event `ev`, with a leading
/// space (empty where there is nothing to say).
pub(super) fn hint_for(err: &io::Error, ev: &EventSpec) -> String {
    match err.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => {
            " (not permitted: run as root or lower /proc/sys/kernel/perf_event_paranoid)".into()
        }
        Some(libc::ESRCH) => " (no such process)".into(),
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) if ev.is_hardware() => {
            " (hardware counters are not available here)".into()
        }
        Some(libc::EINVAL | libc::EOPNOTSUPP) if ev.precise > 0 => format!(
            " (this PMU cannot sample precisely: drop the :{} modifier)",
            "p".repeat(ev.precise as usize)
        ),
        Some(libc::EINVAL) if ev.type_ > crate::format::attr::TYPE_RAW && ev.tracepoint.is_none() => {
            " (this PMU's events may only count, not sample: try `perf stat -e` for it, or sample a software or tracepoint event)".into()
        }
        Some(libc::EINVAL) => {
            " (the kernel rejected the attr: an option this kernel does not support)".into()
        }
        _ => String::new(),
    }
}

/// The open directory of each event's `-G` cgroup (None: every task).
pub(super) fn cgroup_dirs(specs: &[EventSpec]) -> Result<Vec<Option<std::fs::File>>, OpenError> {
    specs
        .iter()
        .map(|s| {
            let Some(name) = &s.cgroup else {
                return Ok(None);
            };
            super::cgroup::open_dir(name)
                .map(|(dir, _)| Some(dir))
                .map_err(|err| OpenError::Cgroup {
                    event: s.name.clone(),
                    name: name.clone(),
                    err,
                })
        })
        .collect()
}

/// Opens `attr` of event `spec` for task `pid` (with `cgroup`: for the
/// tasks of that open cgroup directory) on `cpu` (in the group of
/// `group_fd`, or -1) and sets the event's filter.
pub(super) fn open_fd(
    attr: &Attr,
    spec: &EventSpec,
    (pid, cpu): (i32, i32),
    group_fd: std::os::fd::RawFd,
    cgroup: Option<&std::fs::File>,
) -> Result<OwnedFd, OpenError> {
    use std::os::fd::AsRawFd;
    let opened = match cgroup {
        Some(dir) => sys::open_cgroup(attr, dir.as_raw_fd(), cpu, group_fd),
        None => sys::open(attr, pid, cpu, group_fd),
    };
    let fd = opened.map_err(|err| {
        let errno = err.raw_os_error();
        let event = spec.name.clone();
        if attr.sample_type() & crate::format::attr::sample_type::BRANCH_STACK != 0
            && errno == Some(libc::EOPNOTSUPP)
        {
            return OpenError::NoBranchStack { event };
        }
        if spec.is_hardware()
            && matches!(errno, Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV))
        {
            return OpenError::NotSupported { event };
        }
        OpenError::Open {
            event,
            cpu,
            pid: (pid >= 0).then_some(pid),
            hint: hint_for(&err, spec),
            err,
        }
    })?;
    let filter = match (&spec.filter, spec.exclude_self) {
        (f, true) => Some(without_own_threads(f.as_deref())),
        (f, false) => f.clone(),
    };
    if let Some(f) = filter {
        sys::set_filter(&fd, &f).map_err(|err| OpenError::Filter {
            event: spec.name.clone(),
            filter: f.clone(),
            err,
        })?;
    }
    Ok(fd)
}

/// `--exclude-perf`: `filter` (if any) and `common_pid != T` for each of
/// perfz's threads now (perf's leaves out its one thread).
fn without_own_threads(filter: Option<&str>) -> String {
    let mut tids: Vec<u32> = std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    if tids.is_empty() {
        tids.push(std::process::id());
    }
    let own: Vec<String> = tids.iter().map(|t| format!("common_pid != {t}")).collect();
    match filter {
        Some(f) => format!("({f}) && {}", own.join(" && ")),
        None => own.join(" && "),
    }
}
