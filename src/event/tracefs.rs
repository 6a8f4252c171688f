//! tracefs: where tracepoints are named, numbered and described. Found (or
//! mounted, as perf does) at /sys/kernel/tracing, else under debugfs.

use std::io;
use std::path::{Path, PathBuf};

/// One tracepoint: `sys:name` and its id (the attr's config).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tracepoint {
    /// The subsystem (`sched` of `sched:sched_switch`).
    pub sys: String,
    /// The event's name within it.
    pub name: String,
    /// Its tracefs `id` file: the attr's config for `PERF_TYPE_TRACEPOINT`.
    pub id: u64,
}

const MOUNT: &str = "/sys/kernel/tracing";
const DEBUGFS: &str = "/sys/kernel/debug/tracing";

/// The tracefs root holding `events/`, mounting tracefs if nothing is there
/// yet (root only; perf does the same).
pub fn root() -> io::Result<PathBuf> {
    for p in [MOUNT, DEBUGFS] {
        if Path::new(p).join("events").is_dir() {
            return Ok(p.into());
        }
    }
    let c = |s: &str| std::ffi::CString::new(s).expect("no NUL");
    let (src, target, fs) = (c("nodev"), c(MOUNT), c("tracefs"));
    // SAFETY: mount reads NUL-terminated strings; data is null.
    let r = unsafe {
        libc::mount(
            src.as_ptr(),
            target.as_ptr(),
            fs.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if r == 0 && Path::new(MOUNT).join("events").is_dir() {
        return Ok(MOUNT.into());
    }
    Err(io::Error::other(format!(
        "tracefs is not mounted and could not be ({}): run as root or `mount -t tracefs nodev {MOUNT}`",
        io::Error::last_os_error()
    )))
}

/// Shell-style `*` and `?` matching (perf accepts globs in both parts).
pub fn glob(pat: &str, s: &str) -> bool {
    fn m(p: &[u8], s: &[u8]) -> bool {
        match (p.first(), s.first()) {
            (None, None) => true,
            (Some(b'*'), _) => m(&p[1..], s) || (!s.is_empty() && m(p, &s[1..])),
            (Some(b'?'), Some(_)) => m(&p[1..], &s[1..]),
            (Some(a), Some(b)) if a == b => m(&p[1..], &s[1..]),
            _ => false,
        }
    }
    m(pat.as_bytes(), s.as_bytes())
}

fn dirs(p: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(p)
        .map(|d| {
            d.filter_map(|e| {
                let e = e.ok()?;
                e.file_type()
                    .ok()?
                    .is_dir()
                    .then(|| e.file_name().to_string_lossy().into_owned())
            })
            .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Whether `sys` names a tracepoint subsystem (or a glob matching one).
pub fn is_subsystem(root: &Path, sys: &str) -> bool {
    dirs(&root.join("events")).iter().any(|d| glob(sys, d))
}

/// The tracepoints matching `sys:name` (globs allowed), in name order.
pub fn resolve(root: &Path, sys: &str, name: &str) -> Vec<Tracepoint> {
    let mut out = Vec::new();
    for s in dirs(&root.join("events"))
        .into_iter()
        .filter(|d| glob(sys, d))
    {
        for n in dirs(&root.join("events").join(&s))
            .into_iter()
            .filter(|d| glob(name, d))
        {
            let id = std::fs::read_to_string(root.join("events").join(&s).join(&n).join("id"))
                .ok()
                .and_then(|t| t.trim().parse().ok());
            if let Some(id) = id {
                out.push(Tracepoint {
                    sys: s.clone(),
                    name: n,
                    id,
                });
            }
        }
    }
    out
}

/// Some tracepoint names near `sys` for an error message: the subsystem's
/// events, or the subsystems.
pub fn suggestions(root: &Path, sys: &str) -> String {
    let events = root.join("events");
    let in_sys = dirs(&events.join(sys));
    let list = if in_sys.is_empty() {
        dirs(&events)
            .into_iter()
            .filter(|d| !d.starts_with("header_"))
            .map(|d| format!("{d}:*"))
            .collect::<Vec<_>>()
    } else {
        in_sys.into_iter().map(|n| format!("{sys}:{n}")).collect()
    };
    let n = list.len();
    let mut s = list.into_iter().take(40).collect::<Vec<_>>().join(", ");
    if n > 40 {
        s += &format!(
            ", ... ({n} in all; see `perf list tracepoint` or {})",
            events.display()
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn globs_match_like_perf() {
        assert!(glob("sched_*", "sched_switch"));
        assert!(glob("*", ""));
        assert!(glob("s?hed", "sched"));
        assert!(!glob("sched", "sched_switch"));
        assert!(glob("*switch", "sched_switch"));
    }
}
