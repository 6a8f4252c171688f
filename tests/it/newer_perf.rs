//! perf 6.12 beside 6.1: every kind of output perfz writes is read by both
//! with the samples perfz's reader reads, and perf 6.12's own recordings go
//! through every perfz command with the samples perf 6.12 reads in them.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

use common::*;

/// Both perfs read `file` with the samples perfz reads in it (`what` names
/// the output in messages).
fn both_read_ours(what: &str, file: &Path) {
    let ours = samples(file);
    assert!(ours.len() > 10, "{what}: {} samples", ours.len());
    for (which, perf) in perfs() {
        let mut theirs = perf_script_samples(&perf, file);
        if what == "group" {
            // perf script prints a line per member of each group sample.
            theirs.dedup();
        }
        assert_same_samples(
            &theirs,
            &ours,
            &format!("{which} reading {what} ({})", file.display()),
        );
    }
}

fn record(args: &[&str], out: &Path, secs: &str) {
    let mut a = vec!["record", "-q"];
    a.extend_from_slice(args);
    a.extend(["-o", out.to_str().unwrap(), "--"]);
    let w = workload();
    a.extend([w.to_str().unwrap(), secs]);
    perfz_ok(&a);
}

#[test]
fn files_of_every_codec_perf_reads_and_of_every_mode() {
    require_recording();
    let dir = tempdir("newer-files");
    for (label, args) in [
        ("default", vec!["-g"]),
        ("zstd:3", vec!["-g", "--codec", "zstd:3"]),
        ("none", vec!["--codec", "none"]),
        ("aio", vec!["-g", "--aio"]),
        ("dwarf", vec!["--call-graph", "dwarf,4096"]),
        ("group", vec!["-e", "{cpu-clock,task-clock}:S"]),
        ("threads", vec!["-g", "--threads"]),
    ] {
        let out = dir.join(format!("{}.data", label.replace(':', "")));
        record(&args, &out, "0.3");
        both_read_ours(label, &out);
    }
}

#[test]
fn a_pipe_and_a_tracepoint_mix() {
    require_recording();
    let dir = tempdir("newer-pipe");
    let file = dir.join("pipe.data");
    let o = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args(["record", "-q", "-g", "-o", "-", "--"])
        .arg(workload())
        .arg("0.3")
        .output_within();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::write(&file, &o.stdout).unwrap();
    both_read_ours("pipe", &file);
    let mix = dir.join("mix.data");
    record(
        &["-e", "cpu-clock", "-e", "sched:sched_switch", "-a"],
        &mix,
        "0.3",
    );
    both_read_ours("cpu-clock with sched:sched_switch", &mix);
    for (which, perf) in perfs() {
        let text = run_perf(&perf, &["script", "-i", mix.to_str().unwrap()]);
        assert!(text.contains("sched:sched_switch:"), "{which}: {text}");
        assert!(
            text.contains("prev_comm="),
            "{which} formats the tracepoint"
        );
    }
}

#[test]
fn switched_outputs_and_snapshots() {
    require_recording();
    let dir = tempdir("newer-switch");
    let out = dir.join("s.data");
    let mut child = spawn_record(&["-q", "--switch-output", "-g"], &out, "20");
    let ran = wait_cpu(child.id(), 0.3);
    // SAFETY: signals our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGUSR2) };
    wait_for_outputs(&dir, "s.data", 1, || true);
    wait_cpu(child.id(), ran + 0.3);
    // SAFETY: as above.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(
        child.wait_within("switching recorder").code(),
        Some(STOPPED_WITH_COMMAND)
    );
    let files = outputs_named(&dir, "s.data");
    assert_eq!(files.len(), 2, "a SIGUSR2 then the end: {files:?}");
    for f in &files {
        both_read_ours("a --switch-output output", f);
    }
    let snap = dir.join("f.data");
    let mut child = spawn_record(&["-q", "--flight-recorder", "1M", "-g"], &snap, "20");
    wait_cpu(child.id(), 0.3);
    // SAFETY: as above.
    unsafe { libc::kill(child.id() as i32, libc::SIGUSR2) };
    wait_for_outputs(&dir, "f.data", 1, || true);
    // SAFETY: as above.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(
        child.wait_within("flight recorder").code(),
        Some(STOPPED_WITH_COMMAND)
    );
    let snaps = outputs_named(&dir, "f.data");
    assert_eq!(
        snaps.len(),
        2,
        "the SIGUSR2 snapshot and the end: {snaps:?}"
    );
    both_read_ours("a flight-recorder snapshot", &snaps[0]);
}

/// A recording of perf 6.12's own (`perf record ARGS -o OUT -- workload`).
fn perf_new_record(args: &[&str], out: &Path, pipe: bool) {
    let w = workload();
    let mut c = Command::new(perf_new());
    // A build-id cache of its own: perf's cache update races with the
    // recordings of the tests beside this one.
    c.env("PERF_BUILDID_DIR", out.with_extension("cache"))
        .args(["record", "-q"])
        .args(args)
        .arg("-o")
        .arg(if pipe { Path::new("-") } else { out })
        .arg("--")
        .arg(w)
        .arg("0.3");
    let o = c.output_within();
    assert!(
        o.status.success(),
        "perf 6.12 record {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    if pipe {
        std::fs::write(out, &o.stdout).unwrap();
    }
}

/// The SAMPLE count of `perfz stat` (its text).
fn stat_samples(file: &Path) -> u64 {
    let o = perfz_ok(&["stat", file.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    text.lines()
        .find(|l| l.trim_start().starts_with("SAMPLE events:"))
        .and_then(|l| l.split_whitespace().nth(2)?.parse().ok())
        .unwrap_or_else(|| panic!("no SAMPLE line in perfz stat: {text}"))
}

/// The samples of `perfz export` (folded lines' counts).
fn exported_samples(file: &Path) -> u64 {
    let o = perfz_ok(&["export", "--sample-counts", file.to_str().unwrap()]);
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum()
}

#[test]
fn perf_6_12_recordings_go_through_every_perfz_command() {
    require_recording();
    let new = perf_new();
    let dir = tempdir("newer-theirs");
    for (label, args, pipe) in [
        ("z", vec!["-z", "-g"], false),
        ("threads", vec!["-z", "-g", "--threads"], false),
        ("pipe", vec!["-g"], true),
        ("zpipe", vec!["-z", "-g"], true),
        ("dwarf", vec!["-z", "--call-graph", "dwarf,8192"], false),
    ] {
        let theirs = dir.join(format!("{label}.data"));
        perf_new_record(&args, &theirs, pipe);
        let want = perf_script_samples(&new, &theirs);
        assert!(want.len() > 10, "{label}: {} samples", want.len());
        assert_same_samples(
            &samples(&theirs),
            &want,
            &format!("{label}: perfz's reader"),
        );
        let n = want.len() as u64;
        assert_eq!(stat_samples(&theirs), n, "{label}: perfz stat");
        assert_eq!(exported_samples(&theirs), n, "{label}: perfz export");
        for (conv, codec) in [("decompress", None), ("recompress", Some("zstd:3"))] {
            let out = dir.join(format!("{label}.{conv}.data"));
            let mut a = vec![conv];
            if let Some(c) = codec {
                a.extend(["--codec", c]);
            }
            a.extend([theirs.to_str().unwrap(), "-o", out.to_str().unwrap()]);
            perfz_ok(&a);
            for (which, perf) in perfs() {
                let got = perf_script_samples(&perf, &out);
                assert_same_samples(&got, &want, &format!("{label} {conv}: {which}"));
            }
        }
        // recover on a healthy file (a copy) keeps every sample.
        if !pipe {
            let copy = dir.join(format!("{label}.recovered.data"));
            copy_recording(&theirs, &copy);
            perfz_ok(&["recover", copy.to_str().unwrap()]);
            let got = perf_script_samples(&new, &copy);
            assert_same_samples(&got, &want, &format!("{label} recover"));
        }
        let o = perfz_ok(&[
            "eval",
            "--codecs",
            "zstd:1,lz4",
            "--min-time",
            "0.05",
            theirs.to_str().unwrap(),
        ]);
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains("lz4"), "{label} eval: {text}");
    }
}

/// Copies a file or a `--threads` directory.
fn copy_recording(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let p: PathBuf = e.unwrap().path();
            std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
        }
    } else {
        std::fs::copy(from, to).unwrap();
    }
}
