//! Inputs that are not what they claim (issue 31): a DSO path that is a
//! FIFO, a DSO grown to a sparse 2 GB file. Every command returns, and
//! maps only what it parses.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

use common::*;

/// A recording of a copy of the workload at `dir/app`, its build-id cache
/// in `dir/cache` (what the test does to the app must not reach the cache
/// the other tests read): (app, recording).
fn app_recording(dir: &Path) -> (PathBuf, PathBuf) {
    let app = dir.join("app");
    std::fs::copy(workload(), &app).unwrap();
    let out = dir.join("app.data");
    let o = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .env("PERF_BUILDID_DIR", dir.join("cache"))
        .args(["record", "-q", "-g", "-o"])
        .arg(&out)
        .arg(&app)
        .arg("0.3")
        .output_within();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (app, out)
}

/// Runs `perfz ARGS` and returns its stdout and its peak RSS in KiB
/// (wait4's, of this child alone).
pub(crate) fn perfz_with_peak(cache: &Path, args: &[&str]) -> (String, i64) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .env("PERF_BUILDID_DIR", cache)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn_owned()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut text).unwrap();
    let (status, ru) = child.wait4().unwrap();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "perfz {args:?}: status {status}"
    );
    (text, ru.ru_maxrss)
}

#[test]
fn export_returns_on_a_fifo_dso_and_maps_a_sparse_one() {
    require_recording();
    let dir = tempdir("hostile-dso");
    let (app, out) = app_recording(&dir);
    let rec = out.to_str().unwrap();
    let cache = dir.join("cache");
    let (named, _) = perfz_with_peak(&cache, &["export", rec]);
    assert!(named.contains("perfz_workload_leaf"), "{named}");
    // The same binary grown to 2 GB, sparse: its build id is unchanged.
    let f = std::fs::OpenOptions::new().write(true).open(&app).unwrap();
    f.set_len(2 << 30).unwrap();
    drop(f);
    let (sparse, peak_kib) = perfz_with_peak(&cache, &["export", rec]);
    assert_eq!(sparse, named, "the sparse file names the same frames");
    assert!(
        peak_kib < 300 << 10,
        "export of a 2 GB DSO peaked at {peak_kib} KiB"
    );
    // A FIFO at the DSO's path: perf report returns at once, so must we
    // (the deadline of perfz() fails a hang).
    std::fs::remove_file(&app).unwrap();
    mkfifo(&app);
    // (The build-id cache's copy, which the recording added, names them.)
    for args in [["export", rec, ""], ["report", "--own", rec]] {
        let args: Vec<&str> = args.into_iter().filter(|a| !a.is_empty()).collect();
        let o = Command::new(env!("CARGO_BIN_EXE_perfz"))
            .env("PERF_BUILDID_DIR", &cache)
            .args(&args)
            .output_within();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn outputs_never_replace_inputs_and_dash_is_standard_output() {
    let dir = tempdir("hostile-clobber");
    let input = dir.join("in.data");
    std::fs::copy(fixture("z1-cmd"), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let i = input.to_str().unwrap();
    for args in [
        vec!["export", "-o", i, i],
        vec!["export", "--format", "svg", "-o", i, i],
        vec!["recompress", "--codec", "zstd:3", i, "-o", i],
    ] {
        let o = perfz(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("would overwrite the input"), "{args:?}: {err}");
    }
    assert!(
        std::fs::read(&input).unwrap() == before,
        "the input is intact"
    );
    // A --threads directory: nothing may be written inside it.
    let t = fixture("zthreads-cmd");
    let copy = dir.join("t.data");
    std::fs::create_dir_all(&copy).unwrap();
    for e in std::fs::read_dir(&t).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, copy.join(p.file_name().unwrap())).unwrap();
    }
    let c = copy.to_str().unwrap();
    let inside = copy.join("data");
    let stream = copy.join("data.0");
    for args in [
        vec!["export", "-o", inside.to_str().unwrap(), c],
        vec![
            "recompress",
            "--codec",
            "zstd:3",
            c,
            "-o",
            stream.to_str().unwrap(),
        ],
        vec!["decompress", c, "-o", inside.to_str().unwrap()],
    ] {
        let o = perfz(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
    }
    assert_eq!(samples(&copy), samples(&t), "the directory is intact");
    // `-o -`: standard output, no file named `-`.
    let o = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .current_dir(&dir)
        .args(["export", "-o", "-", i])
        .output_within();
    assert!(o.status.success());
    assert!(!dir.join("-").exists());
    let direct = perfz_ok(&["export", i]);
    assert_eq!(o.stdout, direct.stdout);
}

#[test]
fn a_failing_standard_output_is_an_error_not_a_panic() {
    let f = fixture("z1-cmd");
    let f = f.to_str().unwrap();
    for args in [
        vec!["stat", f],
        vec!["stat", "--json", f],
        vec!["export", f],
        vec!["codecs"],
        vec!["eval", "--codecs", "lz4", "--min-time", "0.01", f],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_perfz"))
            .args(&args)
            .stdout(full)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?} > /dev/full: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        // A reader that stops at once: no panic either.
        let mut child = Command::new(env!("CARGO_BIN_EXE_perfz"))
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn_owned()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{args:?} | true: {err}");
        assert_ne!(o.status.code(), Some(101), "{args:?} | true: {err}");
    }
}

#[test]
fn recover_refuses_devices_fifos_and_live_recordings() {
    require_recording();
    let o = perfz(&["recover", "/dev/zero"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("not a regular file"), "{err}");
    let dir = tempdir("hostile-live");
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    let o = perfz(&["recover", fifo.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    // A recording still being written is refused and left to its writer.
    let out = dir.join("live.data");
    let mut child = spawn_record(&["-q", "-g"], &out, "20");
    wait_cpu(child.id(), 0.2);
    let o = perfz(&["recover", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("still being written by process"), "{err}");
    // SAFETY: signals our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(
        child.wait_within("recorder").code(),
        Some(STOPPED_WITH_COMMAND)
    );
    assert_eq!(perf_sample_count(&perf(), &out), our_sample_count(&out));
    assert!(our_sample_count(&out) > 50);
}

#[test]
fn realtime_priority_reaches_every_drain_thread() {
    require_recording();
    let dir = tempdir("hostile-rt");
    let out = dir.join("rt.data");
    let mut child = spawn_record(&["-q", "--threads", "-r", "5"], &out, "20");
    let pid = child.id();
    wait_cpu(pid, 0.2);
    let mut drains = Vec::new();
    for t in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let t = t.unwrap().path();
        let comm = std::fs::read_to_string(t.join("comm")).unwrap_or_default();
        if comm.starts_with("perfz-drain") {
            // /proc/TID/stat field 41 is the policy (1: SCHED_FIFO).
            let stat = std::fs::read_to_string(t.join("stat")).unwrap();
            let f: Vec<&str> = stat
                .rsplit(')')
                .next()
                .unwrap()
                .split_whitespace()
                .collect();
            drains.push((
                comm.trim().to_string(),
                f[38].to_string(),
                f[37].to_string(),
            ));
        }
    }
    // SAFETY: signals our own child.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    assert_eq!(
        child.wait_within("recorder").code(),
        Some(STOPPED_WITH_COMMAND)
    );
    assert!(!drains.is_empty(), "no drain thread found");
    for (name, policy, prio) in &drains {
        assert_eq!(
            policy, "1",
            "{name} runs at policy {policy} (priority {prio})"
        );
        assert_eq!(prio, "5", "{name}");
    }
}

#[test]
fn a_workload_that_prints_never_lands_in_the_data_on_stdout() {
    require_recording();
    let dir = tempdir("hostile-stdout");
    let script = format!(
        "echo perfz-workload-says-hello; exec {} 0.2",
        workload().display()
    );
    let o = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args(["record", "-q", "-o", "-", "--", "sh", "-c", &script])
        .output_within();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("perfz-workload-says-hello"),
        "on stderr: {err}"
    );
    let file = dir.join("pipe.data");
    std::fs::write(&file, &o.stdout).unwrap();
    assert_eq!(&o.stdout[..8], b"PERFILE2");
    // (perf 6.1's report --stats trips over compressed pipes: perf script.)
    let n = perf_script_samples(&perf(), &file).len() as u64;
    assert!(n > 10, "{n} samples");
    assert_eq!(n, our_sample_count(&file));
}

#[test]
fn the_advice_says_when_a_ring_cannot_hold_one_sample() {
    require_recording();
    let dir = tempdir("hostile-tiny-ring");
    let out = dir.join("t.data");
    let w = workload();
    let o = perfz(&[
        "record",
        "-m",
        "8",
        "--call-graph",
        "dwarf,32768",
        "-F",
        "2000",
        "-o",
        out.to_str().unwrap(),
        w.to_str().unwrap(),
        "0.3",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("cannot hold one sample"), "{err}");
    assert!(!err.contains("a bigger ring is the lever"), "{err}");
}

/// A file that grows while recover looks, its writer holding no fd most of
/// the time (it opens the file for each append): refused, left as it was.
#[test]
fn recover_refuses_a_file_that_grows_while_it_looks() {
    require_recording();
    let dir = tempdir("hostile-growing");
    let f = dir.join("growing.data");
    std::fs::write(&f, b"x").unwrap();
    let mut writer = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "while :; do printf x >> '{}'; sleep 0.02; done",
            f.display()
        ))
        .spawn_owned()
        .unwrap();
    crate::hostile_surroundings::wait_until("the writer's first append", || {
        std::fs::metadata(&f).unwrap().len() > 1
    });
    let o = perfz(&["recover", f.to_str().unwrap()]);
    let _ = writer.kill();
    let _ = writer.wait();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("changed while recover watched it") || err.contains("still being written"),
        "{err}"
    );
    let left = std::fs::read(&f).unwrap();
    assert!(left.iter().all(|&b| b == b'x'), "recover touched it");
}

/// A healthy recording, file and `--threads` directory: recover says it
/// was whole, and drops nothing (it used to call the feature section
/// dropped bytes).
#[test]
fn recover_on_a_whole_recording_drops_nothing() {
    require_recording();
    let dir = tempdir("hostile-whole");
    for threads in [false, true] {
        let out = dir.join(format!("w{threads}.data"));
        let mut args = vec!["record", "-q", "-o", out.to_str().unwrap()];
        if threads {
            args.push("--threads");
        }
        let wl = workload();
        args.extend(["--", wl.to_str().unwrap(), "0.2"]);
        perfz_ok(&args);
        let before = perf_sample_count(&perf(), &out);
        let o = perfz_ok(&["recover", out.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("nothing dropped (it was whole)"), "{err}");
        assert_eq!(perf_sample_count(&perf(), &out), before);
    }
}

/// Command lines perf refuses are refused: an unknown option before the
/// command, intersecting --threads masks, a second -e for export. A name
/// after `--` is a command's, whatever it starts with.
#[test]
fn options_perf_refuses_are_refused() {
    require_recording();
    let o = perfz(&["record", "--no-such-option", "true"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(129), "perf's usage error: {err}");
    assert!(err.contains("unknown option `no-such-option'"), "{err}");
    let dir = tempdir("hostile-options");
    let out = dir.join("o.data");
    let o = perfz(&[
        "record",
        "-q",
        "-o",
        out.to_str().unwrap(),
        "--",
        "-no-such-command",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cannot run -no-such-command"), "{err}");
    let o = perfz(&["record", "--threads=0/0:1/1:0/1", "-a", "--", "true"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(129), "{err}");
    assert!(err.contains("intersects an earlier one"), "{err}");
    let fixture = fixture("plain-cmd");
    let o = perfz(&["export", "-e", "a", "-e", "b", fixture.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("-e given 2 times"), "{err}");
}

/// `--stats-json` at a planted symlink replaces the link; the file it
/// points to keeps its contents.
#[test]
fn stats_json_never_writes_through_a_symlink() {
    require_recording();
    let dir = tempdir("hostile-stats-link");
    let victim = dir.join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let link = dir.join("stats.json");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let out = dir.join("s.data");
    perfz_ok(&[
        "record",
        "-q",
        "--stats-json",
        link.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--",
        "true",
    ]);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(!std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert!(std::fs::read_to_string(&link)
        .unwrap()
        .contains("\"samples\""));
}
