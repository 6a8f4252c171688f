//! `perfz record --off-cpu` (issue 34): where threads wait, by stack, as
//! perf's `offcpu-time` event, read by perf report (6.1 and 6.12) and
//! exported in wall-clock time. The oracle for the time split is the
//! workload's own account of it (its clock around each part), not perfz.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::common::*;

#[path = "off_cpu_ends.rs"]
mod ends;

/// What tests/workload/offcpu.c measured: wall, burn, doze, wait_pipe (ms).
fn own_split(stderr: &str) -> [f64; 4] {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("workload: pid"))
        .unwrap_or_else(|| panic!("the workload's account is missing: {stderr}"));
    let w: Vec<&str> = line.split_whitespace().collect();
    let after = |k: &str| -> f64 {
        let i = w.iter().position(|x| *x == k).expect(k);
        w[i + 1].parse().unwrap()
    };
    [
        after("wall"),
        after("burn"),
        after("doze"),
        after("wait_pipe"),
    ]
}

/// The workload's pid, from its account.
fn own_pid(stderr: &str) -> u32 {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("workload: pid"))
        .unwrap_or_else(|| panic!("the workload's account is missing: {stderr}"));
    line.split_whitespace().nth(2).unwrap().parse().unwrap()
}

/// Records the workload with `args` for 1.5 s; its account, and the file.
fn record(dir: &Path, name: &str, args: &[&str]) -> ([f64; 4], std::path::PathBuf) {
    let (err, out) = record_said(dir, name, args);
    (own_split(&err), out)
}

/// [`record`]: what perfz and the workload said, and the file.
fn record_said(dir: &Path, name: &str, args: &[&str]) -> (String, std::path::PathBuf) {
    require_recording();
    let out = dir.join(name);
    let w = offcpu_workload();
    let mut argv = vec!["record", "-o", out.to_str().unwrap()];
    argv.extend_from_slice(args);
    argv.extend_from_slice(&["--", w.to_str().unwrap(), "1.5", "10"]);
    let o = with_the_cpus_ours(name, || perfz_ok(&argv));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("waits written as offcpu-time samples"),
        "{err}"
    );
    // Shown with a failure: what the recorder said (lost, waits).
    println!("{name}: {err}");
    (err.into_owned(), out)
}

/// The folded lines of process `pid` (exported with `--pid`), its name
/// and pid taken off.
fn of_pid(folded: &str, pid: u32) -> String {
    let me = format!("-{pid}");
    folded
        .lines()
        .filter_map(|l| l.split_once(';'))
        .filter(|(comm, _)| comm.ends_with(&me))
        .map(|(_, l)| format!("offcpu;{l}\n"))
        .collect()
}

#[test]
fn system_wide_and_attached_recordings_split_the_wait_as_the_program_does() {
    let dir = tempdir("off-cpu-wide");
    // -a: every thread on the machine (other tests' too); the workload's
    // own picked by its pid.
    let (err, data) = record_said(&dir, "a.data", &["--off-cpu", "-g", "-a"]);
    let (own, pid) = (own_split(&err), own_pid(&err));
    let o = perfz_ok(&["export", "--pid", data.to_str().unwrap()]);
    let folded = of_pid(&String::from_utf8_lossy(&o.stdout), pid);
    check_shares(own, main_thread_split(&folded), "-a", &folded);
    // -p: attached to the running workload for a second of its three.
    let w = std::process::Command::new(offcpu_workload())
        .args(["3", "10"])
        .stderr(std::process::Stdio::piped())
        .spawn_owned()
        .expect("the workload starts");
    let data = dir.join("p.data");
    let pid = w.id().to_string();
    perfz_ok(&[
        "record",
        "--off-cpu",
        "-g",
        "-p",
        &pid,
        "-o",
        data.to_str().unwrap(),
        "--",
        "sleep",
        "1",
    ]);
    let done = w.wait_with_output().unwrap();
    let own = own_split(&String::from_utf8_lossy(&done.stderr));
    let o = perfz_ok(&["export", data.to_str().unwrap()]);
    let folded = String::from_utf8_lossy(&o.stdout);
    let got = main_thread_split(&folded);
    // A second of its rounds: its shares, not its wall time.
    for (i, part) in ["burn", "doze", "wait_pipe"].iter().enumerate() {
        let (want, share) = (own[i + 1] / own[0], got[i + 1] / got[0]);
        assert!(
            (share - want).abs() < 0.1,
            "-p: {part} is {share:.3} of the main thread's time, {want:.3} by its own clock:\n{}",
            heaviest(&folded)
        );
    }
    assert!(got[0] > 0.5e9, "-p: {:.0} ms recorded", got[0] / 1e6);
}

/// The main thread's exported nanoseconds: all, and in burn, doze, wait_pipe.
fn main_thread_split(folded: &str) -> [f64; 4] {
    let mut t = [0f64; 4];
    for l in folded.lines() {
        let Some((stack, n)) = l.rsplit_once(' ') else {
            continue;
        };
        if !stack.contains(";main") {
            continue;
        }
        let n: f64 = n.parse().unwrap();
        t[0] += n;
        for (i, f) in [";burn", ";doze", ";wait_pipe"].iter().enumerate() {
            if stack.contains(f) {
                t[i + 1] += n;
            }
        }
    }
    t
}

/// The main thread's heaviest stacks, for a failure's message.
fn heaviest(folded: &str) -> String {
    let mut v: Vec<(f64, &str)> = folded
        .lines()
        .filter_map(|l| {
            let (s, n) = l.rsplit_once(' ')?;
            Some((n.parse().ok()?, s))
        })
        .filter(|(_, s)| s.contains(";main"))
        .collect();
    v.sort_by(|a, b| b.0.total_cmp(&a.0));
    v.iter()
        .take(12)
        .map(|(n, s)| format!("  {:.1} ms {s}\n", n / 1e6))
        .collect()
}

fn check_shares(own: [f64; 4], got: [f64; 4], what: &str, folded: &str) {
    // The export's total is the main thread's wall time, within what the
    // workload spends outside its loop and a wait open at the end.
    let total = got[0] / 1e6;
    assert!(
        (total - own[0]).abs() < 0.15 * own[0],
        "{what}: the main thread's on- and off-CPU time add up to {total:.1} ms, its wall time was {:.1} ms; the heaviest stacks:\n{}",
        own[0],
        heaviest(folded)
    );
    for (i, part) in ["burn", "doze", "wait_pipe"].iter().enumerate() {
        let want = own[i + 1] / own[0];
        let share = got[i + 1] / got[0];
        assert!(
            (share - want).abs() < 0.1,
            "{what}: {part} is {share:.3} of the main thread's time in the export, {want:.3} by its own clock; the heaviest stacks:\n{}",
            heaviest(folded)
        );
    }
}

#[test]
fn each_part_of_the_main_threads_wall_time_is_where_the_program_measured_it() {
    let dir = tempdir("off-cpu-split");
    for (name, args) in [
        ("fp.data", &["--off-cpu", "-g"][..]),
        ("dwarf.data", &["--off-cpu", "--call-graph", "dwarf"][..]),
        ("threads.data", &["--off-cpu", "-g", "--threads=2"][..]),
    ] {
        let (own, data) = record(&dir, name, args);
        let o = perfz_ok(&["export", data.to_str().unwrap()]);
        let folded = String::from_utf8_lossy(&o.stdout);
        check_shares(own, main_thread_split(&folded), name, &folded);
        // One side alone: doze and wait_pipe are off CPU, burn on it.
        let off = perfz_ok(&["export", "--off-cpu-only", data.to_str().unwrap()]);
        let off = main_thread_split(&String::from_utf8_lossy(&off.stdout));
        assert!(
            off[2] > 0.8 * own[2] * 1e6 && off[3] > 0.8 * own[3] * 1e6,
            "{name}: {off:?} {own:?}"
        );
        let on = perfz_ok(&["export", "--on-cpu-only", data.to_str().unwrap()]);
        let on = main_thread_split(&String::from_utf8_lossy(&on.stdout));
        assert!(
            on[2] + on[3] < 0.1 * on[0],
            "{name}: on-CPU time in sleeps {on:?}"
        );
    }
}

/// perf report's children view of the offcpu-time event: symbol -> %.
fn offcpu_children(perf: &Path, data: &Path) -> BTreeMap<String, f64> {
    let text = run_perf(
        perf,
        &[
            "report",
            "-i",
            data.to_str().unwrap(),
            "--stdio",
            "--children",
            "--sort",
            "sym",
            "-g",
            "none",
        ],
    );
    let section = text
        .split("of event '")
        .find(|s| s.starts_with("offcpu-time'"))
        .unwrap_or_else(|| {
            panic!(
                "{}: no offcpu-time event in perf report:\n{text}",
                perf.display()
            )
        });
    section
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let pct = f.first()?.strip_suffix('%')?.parse().ok()?;
            Some((f.last()?.to_string(), pct))
        })
        .collect()
}

#[test]
fn perf_report_lists_the_sleeping_and_blocking_functions_under_offcpu_time() {
    let dir = tempdir("off-cpu-report");
    let (own, data) = record(&dir, "fp.data", &["--off-cpu", "-g"]);
    for (name, perf) in perfs() {
        let c = offcpu_children(&perf, &data);
        for f in ["doze", "wait_pipe"] {
            let pct = c.get(f).copied().unwrap_or(0.0);
            assert!(
                pct > 5.0,
                "perf {name}: {f} has {pct} % of offcpu-time: {c:?} (own {own:?})"
            );
        }
        // burn never waits but when it is preempted: a small share.
        let burn = c.get("burn").copied().unwrap_or(0.0);
        assert!(
            burn < c["doze"],
            "perf {name}: burn {burn} % of offcpu-time: {c:?}"
        );
    }
}

#[test]
fn pprof_carries_on_and_off_cpu_nanoseconds_as_two_sample_types() {
    let dir = tempdir("off-cpu-pprof");
    let (_, data) = record(&dir, "fp.data", &["--off-cpu", "-g"]);
    let profile = dir.join("p.pb.gz");
    perfz_ok(&[
        "export",
        "--format",
        "pprof",
        "-o",
        profile.to_str().unwrap(),
        data.to_str().unwrap(),
    ]);
    let top = |index: &str| -> String {
        let o = Command::new("go")
            .args([
                "tool",
                "pprof",
                "-top",
                "-nodefraction=0",
                &format!("-sample_index={index}"),
            ])
            .arg(&profile)
            .output()
            .unwrap_or_else(|e| panic!("go tool pprof ({e}): apt-get install -y golang-go"));
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let off = top("off-cpu");
    assert!(
        off.contains("doze") || off.contains("clock_nanosleep"),
        "{off}"
    );
    let cpu = top("cpu");
    let first = cpu
        .lines()
        .skip_while(|l| !l.contains("flat%"))
        .nth(1)
        .unwrap_or("");
    assert!(
        first.contains("burn"),
        "the on-CPU profile's top function is not burn:\n{cpu}"
    );
}
