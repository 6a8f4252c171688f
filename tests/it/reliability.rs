//! A recording survives how recordings end: signals, the workload's exit or
//! death, `kill -9` of the recorder, a full disk, a file size limit. Every
//! file left behind opens in the real perf.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use perfz::format::{PerfReader, RecordType};

fn our_samples(path: &Path) -> u64 {
    let mut r = PerfReader::open(path).unwrap();
    let mut n = 0;
    while let Some((rec, _)) = r.next_record().unwrap() {
        n += (rec.header.type_ == RecordType::SAMPLE) as u64;
    }
    n
}

/// perf reads the file and counts what we count.
fn opens_in_perf(file: &Path) -> u64 {
    let ours = our_samples(file);
    let perf = perf();
    assert_eq!(perf_sample_count(&perf, file), ours, "{}", file.display());
    // No children: perf 6.1 adds them up slowly over deep recursion.
    let file = file.to_str().unwrap();
    run_perf(&perf, &["report", "--stdio", "--no-children", "-i", file]);
    ours
}

fn spawn_record(args: &[&str], out: &Path) -> Owned {
    Command::new(env!("CARGO_BIN_EXE_perfz"))
        .arg("record")
        .arg("-o")
        .arg(out)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn_owned()
        .unwrap()
}

/// Waits until a checkpoint made samples readable in the file (a checkpoint
/// never leaves the file inconsistent, so reading it while it grows is safe).
fn wait_for_samples(out: &Path) {
    let count = || -> u64 {
        let Ok(mut r) = PerfReader::open(out) else {
            return 0;
        };
        let mut n = 0;
        while let Ok(Some((rec, _))) = r.next_record() {
            n += (rec.header.type_ == RecordType::SAMPLE) as u64;
        }
        n
    };
    for _ in 0..200 {
        if count() > 200 {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!(
        "no samples became readable in {} within 10 s",
        out.display()
    );
}

#[test]
fn stop_signals_finish_the_file() {
    require_recording();
    let dir = tempdir("rel-signals");
    let wl = workload();
    // perf 6.12's statuses, every time: the command it ended with SIGTERM
    // (143); SIGHUP's own (perf dies of it; perfz finishes the file first).
    for (sig, name, code) in [
        (libc::SIGINT, "int", STOPPED_WITH_COMMAND),
        (libc::SIGTERM, "term", STOPPED_WITH_COMMAND),
        (libc::SIGHUP, "hup", 128 + libc::SIGHUP),
    ] {
        let out = dir.join(format!("{name}.data"));
        let mut child = spawn_record(&["-g", "--", wl.to_str().unwrap(), "20"], &out);
        wait_for_samples(&out);
        let kids = children_of(child.id());
        assert_eq!(kids.len(), 1, "one workload child");
        // SAFETY: sends a signal to our own child process.
        unsafe { libc::kill(child.id() as i32, sig) };
        let status = child.wait_within("child");
        assert_eq!(
            status.code(),
            Some(code),
            "SIG{name}: perfz exited with {status}"
        );
        assert!(opens_in_perf(&out) > 100, "SIG{name}");
        // The workload was ended with the recording (and reaped: no /proc entry).
        assert!(
            !Path::new(&format!("/proc/{}", kids[0])).exists(),
            "SIG{name}: the workload outlived the recording"
        );
    }
}

fn children_of(pid: u32) -> Vec<i32> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    s.split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

#[test]
fn a_killed_workload_ends_the_recording_cleanly() {
    require_recording();
    let dir = tempdir("rel-wl-killed");
    let out = dir.join("w.data");
    let mut child = spawn_record(&["-g", "--", workload().to_str().unwrap(), "20"], &out);
    wait_for_samples(&out);
    let kids = children_of(child.id());
    assert_eq!(kids.len(), 1, "one workload child");
    // SAFETY: kills the workload, a child of our child.
    unsafe { libc::kill(kids[0], libc::SIGKILL) };
    let status = child.wait_within("child");
    // The workload's end is perfz's exit status, as perf's: 128 + SIGKILL.
    assert_eq!(status.code(), Some(128 + libc::SIGKILL), "{status}");
    assert!(opens_in_perf(&out) > 100);
}

#[test]
fn kill_9_of_the_recorder_leaves_a_file_perf_opens() {
    require_recording();
    let dir = tempdir("rel-kill9");
    let wl = workload();
    for (i, extra) in [&[][..], &["--aio=2"][..], &["--codec", "none"][..]]
        .iter()
        .enumerate()
    {
        // A fresh name per run: waiting on a file an earlier run left behind
        // would return before this run wrote anything.
        let out = dir.join(format!("k{i}.data"));
        let mut args = vec!["-g", "--checkpoint", "0.2"];
        args.extend_from_slice(extra);
        args.extend(["--", wl.to_str().unwrap(), "20"]);
        let mut child = spawn_record(&args, &out);
        wait_for_samples(&out);
        let kids = children_of(child.id());
        child.kill().unwrap(); // SIGKILL
        child.wait_within("child");
        for k in kids {
            // SAFETY: the orphaned workload, ours to end.
            unsafe { libc::kill(k, libc::SIGKILL) };
        }
        let n = opens_in_perf(&out);
        assert!(n > 100, "{extra:?}: only {n} samples survived the kill");
    }
}

fn run_limited(shell_prefix: &str, args: &str, out: &Path) -> std::process::Output {
    let cmd = format!(
        "{shell_prefix} exec {} record -o {} {args} -- {} 3",
        env!("CARGO_BIN_EXE_perfz"),
        out.display(),
        workload().display()
    );
    Command::new("bash").args(["-c", &cmd]).output_within()
}

#[test]
fn a_file_size_limit_stops_the_recording_with_a_readable_file() {
    require_recording();
    let dir = tempdir("rel-efbig");
    // Limits well below what 3 s of each writes (zstd:1 -g: ~30 KB/s), and
    // above one whole ring drain (512 KiB: dwarf rings are given perf's
    // size, not the size perfz picks for the stream), which is written
    // whole or not at all: the dwarf rows fill a ring in milliseconds.
    for (args, kb) in [
        ("--codec none -g", 300),
        ("--codec none -g --aio=2", 300),
        ("--codec none --call-graph dwarf -m 128", 1024),
        ("--codec zstd:1 -g", 24),
    ] {
        let out = dir.join("f.data");
        let _ = std::fs::remove_file(&out);
        let o = run_limited(
            &format!("ulimit -f {kb};"),
            &format!("{args} --checkpoint 0.2"),
            &out,
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(255), "{args}: {err}");
        assert!(err.contains("File too large"), "{args}: {err}");
        assert!(err.contains("perf report"), "{args}: {err}");
        if args.contains("--aio") {
            // The async sink keeps the writes that landed before the
            // failed one, not only what the last checkpoint had: all of
            // them, or all but the last few where the features do not fit
            // after them (where the last landed write ends against the
            // limit depends on how full the buffers were, which a loaded
            // machine changes).
            assert!(err.contains("written before the failure"), "{args}: {err}");
            assert!(!err.contains("last checkpoint"), "{args}: {err}");
        }
        assert!(std::fs::metadata(&out).unwrap().len() <= kb * 1024);
        assert!(opens_in_perf(&out) > 0, "{args}");
    }
}

struct Tmpfs(PathBuf);

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_stops_the_recording_with_a_readable_file() {
    require_recording();
    let dir = tempdir("rel-enospc");
    let mnt = dir.join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=400k", "tmpfs"])
        .arg(&mnt)
        .status_within();
    assert!(ok.success(), "mounting a small tmpfs (needs root)");
    let _guard = Tmpfs(mnt.clone());
    let out = mnt.join("d.data");
    let o = run_limited("", "--codec none -g --checkpoint 0.2", &out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(255), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(opens_in_perf(&out) > 0);
}

#[test]
fn recover_rebuilds_a_file_left_without_checkpoints() {
    require_recording();
    let dir = tempdir("rel-recover");
    let wl = workload();
    // lz4 with dwarf stacks: records that decode to MiBs each (lz4's end
    // where full), beyond the mmap_len a header without one would assume.
    for (codec, stacks) in [
        ("zstd:3", "-g"),
        ("none", "-g"),
        ("lz4", "-g"),
        ("lz4", "--call-graph=dwarf,4096"),
    ] {
        let out = dir.join(format!("r-{codec}{stacks}.data"));
        // No checkpoints: a kill -9 leaves data.size = 0 and no features.
        let mut child = spawn_record(
            &[
                stacks,
                "--checkpoint",
                "0",
                "--codec",
                codec,
                "--",
                wl.to_str().unwrap(),
                "20",
            ],
            &out,
        );
        // Wait for the state: the workload has run 1 s of CPU time (about
        // 4000 samples), however busy the machine is.
        let cpu = |pid: i32| cpu_seconds(pid as u32).unwrap_or(0.0);
        for _ in 0..6000 {
            if children_of(child.id()).into_iter().map(cpu).sum::<f64>() >= 1.0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let kids = children_of(child.id());
        child.kill().unwrap();
        child.wait_within("child");
        for k in kids {
            // SAFETY: the orphaned workload, ours to end.
            unsafe { libc::kill(k, libc::SIGKILL) };
        }
        // Some garbage after the records, as a crash mid-write can leave.
        let mut f = std::fs::OpenOptions::new().append(true).open(&out).unwrap();
        std::io::Write::write_all(&mut f, &[0xAB; 333]).unwrap();
        drop(f);
        let o = perfz_ok(&["recover", out.to_str().unwrap()]);
        let msg = String::from_utf8_lossy(&o.stderr);
        // The garbage, and at most one record cut off by the kill.
        let dropped: u64 = msg
            .split("dropped ")
            .nth(1)
            .and_then(|r| r.split(' ').next()?.parse().ok())
            .unwrap_or_else(|| panic!("{codec} {stacks}: {msg}"));
        assert!(
            msg.contains("recovered") && (333..333 + 65_536).contains(&dropped),
            "{codec} {stacks}: {msg}"
        );
        let n = our_samples(&out);
        assert!(n > 1000, "{codec} {stacks}: {n} samples recovered");
        if codec != "lz4" {
            opens_in_perf(&out);
        } else {
            let z = dir.join("r.zstd.data");
            recompress_zstd(&out, &z);
            assert_eq!(opens_in_perf(&z), n);
        }
    }
}
