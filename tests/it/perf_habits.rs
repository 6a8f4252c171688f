//! perf's command-line habits: a command without `--`, no target =
//! system-wide, `-t` without inherit, `-F max`, `-D`, `--control`, `-u`.

use crate::common;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use perfz::format::attr::flags;
use perfz::format::{PerfReader, RecordType};

/// (samples, pids seen) of a recording.
fn samples_and_pids(path: &Path) -> (u64, std::collections::BTreeSet<u32>) {
    let mut r = PerfReader::open(path).unwrap();
    let (mut n, mut pids) = (0, std::collections::BTreeSet::new());
    while let Some((rec, meta)) = r.next_record().unwrap() {
        if rec.header.type_ == RecordType::SAMPLE {
            n += 1;
            if let Ok(Some(s)) = meta.parse_sample(&rec) {
                if let Some(p) = s.pid {
                    pids.insert(p);
                }
            }
        }
    }
    (n, pids)
}

fn attrs(path: &Path) -> Vec<perfz::format::Attr> {
    PerfReader::open(path)
        .unwrap()
        .attrs
        .iter()
        .map(|a| a.attr.clone())
        .collect()
}

#[test]
fn a_command_needs_no_double_dash_and_keeps_its_options() {
    require_recording();
    let dir = tempdir("habits-cmd");
    let out = dir.join("c.data");
    let argv_file = dir.join("argv");
    perfz_ok(&[
        "record",
        "-F",
        "999",
        "-o",
        out.to_str().unwrap(),
        "sh",
        "-c",
        &format!(
            "echo \"$@\" > {}; {} 0.3",
            argv_file.display(),
            workload().display()
        ),
        "sh",
        "-F",
        "10",
        "-g",
        "-o",
        "elsewhere",
    ]);
    assert_eq!(
        std::fs::read_to_string(&argv_file).unwrap().trim(),
        "-F 10 -g -o elsewhere"
    );
    // The command was recorded (0.3 s at 999 Hz: ≈ 300 samples with a CPU
    // of its own; a loaded machine gave 3 test threads 2 CPUs and it 1/3).
    assert!(samples_and_pids(&out).0 > 10);
    assert!(!Path::new("elsewhere").exists());
    // `--` still works.
    perfz_ok(&["record", "-o", out.to_str().unwrap(), "--", "true"]);
}

#[test]
fn no_target_and_no_command_records_every_cpu_until_interrupted() {
    require_recording();
    let dir = tempdir("habits-sysw");
    let out = dir.join("s.data");
    let wl = Command::new(workload()).arg("3").spawn_owned().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args(["record", "-F", "999", "-o"])
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn_owned()
        .unwrap();
    // The workload has run 1 s of CPU time while perfz records.
    wait_cpu_of(wl.id(), 1.0);
    // SAFETY: signals our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    // No command: 128 + SIGINT, as perf (which raises it again).
    assert_eq!(child.wait_within("child").code(), Some(130));
    let wl_pid = wl.id();
    let mut wl = wl;
    let _ = wl.kill();
    let _ = wl.wait();
    let a = attrs(&out);
    assert!(
        a[0].sample_type() & perfz::format::attr::sample_type::CPU != 0,
        "per-CPU recording"
    );
    let (n, pids) = samples_and_pids(&out);
    assert!(n > 100, "{n}");
    assert!(
        pids.contains(&wl_pid),
        "the busy process is in a system-wide recording: {pids:?}"
    );
}

#[test]
fn tid_records_without_inherit_and_f_max_uses_the_kernel_limit() {
    require_recording();
    let dir = tempdir("habits-t");
    let out = dir.join("t.data");
    let mut wl = running_workload("30");
    let tid = wl.id().to_string();
    let args = ["-t", &tid, "-F", "max", "-o", out.to_str().unwrap()];
    record_while_cpu(&args, &[wl.id()], 0.1);
    let _ = wl.kill();
    let _ = wl.wait();
    let a = &attrs(&out)[0];
    assert_eq!(a.flags() & flags::INHERIT, 0, "-t has no inherit, as perf");
    let max: u64 = std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(a.sample_period(), max, "-F max");
    assert!(samples_and_pids(&out).0 > 0);
    // A workload keeps inherit.
    perfz_ok(&["record", "-o", out.to_str().unwrap(), "true"]);
    assert_ne!(attrs(&out)[0].flags() & flags::INHERIT, 0);
}

#[test]
fn delay_starts_sampling_late_and_keeps_the_maps() {
    require_recording();
    let dir = tempdir("habits-delay");
    let wl = workload();
    let late = dir.join("late.data");
    perfz_ok(&[
        "record",
        "-D",
        "500",
        "-F",
        "1000",
        "-o",
        late.to_str().unwrap(),
        wl.to_str().unwrap(),
        "1",
    ]);
    // The first sample comes 500 ms after the exec, by the records' own
    // times (the workload runs for its CPU time, however long that takes).
    let script = run_perf(
        &perf(),
        &[
            "script",
            "--show-task-events",
            "-F",
            "comm,pid,time,event",
            "-i",
            late.to_str().unwrap(),
        ],
    );
    let time_of = |l: &str| -> Option<f64> {
        l.split_whitespace()
            .find(|w| w.ends_with(':'))?
            .trim_end_matches(':')
            .parse()
            .ok()
    };
    let exec = script
        .lines()
        .find(|l| l.contains("PERF_RECORD_COMM exec"))
        .and_then(time_of)
        .unwrap_or_else(|| panic!("no exec in {script}"));
    let first = script
        .lines()
        .find(|l| l.contains("cpu-clock"))
        .and_then(time_of)
        .unwrap_or_else(|| panic!("no sample in {script}"));
    let late_by = first - exec;
    assert!(
        (0.49..1.5).contains(&late_by),
        "-D 500: the first sample comes {late_by:.3} s after the exec"
    );
    assert!(samples_and_pids(&late).0 > 0);
    // The tracking dummy kept the workload's mmaps: perf names its functions.
    let out = run_perf(
        &perf(),
        &["report", "--stdio", "-i", late.to_str().unwrap()],
    );
    assert!(out.contains("perfz_workload_leaf"), "{out}");
    let names = run_perf(&perf(), &["evlist", "-i", late.to_str().unwrap()]);
    assert!(names.contains("dummy"), "{names}");
    // -D -1 without a way to enable is refused.
    let o = perfz(&["record", "-D", "-1", "-o", late.to_str().unwrap(), "true"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--control"));
}

#[test]
fn control_fifo_enables_disables_and_stops() {
    require_recording();
    let dir = tempdir("habits-control");
    let (ctl, ack) = (dir.join("ctl"), dir.join("ack"));
    mkfifo(&ctl);
    mkfifo(&ack);
    let out = dir.join("c.data");
    let mut child = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args(["record", "-D", "-1", "-F", "1000"])
        .arg(format!(
            "--control=fifo:{},{}",
            ctl.display(),
            ack.display()
        ))
        .arg("-o")
        .arg(&out)
        .arg(workload())
        .arg("20")
        .stderr(Stdio::piped())
        .spawn_owned()
        .unwrap();
    let mut c = std::fs::OpenOptions::new().write(true).open(&ctl).unwrap();
    let mut a = std::fs::File::open(&ack).unwrap();
    let mut say = |cmd: &str| {
        c.write_all(format!("{cmd}\n").as_bytes()).unwrap();
        let mut buf = [0u8; 4];
        a.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"ack\n", "{cmd}");
    };
    // Sampling is on for 0.5 s of the workload's CPU time, then off for
    // 0.3 s more of it: states, not wall-clock sleeps.
    let ran = wait_cpu(child.id(), 0.1);
    say("enable");
    let ran = wait_cpu(child.id(), ran + 0.5);
    say("disable");
    wait_cpu(child.id(), ran + 0.3);
    say("ping");
    let t = std::time::Instant::now();
    say("stop");
    let status = child.wait_within("child");
    assert!(status.success());
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "stop ended the 20 s recording"
    );
    // Sampled only between enable and disable: ≈ 0.5 s at 1000 Hz.
    let n = samples_and_pids(&out).0;
    assert!((250..=750).contains(&n), "{n} samples");
}

#[test]
fn uid_records_the_users_processes() {
    require_recording();
    let dir = tempdir("habits-uid");
    let out = dir.join("u.data");
    let mut wl = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(workload())
        .arg("3")
        .spawn_owned()
        .expect("setpriv (util-linux)");
    // Wait for the state, not a time: the workload runs as 65534 once
    // setpriv has exec'd it.
    let exe = std::fs::canonicalize(workload()).unwrap();
    let mut ran = false;
    for _ in 0..3000 {
        if std::fs::read_link(format!("/proc/{}/exe", wl.id())).is_ok_and(|p| p == exe) {
            ran = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(ran, "the workload did not start under setpriv within 30 s");
    // For 0.5 s of the workload's CPU time (≈ 500 samples at 999 Hz),
    // not a wall-clock sleep that gave it a share of a busy machine.
    let args = ["-u", "65534", "-F", "999", "-o", out.to_str().unwrap()];
    record_while_cpu(&args, &[wl.id()], 0.5);
    let pid = wl.id();
    let _ = wl.kill();
    let _ = wl.wait();
    let (n, pids) = samples_and_pids(&out);
    assert!(n > 100, "{n}");
    assert!(pids.contains(&pid), "{pids:?}");
    let o = perfz(&[
        "record",
        "-u",
        "no-such-user-here",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("no such user"));
}

#[test]
fn a_repeated_option_is_taken_as_perf_takes_it() {
    require_recording();
    let dir = tempdir("habits-repeat");
    let out = dir.join("r.data");
    // A flag twice is fine, the last value of an option wins, -e adds up.
    perfz_ok(&[
        "record",
        "-q",
        "-q",
        "-F",
        "10",
        "-F",
        "99",
        "-e",
        "cpu-clock",
        "-e",
        "task-clock",
        "-o",
        out.to_str().unwrap(),
        "true",
    ]);
    let a = attrs(&out);
    assert_eq!(a.len(), 2);
    assert_eq!(a[0].sample_period(), 99);
}
