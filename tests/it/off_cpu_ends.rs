//! `--off-cpu` at the edges of a recording and beside other recorders
//! (issue 41): a thread off CPU through the whole recording, threads off
//! CPU when `-p` attaches, two recorders' context-switch samples, and the
//! options it refuses.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::*;

/// Each thread's exported nanoseconds (on and off CPU), by its name.
fn per_thread(data: &Path) -> std::collections::BTreeMap<String, f64> {
    let o = perfz_ok(&["export", data.to_str().unwrap()]);
    let mut t = std::collections::BTreeMap::new();
    for l in String::from_utf8_lossy(&o.stdout).lines() {
        let (Some((comm, _)), Some((_, n))) = (l.split_once(';'), l.rsplit_once(' ')) else {
            continue;
        };
        *t.entry(comm.to_string()).or_default() += n.parse::<f64>().unwrap();
    }
    t
}

#[test]
fn every_thread_of_an_attached_process_adds_up_to_the_recordings_length() {
    require_recording();
    let dir = tempdir("off-cpu-attach");
    // Three threads: main (burns, sleeps, waits on the pipe), feeder
    // (mostly blocked in read: off CPU when -p attaches), sleeper (blocked
    // for the whole recording).
    let mut w = Command::new(offcpu_workload())
        // Long enough for three recordings of a second (with_the_cpus_ours).
        .args(["10", "10", "libc", "sleeper"])
        .stderr(Stdio::null())
        .spawn_owned()
        .expect("the workload starts");
    let task = format!("/proc/{}/task", w.id());
    let started = std::time::Instant::now();
    while std::fs::read_dir(&task).map_or(0, |d| d.count()) < 3 {
        assert!(started.elapsed().as_secs() < 10, "the workload's threads");
        std::thread::yield_now();
    }
    let data = dir.join("p.data");
    let pid = w.id().to_string();
    let rec = ["record", "--off-cpu", "-g", "-p", &pid, "-o"];
    let mut argv = rec.to_vec();
    argv.extend([data.to_str().unwrap(), "--", "sleep", "1"]);
    with_the_cpus_ours("-p", || perfz_ok(&argv));
    let _ = w.kill();
    let _ = w.wait();
    let t = per_thread(&data);
    assert_eq!(t.len(), 3, "three threads: {t:?}");
    // The recording lasts `sleep 1`: each thread's wall time in it.
    for (name, ns) in &t {
        assert!(
            (0.9e9..1.2e9).contains(ns),
            "{name}: {:.0} ms on and off CPU in a recording of 1 s: {t:?}",
            ns / 1e6
        );
    }
    assert!(t.get("sleeper").is_some_and(|&ns| ns > 0.9e9), "{t:?}");
}

/// Runs `perf report` of `perf` on `data`: what it printed, and whether
/// it failed to process a record.
fn perf_report(perf: &Path, data: &Path) -> (String, bool) {
    let o = Command::new("timeout")
        .args(["--kill-after=5", "60"])
        .arg(perf)
        .args(["report", "--stdio", "--sort", "comm", "-i"])
        .arg(data)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    let failed = !o.status.success() || err.contains("failed to process");
    (
        String::from_utf8_lossy(&o.stdout).into_owned() + &err,
        failed,
    )
}

#[test]
fn two_system_wide_recordings_at_once_each_stay_readable_by_perf() {
    require_recording();
    let dir = tempdir("off-cpu-two");
    let (a, b) = (dir.join("a.data"), dir.join("b.data"));
    let first = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args(["record", "--off-cpu", "-a", "-o", a.to_str().unwrap()])
        .args(["--", "sleep", "1.5"])
        .stderr(Stdio::piped())
        .spawn_owned()
        .unwrap();
    // The second opens its events while the first records.
    let second = perfz_ok(&[
        "record",
        "--off-cpu",
        "-a",
        "-o",
        b.to_str().unwrap(),
        "--",
        "sleep",
        "0.5",
    ]);
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success());
    let said = [&first.stderr, &second.stderr].map(|e| String::from_utf8_lossy(e).into_owned());
    for (data, said) in [(&a, &said[0]), (&b, &said[1])] {
        for (name, perf) in perfs() {
            let (text, failed) = perf_report(&perf, data);
            assert!(
                !failed && text.contains("of event 'cpu-clock'") && text.contains("offcpu-time"),
                "perf {name} on {}: {text}\nperfz said: {said}",
                data.display()
            );
        }
    }
}

#[test]
fn an_overflowing_threshold_and_a_second_context_switch_event_are_refused() {
    let out = tempdir("off-cpu-refused").join("x.data");
    let out = out.to_str().unwrap();
    let o = perfz(&[
        "record",
        "--off-cpu",
        "--off-cpu-thresh",
        "18446744073710",
        "-o",
        out,
        "--",
        "true",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("--off-cpu-thresh"),
        "{err}"
    );
    for e in ["context-switches", "cs"] {
        let o = perfz(&["record", "--off-cpu", "-e", e, "-o", out, "--", "true"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.contains("cannot be told apart"),
            "-e {e}: {err}"
        );
    }
}
