//! What `perfz recover` must not touch: a device or FIFO (it would copy
//! without end), and a file still being written — a process holds it open
//! for writing (a recorder that has not finished) — which it would replace
//! under the writer.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::format::{FormatError, PerfReader};

/// How long recover watches its input for growth before touching it.
const GROWTH_WATCH: std::time::Duration = std::time::Duration::from_millis(200);

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

/// A file's size and modification time.
fn stamp(f: &Path) -> Option<(u64, std::time::SystemTime)> {
    let m = std::fs::metadata(f).ok()?;
    Some((m.len(), m.modified().ok()?))
}

/// Refuses what recover must not touch: anything but a regular file or a
/// directory (a device, a FIFO), and a recording a process is still
/// writing. Returns the path's metadata otherwise.
pub(super) fn refuse_unsafe(path: &Path) -> Result<std::fs::Metadata, FormatError> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_dir() && !meta.is_file() {
        return Err(FormatError::Unsupported(
            "not a regular file (a device or FIFO): recover repairs perf.data files \
             and --threads directories; copy the recording to a file first"
                .into(),
        ));
    }
    let files = if meta.is_dir() {
        let mut v = vec![path.join("data")];
        v.extend(PerfReader::data_streams(path)?.into_iter().map(|(_, p)| p));
        v
    } else {
        vec![path.to_path_buf()]
    };
    if let Some((f, (pid, comm))) = files.iter().find_map(|f| Some((f, writer_of(f)?))) {
        return Err(FormatError::Unsupported(format!(
            "{} is still being written by process {pid} ({comm}): recover a recording once \
             its recorder has ended (or is killed); it is left untouched",
            f.display()
        )));
    }
    // A writer /proc does not show (another pid namespace, or one that opens
    // the file for each append): the file changes while watched.
    let before: Vec<_> = files.iter().map(|f| stamp(f)).collect();
    std::thread::sleep(GROWTH_WATCH);
    for (f, was) in files.iter().zip(before) {
        let now = stamp(f);
        if now != was {
            return Err(FormatError::Unsupported(format!(
                "{} changed while recover watched it for {} ms ({} bytes, then {}): something \
                 is still writing it; recover a recording once its recorder has ended; it is \
                 left untouched",
                f.display(),
                GROWTH_WATCH.as_millis(),
                was.map_or(0, |s| s.0),
                now.map_or(0, |s| s.0),
            )));
        }
    }
    Ok(meta)
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
