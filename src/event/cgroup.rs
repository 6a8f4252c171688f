//! `-G NAME`'s cgroup, as perf finds it: a directory under the perf_event
//! cgroup hierarchy (a cgroup v1 mount with the perf_event controller,
//! else the cgroup2 mount), opened for PERF_FLAG_PID_CGROUP.

use std::fs::File;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

/// The perf_event hierarchy's mountpoint in `mounts` (/proc/self/mounts):
/// a v1 mount with the perf_event controller first, as perf looks.
fn mountpoint(mounts: &str) -> Option<PathBuf> {
    let entries: Vec<Vec<&str>> = mounts
        .lines()
        .map(|l| l.split_whitespace().collect())
        .filter(|f: &Vec<&str>| f.len() >= 4)
        .collect();
    let v1 = entries
        .iter()
        .find(|f| f[2] == "cgroup" && f[3].split(',').any(|o| o == "perf_event"));
    let v2 = || entries.iter().find(|f| f[2] == "cgroup2");
    v1.or_else(v2).map(|f| PathBuf::from(f[1]))
}

/// The directory of cgroup `name` (a path under the hierarchy, `/` alone
/// its root), opened; its path for messages.
pub fn open_dir(name: &str) -> io::Result<(File, PathBuf)> {
    let mounts = std::fs::read_to_string("/proc/self/mounts")?;
    let root = mountpoint(&mounts).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            "no cgroup hierarchy with the perf_event controller is mounted",
        )
    })?;
    let path = root.join(name.trim_start_matches('/'));
    let dir = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
        .open(&path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    Ok((dir, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_perf_event_controller_is_found_as_perf_finds_it() {
        let hybrid = "tmpfs /sys/fs/cgroup tmpfs rw 0 0\n\
                      cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n\
                      cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";
        assert_eq!(mountpoint(hybrid), Some("/sys/fs/cgroup/unified".into()));
        let v1 = format!("{hybrid}cgroup /sys/fs/cgroup/perf_event cgroup rw,perf_event 0 0\n");
        assert_eq!(mountpoint(&v1), Some("/sys/fs/cgroup/perf_event".into()));
        assert_eq!(mountpoint("proc /proc proc rw 0 0\n"), None);
    }
}
