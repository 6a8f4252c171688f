//! The owner (real uid and gid) of the tasks samples come from, for `uid`
//! and `gid` filters: perf's BPF program asks the kernel for the current
//! task's at the sample; the push path, later, reads `/proc/PID/status`
//! the first time a pid is seen, and again at its COMM (an exec may
//! change its owner) and FORK (a pid reused) records, and keeps it.
//!
//! How it can be wrong: the owner is read when the push path sees the
//! task, after its samples were taken. A task gone before its pid is read
//! (a short-lived process whose samples and exit are drained after it was
//! reaped) has no owner, and its samples fail `uid`/`gid` comparisons; a
//! task that changes owner (setuid, then exec: `setpriv`, `su`) before it
//! is read has its earlier samples counted as its new owner's; one that
//! changes owner without an exec keeps the owner read first until its
//! next COMM.

use std::collections::HashMap;

/// pid → (uid, gid), `None` where the task was gone.
#[derive(Clone, Debug, Default)]
pub struct Owners {
    known: HashMap<u32, Option<(u32, u32)>>,
}

impl Owners {
    /// The owner of `pid`, read once.
    pub fn of(&mut self, pid: u32) -> Option<(u32, u32)> {
        *self.known.entry(pid).or_insert_with(|| read(pid))
    }

    /// `pid` was seen to exec or start: its owner is read now.
    pub fn renew(&mut self, pid: u32) {
        self.known.insert(pid, read(pid));
    }
}

/// The real uid and gid of `pid`, from `/proc/PID/status`.
fn read(pid: u32) -> Option<(u32, u32)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let first = |key: &str| -> Option<u32> {
        let line = s.lines().find(|l| l.starts_with(key))?;
        line[key.len()..].split_whitespace().next()?.parse().ok()
    };
    Some((first("Uid:")?, first("Gid:")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_own_owner_is_read() {
        let mut o = Owners::default();
        // SAFETY: getuid and getgid cannot fail and touch no memory of ours.
        let me = unsafe { (libc::getuid(), libc::getgid()) };
        assert_eq!(o.of(std::process::id()), Some(me));
        assert_eq!(o.of(u32::MAX), None);
    }
}
