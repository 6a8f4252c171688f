//! Children that cannot hang a test run: every command a test waits on gets
//! a deadline. A child still running at its deadline is described (its
//! threads' kernel wait channels and stacks, so a hang in CI says where) and
//! killed, and the test fails naming the command. CI's own limit is then
//! never what ends a run.

use std::process::{Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use super::owned::{Owned, SpawnOwned};

/// Seconds a child may run: far above what any test's command takes in a
/// debug build on 2 loaded cores; `PERFZ_TEST_DEADLINE_S` overrides.
fn deadline() -> Duration {
    let s = std::env::var("PERFZ_TEST_DEADLINE_S")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    Duration::from_secs(s)
}

/// What the kernel says each thread of `pid` waits in.
fn describe(pid: u32) -> String {
    let mut s = String::new();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    s += &format!(
        "  cmdline: {}\n",
        String::from_utf8_lossy(&cmdline).replace('\0', " ")
    );
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| d.flatten().map(|e| e.path()).collect::<Vec<_>>())
        .unwrap_or_default();
    for t in tasks {
        let read = |f: &str| std::fs::read_to_string(t.join(f)).unwrap_or_default();
        let stat = read("stat");
        // State is the field after the parenthesized command name.
        let state = stat
            .rsplit_once(") ")
            .map(|(_, r)| r.split(' ').next().unwrap_or("?").to_string())
            .unwrap_or_default();
        s += &format!(
            "  task {} {} state {} wchan {}\n",
            t.file_name().unwrap_or_default().to_string_lossy(),
            read("comm").trim(),
            state,
            read("wchan")
        );
        for l in read("stack").lines().take(8) {
            s += &format!("      {l}\n");
        }
    }
    // User-space stacks too, where gdb is installed (CI has it).
    if let Ok(o) = Command::new("timeout")
        .args(["60", "gdb", "-p", &pid.to_string(), "-batch", "-nx"])
        .args(["-ex", "thread apply all bt 25"])
        .stdin(Stdio::null())
        .output()
    {
        for l in String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| l.starts_with("Thread") || l.starts_with('#'))
            .take(200)
        {
            s += &format!("  {l}\n");
        }
    }
    s
}

/// Kills `pid` at the deadline unless told first (through the channel)
/// that it ended; the thread returns the description taken before the kill.
fn watch(pid: u32, what: String) -> (mpsc::Sender<()>, std::thread::JoinHandle<Option<String>>) {
    let (tx, rx) = mpsc::channel::<()>();
    let limit = deadline();
    let h = std::thread::spawn(move || match rx.recv_timeout(limit) {
        Err(mpsc::RecvTimeoutError::Timeout) => {
            let d = format!(
                "{what} still ran after {} s (a hang):\n{}",
                limit.as_secs(),
                describe(pid)
            );
            // SAFETY: kill(2) takes no pointers. The pid is our child's; it
            // is reaped only once it exits, so it could name another process
            // only if the child ended in the instant the deadline passed.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            Some(d)
        }
        _ => None,
    });
    (tx, h)
}

fn name(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// `wait` (which reaps child `pid`) under the watch: its result, or the
/// description of the hang it was killed in.
fn bounded<T>(
    pid: u32,
    what: &str,
    wait: impl FnOnce() -> std::io::Result<T>,
) -> Result<T, String> {
    let (tx, h) = watch(pid, what.to_string());
    let r = wait();
    let _ = tx.send(());
    if let Some(hang) = h.join().unwrap() {
        return Err(hang);
    }
    Ok(r.unwrap_or_else(|e| panic!("waiting for {what}: {e}")))
}

fn spawn(cmd: &mut Command, what: &str) -> Owned {
    cmd.spawn_owned()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e} (is it installed?)"))
}

/// `Command::output` and `status` with a deadline. `output_within` pipes
/// stdout and stderr whatever was set (a caller that sends stdout to a file
/// spawns and uses [`WaitWithin::output_within`]).
pub trait Within {
    fn output_within(&mut self) -> Output;
    fn status_within(&mut self) -> ExitStatus;
    /// The status, or what the child was waiting in when its deadline
    /// passed (it is killed): for a caller that may run it again.
    fn status_or_hang(&mut self) -> Result<ExitStatus, String>;
}

impl Within for Command {
    fn output_within(&mut self) -> Output {
        let what = name(self);
        let child = spawn(
            self.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
            &what,
        );
        child.output_within(&what)
    }

    fn status_within(&mut self) -> ExitStatus {
        self.status_or_hang()
            .unwrap_or_else(|hang| panic!("{hang}"))
    }

    fn status_or_hang(&mut self) -> Result<ExitStatus, String> {
        let what = name(self);
        let mut child = spawn(self, &what);
        bounded(child.id(), &what, || child.wait())
    }
}

/// [`Owned`]'s `wait` and `wait_with_output` with a deadline.
pub trait WaitWithin {
    fn wait_within(&mut self, what: &str) -> ExitStatus;
    fn output_within(self, what: &str) -> Output;
}

impl WaitWithin for Owned {
    fn wait_within(&mut self, what: &str) -> ExitStatus {
        bounded(self.id(), what, || self.wait()).unwrap_or_else(|hang| panic!("{hang}"))
    }

    fn output_within(self, what: &str) -> Output {
        let pid = self.id();
        bounded(pid, what, || self.wait_with_output()).unwrap_or_else(|hang| panic!("{hang}"))
    }
}
