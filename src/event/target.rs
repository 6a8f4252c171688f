//! What to record: a workload perfz starts, existing processes or threads, or
//! whole CPUs.

use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::thread::JoinHandle;

/// What a session records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `-- cmd args...`: bytes, as execve takes them.
    Workload(Vec<OsString>),
    /// `-p PID[,PID]`: every thread of these processes.
    Pids(Vec<i32>),
    /// `-t TID[,TID]`.
    Tids(Vec<i32>),
    /// `-a` (all online CPUs) or `-C LIST`.
    Cpus(Vec<u32>),
}

impl Target {
    /// Whether the events count per CPU for everything running there.
    pub fn is_system_wide(&self) -> bool {
        matches!(self, Target::Cpus(_))
    }
}

/// The threads of process `pid`, from /proc/PID/task.
pub fn threads_of(pid: i32) -> io::Result<Vec<i32>> {
    let dir = std::fs::read_dir(format!("/proc/{pid}/task")).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("no process with pid {pid}"),
            )
        } else {
            e
        }
    })?;
    let mut tids: Vec<i32> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    Ok(tids)
}

/// (pid, tid) of every thread `target` covers when it starts: `-p`'s
/// processes' (`tgids`), `-t`'s, and with every online CPU (`-a`) all of
/// the machine's; none for a workload (or some CPUs: their threads may
/// run elsewhere).
pub fn threads_at_start(target: &Target, tgids: &[i32]) -> Vec<(u32, u32)> {
    let pids: Vec<i32> = match target {
        Target::Workload(_) => return Vec::new(),
        Target::Tids(list) => {
            let tgid = |t: i32| -> Option<(u32, u32)> {
                let s = std::fs::read_to_string(format!("/proc/{t}/status")).ok()?;
                let l = s.lines().find_map(|l| l.strip_prefix("Tgid:"))?;
                Some((l.trim().parse().ok()?, t as u32))
            };
            return list.iter().filter_map(|&t| tgid(t)).collect();
        }
        Target::Pids(_) => tgids.to_vec(),
        Target::Cpus(list) => {
            if crate::event::cpus::online().map_or(true, |o| list.len() < o.len()) {
                return Vec::new();
            }
            std::fs::read_dir("/proc")
                .map(|d| {
                    d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                        .collect()
                })
                .unwrap_or_default()
        }
    };
    let of = |p: i32| threads_of(p).unwrap_or_default().into_iter();
    pids.into_iter()
        .flat_map(|p| of(p).map(move |t| (p as u32, t as u32)))
        .collect()
}

/// The processes whose real uid is `uid` (perf's `-u`), from /proc.
pub fn pids_of_user(uid: u32) -> io::Result<Vec<i32>> {
    let me = std::process::id() as i32;
    let mut pids: Vec<i32> = std::fs::read_dir("/proc")?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&p| p != me)
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/status")).is_ok_and(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Uid:"))
                    .and_then(|l| l.split_whitespace().next()?.parse::<u32>().ok())
                    == Some(uid)
            })
        })
        // Kernel threads have no user memory to sample.
        .filter(|p| std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| !c.is_empty()))
        .collect();
    pids.sort_unstable();
    Ok(pids)
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two fds into the array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both fds are new and ours.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A workload forked and held just before `exec`, so events can be opened on
/// its pid with `enable_on_exec` before it runs a single instruction of the
/// command (perf's scheme).
pub struct Workload {
    /// The forked process's pid (it waits before its exec until told to go).
    pub pid: i32,
    go: std::fs::File,
    spawn: JoinHandle<io::Result<Child>>,
}

impl Workload {
    /// Forks `argv` (its command found at `path`, by [`resolve_command`]:
    /// the exec after the go does not search `$PATH` while the events run);
    /// `stdout_to_stderr`: its standard output is our standard error.
    pub fn prepare(
        path: &std::path::Path,
        argv: &[OsString],
        stdout_to_stderr: bool,
    ) -> io::Result<Workload> {
        let (pid_r, pid_w) = pipe()?;
        let (go_r, go_w) = pipe()?;
        let mut cmd = Command::new(path);
        cmd.arg0(&argv[0]).args(&argv[1..]);
        if stdout_to_stderr {
            use std::os::fd::AsFd;
            cmd.stdout(io::stderr().as_fd().try_clone_to_owned()?);
        }
        let (pid_w_raw, go_r_raw) = (pid_w.as_raw_fd(), go_r.as_raw_fd());
        let (pid_r_raw, go_w_raw) = (pid_r.as_raw_fd(), go_w.as_raw_fd());
        // SAFETY: the closure runs in the forked child before exec and only
        // makes async-signal-safe calls (getpid, write, read) on fds that stay
        // open until exec (the parent keeps its copies alive until `start`).
        unsafe {
            cmd.pre_exec(move || {
                // The child's copies of the parent's ends: without closing
                // go_w here, a parent that gives up could never make our read
                // see EOF.
                libc::close(go_w_raw);
                libc::close(pid_r_raw);
                let pid = libc::getpid();
                libc::write(pid_w_raw, (&pid as *const i32).cast(), 4);
                let mut b = 0u8;
                if libc::read(go_r_raw, (&mut b as *mut u8).cast(), 1) != 1 || b != b'g' {
                    return Err(io::Error::other(
                        "perfz gave up before starting the workload",
                    ));
                }
                Ok(())
            });
        }
        // std's spawn waits until exec succeeds or fails, which here is after
        // we say go; so it runs on a thread of its own.
        let spawn = std::thread::spawn(move || {
            let r = cmd.spawn();
            drop((pid_w, go_r));
            r
        });
        let mut buf = [0u8; 4];
        let mut f = std::fs::File::from(pid_r);
        if f.read_exact(&mut buf).is_err() {
            // The fork never happened: spawn failed early (e.g. not found).
            return Err(spawn
                .join()
                .expect("spawn thread")
                .err()
                .unwrap_or_else(|| io::Error::other("workload vanished")));
        }
        Ok(Workload {
            pid: i32::from_ne_bytes(buf),
            go: std::fs::File::from(go_w),
            spawn,
        })
    }

    /// Lets the workload exec. Errors if the command cannot be executed.
    pub fn start(mut self) -> io::Result<Child> {
        self.go.write_all(b"g")?;
        drop(self.go);
        self.spawn
            .join()
            .map_err(|_| io::Error::other("spawn thread panicked"))?
    }

    /// Gives up: the child exits without running the command.
    pub fn abort(mut self) {
        let _ = self.go.write_all(b"n");
        drop(self.go);
        let _ = self.spawn.join();
    }
}

/// Finds `cmd` as `execvp` would (a name with a `/` as is, otherwise in
/// `$PATH`), so a command that cannot run is refused before anything is
/// opened or written.
pub fn resolve_command(cmd: &OsStr) -> io::Result<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &std::path::Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if cmd.is_empty() {
        return Err(io::Error::new(io::ErrorKind::NotFound, "empty command"));
    }
    if cmd.as_bytes().contains(&b'/') {
        let p = std::path::PathBuf::from(cmd);
        return match std::fs::metadata(&p) {
            Err(e) => Err(e),
            Ok(_) if runnable(&p) => Ok(p),
            Ok(_) => Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "not an executable file",
            )),
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|d| d.join(cmd))
        .find(|p| runnable(p))
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "command not found (not a file with execute permission in $PATH)",
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workload_runs_the_resolved_path_under_the_name_it_was_given() {
        // The name is on no $PATH: only the resolved path can run, and the
        // command sees the name it was given as its $0.
        let argv: Vec<OsString> = ["perfz-test-name", "-c", r#"test "$0" = perfz-test-name"#]
            .map(OsString::from)
            .to_vec();
        let sh = resolve_command("sh".as_ref()).unwrap();
        let w = Workload::prepare(&sh, &argv, false).unwrap();
        let status = w.start().unwrap().wait().unwrap();
        assert!(status.success(), "{status}");
    }

    #[test]
    fn a_relative_command_resolves_through_path_and_a_slash_as_given() {
        let resolve = |c: &str| resolve_command(c.as_ref());
        assert!(resolve("sh").unwrap().is_absolute());
        assert_eq!(resolve("/bin/sh").unwrap(), std::path::Path::new("/bin/sh"));
        assert!(resolve("perfz-no-such-command").is_err());
    }
}
