//! The guard every process a test starts is owned by (common/owned.rs,
//! issue 48): a test that fails ends and reaps its children as it unwinds.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::owned::GRACE;
use crate::common::SpawnOwned;

/// Whether `pid` names a process (a zombie too): kill(pid, 0).
fn exists(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[test]
fn a_panicking_test_ends_and_reaps_its_child_as_it_unwinds() {
    let mut pid = 0;
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let child = Command::new("sleep").arg("1000").spawn_owned().unwrap();
        pid = child.id() as i32;
        assert!(exists(pid));
        panic!("the test fails before it ends its child");
    }));
    assert!(unwound.is_err());
    assert!(pid > 0);
    // Gone, zombie included: reaped by the guard, not at the binary's exit.
    assert!(!exists(pid), "sleep {pid} outlived its guard");
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
}

#[test]
fn a_child_deaf_to_sigterm_is_killed_after_the_grace() {
    let child = Command::new("sh")
        .args(["-c", "trap '' TERM; exec sleep 1000"])
        .spawn_owned()
        .unwrap();
    let pid = child.id() as i32;
    // The trap is set once sh has exec'd sleep (which keeps it).
    let comm = format!("/proc/{pid}/comm");
    let start = Instant::now();
    while std::fs::read_to_string(&comm).is_ok_and(|c| c.trim() != "sleep") {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "sh did not exec sleep"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let start = Instant::now();
    drop(child);
    assert!(start.elapsed() >= GRACE, "SIGTERM ended it: not deaf");
    assert!(!exists(pid), "sleep {pid} outlived its guard");
}

#[test]
fn a_child_waited_for_and_its_output_are_as_without_the_guard() {
    let o = Command::new("sh")
        .args(["-c", "echo out; echo err >&2; exit 3"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn_owned()
        .unwrap()
        .wait_with_output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(
        (&o.stdout[..], &o.stderr[..]),
        (&b"out\n"[..], &b"err\n"[..])
    );
    let (status, _) = Command::new("true").spawn_owned().unwrap().wait4().unwrap();
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
}
