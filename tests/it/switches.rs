//! `--switch-output` against kill -9, a moved output and many switches
//! (issue 31): every name shows a whole output, the current one included; an
//! output moved away is finished where it went while the recording goes on;
//! each output's side band holds the processes live at its start once, not
//! every earlier output's again.

use crate::common;
use crate::hostile_surroundings::{outputs, wait_until};

use std::path::Path;
use std::process::Command;

use common::*;

/// Every output under a name in `dir` (the sealed `base.<timestamp>` ones
/// and the current `base`) opens in perf with exactly the samples perfz's
/// reader finds; how many there are.
fn every_name_opens(dir: &Path, base: &str, why: &str) -> usize {
    let mut named = outputs(dir, &format!("{base}."));
    let current = dir.join(base);
    if current.exists() {
        named.push(current);
    }
    for f in &named {
        let ours = our_sample_count(f);
        let theirs = try_perf_sample_count(&perf(), f)
            .unwrap_or_else(|| panic!("{why}: perf cannot read {}", f.display()));
        assert_eq!(theirs, ours, "{why}: {}", f.display());
    }
    named.len()
}

fn signal(child: &Owned, sig: i32) {
    // SAFETY: signals our own child.
    unsafe { libc::kill(child.id() as i32, sig) };
}

/// kill -9 while a `--threads` switch is under way (its hidden next
/// directory exists), at varying points after that: every output under a
/// name, the current OUTPUT too, opens in perf with exactly the samples
/// perfz's reader finds. (The next `data` used to be a bare header while the
/// data.N files already took records.)
#[test]
fn a_threads_switch_leaves_every_name_whole_after_kill_9() {
    require_recording();
    perf(); // fails with the fix where perf is missing
    let top = tempdir("switch-threads-kill");
    for round in 0..8 {
        let dir = top.join(format!("r{round}"));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("t.data");
        let mut child = Command::new(env!("CARGO_BIN_EXE_perfz"))
            .args(["record", "-q", "--threads", "--switch-output", "-g", "-o"])
            .arg(&out)
            .arg("--")
            .arg(workload())
            .args(["30", "2"])
            .spawn_owned()
            .unwrap();
        wait_until("the recording's start", || out.join("data").exists());
        signal(&child, libc::SIGUSR2);
        wait_until("a switch under way", || {
            !outputs(&dir, ".perfz-next-").is_empty() || !outputs(&dir, "t.data.").is_empty()
        });
        for _ in 0..round * 400 {
            std::thread::yield_now();
        }
        child.kill().unwrap();
        child.wait_within("perfz record");
        let n = every_name_opens(&dir, "t.data", &format!("round {round}"));
        assert!(n >= 1, "round {round}: no output under a name");
    }
    let _ = std::fs::remove_dir_all(&top);
}

/// The output moved away while it is written, then a switch: perf's
/// behaviour (a warning, and the recording goes on in a new OUTPUT), serial
/// and `--threads`. The moved output is finished where it went and opens
/// in perf.
#[test]
fn a_moved_output_is_finished_where_it_went_and_the_recording_goes_on() {
    require_recording();
    perf();
    for threads in [false, true] {
        let dir = tempdir(if threads {
            "switch-moved-thr"
        } else {
            "switch-moved"
        });
        let out = dir.join("m.data");
        let mut args = vec!["--switch-output", "-g"];
        if threads {
            args.push("--threads");
        }
        let child = spawn_record(&args, &out, "30");
        let started = if threads {
            out.join("data")
        } else {
            out.clone()
        };
        wait_until("the recording's start", || started.exists());
        // Samples to find in the moved output: the workload has run a while
        // (its CPU time, a state however loaded the machine is).
        wait_cpu(child.id(), 0.1);
        let moved = dir.join("moved.data");
        std::fs::rename(&out, &moved).unwrap();
        signal(&child, libc::SIGUSR2);
        wait_until("the next output", || started.exists());
        // Still recording: a second switch seals the new output.
        signal(&child, libc::SIGUSR2);
        wait_until("the second switch", || !outputs(&dir, "m.data.").is_empty());
        signal(&child, libc::SIGINT);
        let o = child.output_within("perfz record");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            o.status.code(),
            Some(STOPPED_WITH_COMMAND),
            "threads {threads}: {stderr}"
        );
        assert!(
            stderr.contains("was moved or deleted"),
            "threads {threads}: {stderr}"
        );
        let ours = our_sample_count(&moved);
        assert!(
            ours > 0,
            "threads {threads}: the moved output holds no sample"
        );
        assert_eq!(
            perf_sample_count(&perf(), &moved),
            ours,
            "threads {threads}"
        );
        let n = every_name_opens(&dir, "m.data", &format!("threads {threads}"));
        assert!(n >= 2, "threads {threads}: {n} outputs after the move");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// COMM records perf shows in an output (its side band and the stream).
fn comms(output: &Path) -> usize {
    run_perf(
        &perf(),
        &[
            "script",
            "--show-task-events",
            "-i",
            output.to_str().unwrap(),
        ],
    )
    .lines()
    .filter(|l| l.contains("PERF_RECORD_COMM"))
    .count()
}

/// Many `--threads` switches: the last output's side band is the size of
/// the first's (each used to hold every earlier one's again, doubling).
/// Five switches by SIGUSR2, each waited for (a timer's count of outputs
/// would depend on the machine's load).
#[test]
fn the_side_band_stays_flat_across_threads_switches() {
    require_recording();
    let dir = tempdir("switch-flat");
    let out = dir.join("f.data");
    let child = spawn_record(&["-q", "--threads", "--switch-output", "-g"], &out, "30");
    wait_until("the recording's start", || out.join("data").exists());
    for k in 1..=5 {
        signal(&child, libc::SIGUSR2);
        wait_until("a switch", || outputs_named(&dir, "f.data").len() >= k);
    }
    signal(&child, libc::SIGINT);
    let o = child.output_within("perfz record");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(STOPPED_WITH_COMMAND), "{stderr}");
    let outs = outputs_named(&dir, "f.data");
    assert!(outs.len() >= 6, "{outs:?}");
    let first = comms(&outs[0]);
    let last = comms(&outs[outs.len() - 1]);
    assert!(first > 0, "no COMM in {}", outs[0].display());
    assert!(
        last <= 2 * first,
        "COMM records: {first} in the first output, {last} in the last"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--switch-output-event EVENT` (issue 49): each sample of the event
/// switches the output, as perf's does; the event follows the recorded
/// command's children. Three sleeps of the command: up to three switches
/// (samples close together may make one), and every output whole in perf.
#[test]
fn a_switch_output_event_switches_at_each_sample() {
    require_recording();
    let dir = tempdir("switch-event");
    let base = dir.join("e.data");
    let o = perfz_ok(&[
        "record",
        "-e",
        "cpu-clock",
        "--switch-output-event",
        "syscalls:sys_enter_clock_nanosleep",
        "-o",
        base.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "sleep 0.1; sleep 0.1; sleep 0.1",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    let outputs = outputs_named(&dir, "e.data");
    assert!(
        (2..=4).contains(&outputs.len()),
        "{} outputs: {err}",
        outputs.len()
    );
    assert_eq!(
        err.matches("[ perf record: Dump ").count(),
        outputs.len(),
        "{err}"
    );
    for f in &outputs {
        perf_sample_count(&perf(), f);
    }
    // An event perfz cannot parse is named, as any -e.
    let bad = perfz(&["record", "--switch-output-event", "bogus:", "--", "true"]);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--switch-output-event bogus:"));
}

/// `--switch-output-event` with `--switch-max-files 2` (the event implies
/// the switching, as in perf, where clap used to refuse it for want of
/// `--switch-output`): five sleeps switch the output three times or more,
/// and the newest two outputs are left, each whole in perf.
#[test]
fn a_switch_output_event_keeps_the_newest_switch_max_files() {
    require_recording();
    let dir = tempdir("switch-event-max");
    let base = dir.join("m.data");
    let o = perfz_ok(&[
        "record",
        "-e",
        "cpu-clock",
        "--switch-output-event",
        "syscalls:sys_enter_clock_nanosleep",
        "--switch-max-files",
        "2",
        "-o",
        base.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "sleep 0.1; sleep 0.1; sleep 0.1; sleep 0.1; sleep 0.1",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    let dumps = err.matches("[ perf record: Dump ").count();
    assert!(dumps >= 3, "{dumps} outputs written: {err}");
    let left = every_name_opens(&dir, "m.data", "--switch-max-files 2");
    assert_eq!(left, 2, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
