//! Whether a file is still being written: a process holds it open for
//! writing (a recorder that has not finished). `perfz recover` refuses
//! such a file instead of replacing it under the writer.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The first process (pid, its name) that has `path` open for writing,
/// by /proc/PID/fd and fdinfo's flags; None where none has (or /proc
/// says nothing).
pub fn writer_of(path: &Path) -> Option<(u32, String)> {
    let m = std::fs::metadata(path).ok()?;
    let key = (m.dev(), m.ino());
    let me = std::process::id();
    for p in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let same = std::fs::metadata(fd.path()).is_ok_and(|f| (f.dev(), f.ino()) == key);
            if !same {
                continue;
            }
            let info = p.path().join("fdinfo").join(fd.file_name());
            let flags = std::fs::read_to_string(info).ok().and_then(|t| {
                let l = t.lines().find(|l| l.starts_with("flags:"))?;
                u32::from_str_radix(l.split_whitespace().nth(1)?, 8).ok()
            });
            if flags.is_some_and(|f| f & libc::O_ACCMODE as u32 != libc::O_RDONLY as u32) {
                let comm = std::fs::read_to_string(p.path().join("comm")).unwrap_or_default();
                return Some((pid, comm.trim().to_string()));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_open_for_writing_elsewhere_is_live() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"x").unwrap();
        assert_eq!(writer_of(&p), None);
        // A child that holds it open for writing (ours are skipped).
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg("exec 3>>\"$0\"; read _")
            .arg(&p)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        // Wait for the state: the child's fd 3 names the file.
        let fd3 = format!("/proc/{pid}/fd/3");
        while std::fs::metadata(&fd3).map(|m| m.ino()).ok()
            != std::fs::metadata(&p).map(|m| m.ino()).ok()
        {
            std::thread::yield_now();
        }
        assert_eq!(writer_of(&p).map(|w| w.0), Some(pid));
        drop(child.stdin.take());
        child.wait().unwrap();
        assert_eq!(writer_of(&p), None);
    }
}
