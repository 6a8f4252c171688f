//! `record --threads`: perf's directory format written by parallel drain
//! threads, read back by perf 6.1 and by every perfz command; `--per-thread`.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use perfz::format::{feat, Mode, PerfReader};

/// `data.N` files of a directory.
fn streams(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("data."))
        .collect();
    v.sort();
    v
}

/// perf reports the directory with our sample count, the workload's
/// function names, and no out-of-order events.
fn perf_reads(dir: &Path) -> u64 {
    let ours = our_sample_count(dir);
    let perf = perf();
    assert_eq!(perf_sample_count(&perf, dir), ours, "{}", dir.display());
    let o = Command::new(&perf)
        .args(["report", "--stdio", "--no-children", "-i"])
        .arg(dir)
        .output_within();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("out of order"), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("perfz_workload_"), "{out}");
    ours
}

fn stats(json: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

fn online_cpus() -> usize {
    perfz::event::cpus::online().unwrap().len()
}

/// Distinct values of a topology file over the online CPUs (read here,
/// apart from perfz's own topology code).
fn distinct_topology(file: &str) -> usize {
    let mut seen = std::collections::BTreeSet::new();
    for cpu in perfz::event::cpus::online().unwrap() {
        let p = format!("/sys/devices/system/cpu/cpu{cpu}/topology/{file}");
        seen.insert(std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}")));
    }
    seen.len()
}

/// NUMA nodes with an online CPU (1 where the kernel has no NUMA).
fn numa_nodes() -> usize {
    let online: std::collections::BTreeSet<u32> =
        perfz::event::cpus::online().unwrap().into_iter().collect();
    let Ok(dir) = std::fs::read_dir("/sys/devices/system/node") else {
        return 1;
    };
    let n = dir
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let node = name.strip_prefix("node")?.parse::<u32>().ok()?;
            let list =
                std::fs::read_to_string(format!("/sys/devices/system/node/node{node}/cpulist"))
                    .ok()?;
            let cpus = perfz::event::cpus::parse_list(list.trim()).ok()?;
            cpus.iter().any(|c| online.contains(c)).then_some(())
        })
        .count();
    n.max(1)
}

#[test]
fn every_thread_writes_its_own_data_file_that_perf_merges() {
    require_recording();
    let dir = tempdir("thr-perf");
    let wl = workload();
    for codec in ["zstd:1", "none"] {
        let out = dir.join(format!("{codec}.data"));
        let json = dir.join("s.json");
        perfz_ok(&[
            "record",
            "--threads",
            "-a",
            "-F",
            "999",
            "-g",
            "--codec",
            codec,
            "-o",
            out.to_str().unwrap(),
            "--stats-json",
            json.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &format!("{0} 1 & {0} 1; wait", wl.display()),
        ]);
        assert!(out.is_dir());
        let n = online_cpus();
        assert_eq!(
            streams(&out),
            (0..n).map(|i| format!("data.{i}")).collect::<Vec<_>>()
        );
        let r = PerfReader::open(&out).unwrap();
        assert_eq!(r.mode, Mode::Directory);
        assert_eq!(
            r.features.get(feat::DIR_FORMAT),
            Some(&1u64.to_le_bytes()[..])
        );
        assert_eq!(r.compressed().is_some(), codec != "none");
        let s = stats(&json);
        let threads = s["threads"].as_array().unwrap();
        assert_eq!(threads.len(), n);
        for (i, t) in threads.iter().enumerate() {
            // One thread per CPU, pinned to it, draining its ring.
            assert_eq!(t["cpus"], serde_json::json!([i]));
            assert_eq!(t["affinity"], serde_json::json!([i]));
            assert!(t["samples"].as_u64().unwrap() > 100, "{codec}: {t}");
        }
        assert_eq!(perf_reads(&out), s["samples"].as_u64().unwrap(), "{codec}");
    }
}

#[test]
fn threads_work_with_aio_and_every_codec_and_convert() {
    require_recording();
    let dir = tempdir("thr-aio");
    let wl = workload();
    for codec in ["zstd:3", "lz4", "snappy", "none"] {
        // io_uring named: where it is blocked (seccomp) the run fails and
        // says so, rather than quietly testing the pwrite thread twice.
        for aio in [
            &["--aio=2", "--aio-backend", "uring"][..],
            &["--aio", "--aio-backend", "thread"][..],
        ] {
            let out = dir.join(format!("{codec}.data"));
            let json = dir.join("s.json");
            let mut args = vec![
                "record",
                "--threads=2",
                "-F",
                "2000",
                "--call-graph",
                "dwarf,4096",
                "--codec",
                codec,
                "-o",
                out.to_str().unwrap(),
                "--stats-json",
                json.to_str().unwrap(),
            ];
            args.extend_from_slice(aio);
            args.extend(["--", wl.to_str().unwrap(), "0.5"]);
            perfz_ok(&args);
            let s = stats(&json);
            assert!(s["sink"].as_str().unwrap().starts_with("async"), "{s}");
            let samples = s["samples"].as_u64().unwrap();
            // 0.5 s of the workload's own CPU time at 2 kHz: ~1000 samples,
            // however busy the machine (cpu-clock counts CPU time).
            assert!(samples > 100, "{codec} {aio:?}: {samples}");
            assert_eq!(our_sample_count(&out), samples, "{codec} {aio:?}");
            // decompress/recompress read the directory into one file perf opens.
            let plain = dir.join("plain.data");
            perfz_ok(&[
                "decompress",
                out.to_str().unwrap(),
                "-o",
                plain.to_str().unwrap(),
            ]);
            assert_eq!(
                perf_sample_count(&perf(), &plain),
                samples,
                "{codec} {aio:?}"
            );
            if codec == "zstd:3" {
                assert_eq!(perf_reads(&out), samples);
            }
        }
    }
    // stat and eval take a directory.
    let out = dir.join("zstd:3.data");
    let st = perfz_ok(&["stat", out.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&st.stdout).contains("Directory mode"));
    let ev = perfz_ok(&["eval", out.to_str().unwrap(), "--codecs", "zstd:1,lz4"]);
    assert!(String::from_utf8_lossy(&ev.stdout).contains("lz4"));
}

#[test]
fn layouts_choose_the_threads() {
    require_recording();
    let dir = tempdir("thr-layout");
    let wl = workload();
    let n = online_cpus();
    let last = n - 1;
    let mask = format!("0-{last}/0");
    // A thread per core (SMT siblings share one), package, NUMA node: as
    // this machine's sysfs says.
    for (spec, threads) in [
        ("1", 1),
        ("core", distinct_topology("core_cpus_list")),
        ("package", distinct_topology("package_cpus_list")),
        ("numa", numa_nodes()),
        (mask.as_str(), 1),
    ] {
        let out = dir.join("l.data");
        let json = dir.join("s.json");
        perfz_ok(&[
            "record",
            &format!("--threads={spec}"),
            "-a",
            "-F",
            "499",
            "-o",
            out.to_str().unwrap(),
            "--stats-json",
            json.to_str().unwrap(),
            "--",
            wl.to_str().unwrap(),
            "0.3",
        ]);
        assert_eq!(streams(&out).len(), threads, "--threads={spec}");
        let s = stats(&json);
        let t = s["threads"].as_array().unwrap();
        assert_eq!(t.len(), threads, "--threads={spec}");
        let rings: u64 = t.iter().map(|t| t["rings"].as_u64().unwrap()).sum();
        assert_eq!(
            rings as usize, n,
            "--threads={spec}: every ring has one owner"
        );
        if spec == mask {
            assert_eq!(t[0]["affinity"], serde_json::json!([0]));
        }
        assert!(our_sample_count(&out) > 50, "--threads={spec}");
    }
}

#[test]
fn bad_thread_options_say_what_to_do_and_write_nothing() {
    let dir = tempdir("thr-bad");
    let out = dir.join("b.data");
    for (args, says) in [
        (vec!["--threads", "-o", "-"], "cannot write a pipe"),
        (vec!["--threads=x"], "--threads=x"),
        (vec!["--threads=0"], "give 1 to 4096 threads"),
        (vec!["--threads=0/0", "-C", "0,1"], "in no --threads mask"),
        (vec!["--per-thread", "-a"], "--per-thread"),
    ] {
        let mut a = vec!["record"];
        a.extend(args.iter().copied());
        if !a.contains(&"-o") {
            a.extend(["-o", out.to_str().unwrap()]);
        }
        a.extend(["--", "true"]);
        let o = perfz(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{a:?}");
        assert!(err.contains(says), "{a:?}: {err}");
        assert!(o.stdout.is_empty(), "{a:?}");
        assert!(!out.exists(), "{a:?}");
    }
    // Nothing but our own output is left in the directory.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[test]
fn an_existing_recording_becomes_old() {
    require_recording();
    let dir = tempdir("thr-old");
    let out = dir.join("o.data");
    let wl = workload();
    let rec = || {
        perfz_ok(&[
            "record",
            "--threads",
            "-F",
            "499",
            "-o",
            out.to_str().unwrap(),
            "--",
            wl.to_str().unwrap(),
            "0.2",
        ])
    };
    rec();
    rec();
    assert!(out.join("data").is_file());
    let old = dir.join("o.data.old");
    assert!(
        old.join("data").is_file(),
        "the first recording moved to .old"
    );
    assert!(our_sample_count(&old) > 10);
    // A file in the way is moved aside the same way.
    std::fs::remove_dir_all(&out).unwrap();
    std::fs::write(&out, b"not a recording").unwrap();
    rec();
    assert!(out.is_dir());
    assert_eq!(std::fs::read(&old).unwrap(), b"not a recording");
}

#[test]
fn kill_9_leaves_data_files_that_recover_makes_whole() {
    require_recording();
    let dir = tempdir("thr-kill9");
    let wl = workload();
    for extra in [&[][..], &["--aio=2"][..]] {
        let out = dir.join("k.data");
        let _ = std::fs::remove_dir_all(&out);
        let mut child = Command::new(env!("CARGO_BIN_EXE_perfz"))
            .args([
                "record",
                "--threads",
                "-F",
                "2000",
                "--call-graph",
                "dwarf,4096",
            ])
            .args(["--checkpoint", "0.2", "-o"])
            .arg(&out)
            .args(extra)
            .args(["--", wl.to_str().unwrap(), "20"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn_owned()
            .unwrap();
        // Wait until the data files hold something.
        let size = || -> u64 {
            std::fs::read_dir(&out).map_or(0, |d| {
                d.filter_map(|e| e.ok()?.metadata().ok())
                    .map(|m| m.len())
                    .sum()
            })
        };
        // A state with a deadline: going on after 10 s whatever the size
        // left a loaded machine too few samples to count after the kill.
        let mut grown = false;
        for _ in 0..1200 {
            grown = size() > 200_000;
            if grown {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(
            grown,
            "{extra:?}: the data files did not reach 200 KB within 60 s"
        );
        let kids = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", child.id()))
            .unwrap_or_default();
        child.kill().unwrap(); // SIGKILL
        child.wait_within("child");
        for k in kids
            .split_whitespace()
            .filter_map(|k| k.parse::<i32>().ok())
        {
            // SAFETY: the orphaned workload, ours to end.
            unsafe { libc::kill(k, libc::SIGKILL) };
        }
        let o = perfz_ok(&["recover", out.to_str().unwrap()]);
        let msg = String::from_utf8_lossy(&o.stderr);
        assert!(msg.contains("recovered"), "{msg}");
        let n = perf_reads(&out);
        assert!(n > 500, "{extra:?}: only {n} samples survived the kill");
    }
}

#[test]
fn a_file_size_limit_in_one_thread_keeps_the_directory_readable() {
    require_recording();
    let dir = tempdir("thr-efbig");
    let out = dir.join("f.data");
    let cmd = format!(
        "ulimit -f 1024; exec {} record --threads --codec none --call-graph dwarf,4096 -F 4000 --checkpoint 0.2 -o {} -- {} 3",
        env!("CARGO_BIN_EXE_perfz"),
        out.display(),
        workload().display()
    );
    let o = Command::new("bash").args(["-c", &cmd]).output_within();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(255), "{err}");
    assert!(err.contains("File too large"), "{err}");
    assert!(err.contains("perf report"), "{err}");
    assert!(perf_reads(&out) > 100);
}

#[test]
fn per_thread_maps_one_ring_per_task() {
    require_recording();
    let dir = tempdir("thr-per-thread");
    // Four busy tasks named with -t: one ring each.
    let kids: Vec<Owned> = (0..4).map(|_| running_workload("30")).collect();
    let tids: Vec<String> = kids.iter().map(|c| c.id().to_string()).collect();
    let out = dir.join("p.data");
    let json = dir.join("s.json");
    // With --threads it is refused, as perf refuses it.
    let r = perfz(
        &[
            "record",
            "--per-thread",
            "--threads=2",
            "-t",
            &tids.join(","),
            "-o",
        ]
        .into_iter()
        .chain([out.to_str().unwrap(), "--", "true"])
        .collect::<Vec<_>>(),
    );
    assert_eq!(r.status.code(), Some(255));
    assert!(String::from_utf8_lossy(&r.stderr).contains("mutually exclusive"));
    // For 0.5 s of the four's CPU time (≈ 500 samples at 999 Hz), not a
    // wall-clock sleep: on a busy machine they get a share of the CPUs.
    let tids = tids.join(",");
    let (o, j) = (out.to_str().unwrap(), json.to_str().unwrap());
    let args = ["--per-thread", "-F", "999", "-g", "-t", &tids, "-o", o];
    let pids: Vec<u32> = kids.iter().map(|k| k.id()).collect();
    record_while_cpu(&[&args[..], &["--stats-json", j]].concat(), &pids, 0.5);
    for mut k in kids {
        let _ = k.kill();
        let _ = k.wait();
    }
    let s = stats(&json);
    assert_eq!(s["rings"], 4);
    assert!(perf_reads(&out) > 100);
}

/// `--threads --switch-output=1s`: every output is a directory (`data` and
/// one data.N per thread) that perf opens, named only once finished; the
/// outputs together hold every sample the recorder counted, once.
#[test]
fn switch_output_writes_directories_perf_opens() {
    require_recording();
    let dir = tempdir("thr-switch");
    let out = dir.join("s.data");
    let json = dir.join("s.json");
    perfz_ok(&[
        "record",
        "-q",
        "--threads",
        "--switch-output=1s",
        "-g",
        "--stats-json",
        json.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--",
        workload().to_str().unwrap(),
        "2.5",
    ]);
    let s = stats(&json);
    let outputs = outputs_named(&dir, "s.data");
    let listed: Vec<String> = s["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert!(outputs.len() >= 2, "{outputs:?}");
    assert_eq!(
        listed,
        outputs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
    );
    let mut total = 0;
    for o in &outputs {
        assert!(o.is_dir(), "{}", o.display());
        assert!(!streams(o).is_empty(), "{}", o.display());
        total += perf_sample_count(&perf(), o);
        assert_eq!(perf_sample_count(&perf(), o), our_sample_count(o));
    }
    assert_eq!(total, s["samples"].as_u64().unwrap(), "{outputs:?}");
    assert!(!out.exists(), "the last output is named too");
    // No hidden directory is left behind.
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        outputs.len() + 1,
        "outputs and the stats only"
    );
}

/// `--threads --flight-recorder`: SIGUSR2 and the end each write a snapshot
/// directory perf opens, with the workload's samples.
#[test]
fn flight_recorder_snapshots_are_directories_perf_opens() {
    require_recording();
    let dir = tempdir("thr-flight");
    let out = dir.join("f.data");
    let args = [
        "-q",
        "--threads",
        "--flight-recorder",
        "4M",
        "-F",
        "999",
        "-g",
    ];
    let child = spawn_record(&args, &out, "20");
    let pid = child.id();
    let wait_for = |n: usize| wait_for_outputs(&dir, "f.data", n, || true);
    let ran = wait_cpu(pid, 0.3);
    // SAFETY: signals our own child.
    unsafe { libc::kill(pid as i32, libc::SIGUSR2) };
    wait_for(1);
    wait_cpu(pid, ran + 0.3);
    // SAFETY: signals our own child.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let o = child.output_within("child");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(STOPPED_WITH_COMMAND), "{stderr}");
    let snaps = outputs_named(&dir, "f.data");
    assert_eq!(snaps.len(), 2, "SIGUSR2 and the end: {snaps:?}");
    assert!(!out.exists(), "nothing is written but snapshots");
    for s in &snaps {
        assert!(s.is_dir() && !streams(s).is_empty(), "{}", s.display());
        assert!(perf_reads(s) > 100, "{}", s.display());
    }
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        2,
        "no hidden leftovers"
    );
}
