//! Long captures: `--duration`, `--max-size`, `--switch-output` (time, size,
//! signal; every codec, `--aio`), `--switch-max-files`.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use perfz::format::PerfReader;

fn stats(json: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

#[test]
fn duration_and_max_size_stop_with_a_finished_file() {
    require_recording();
    let dir = tempdir("long-stop");
    let out = dir.join("d.data");
    let t = Instant::now();
    let o = perfz_ok(&[
        "record",
        "--duration",
        "0.5",
        "-F",
        "999",
        "-o",
        out.to_str().unwrap(),
        workload().to_str().unwrap(),
        "20",
    ]);
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "--duration 0.5 took {:?}",
        t.elapsed()
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("--duration reached"));
    // Stopped by the duration: at most 0.5 s of one busy thread at 999 Hz
    // (plus slack), however busy the machine is.
    let n = our_sample_count(&out);
    assert!(n > 0 && n < 1000, "{n} samples in 0.5 s at 999 Hz");
    assert_eq!(perf_sample_count(&perf(), &out), n);
    // --max-size: dwarf stacks uncompressed fill 300 KB in well under 20 s.
    // With 64 KiB rings (-m 16) the overshoot has a bound that does not
    // depend on how late a busy machine runs the recorder: the pass that
    // crosses the limit and the final pass drain at most one ring per CPU
    // each (a full ring loses samples, it never grows).
    let rings = perfz::event::cpus::online().unwrap().len() as u64 * (64 << 10);
    let out = dir.join("m.data");
    let t = Instant::now();
    let o = perfz_ok(&[
        "record",
        "-m",
        "16",
        "--max-size",
        "300K",
        "--codec",
        "none",
        "--call-graph",
        "dwarf,8192",
        "-F",
        "2000",
        "-o",
        out.to_str().unwrap(),
        workload().to_str().unwrap(),
        "20",
    ]);
    assert!(t.elapsed() < Duration::from_secs(10));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--max-size reached"));
    let size = std::fs::metadata(&out).unwrap().len();
    // Stopped at the first pass past the limit: two passes of rings more
    // at most, and the header, attrs and features (64 KiB is ample).
    let bound = (300 << 10) + 2 * rings + (64 << 10);
    assert!(
        ((300 << 10)..=bound).contains(&size),
        "{size}, bound {bound}"
    );
    assert_eq!(perf_sample_count(&perf(), &out), our_sample_count(&out));
    // With --threads the data files count together: the thread whose pass
    // crosses the limit wakes the main thread, so each data.N passes it by
    // at most its pass then and the final one (a 64 KiB ring each).
    let out = dir.join("t.data");
    let o = perfz_ok(&[
        "record",
        "--threads",
        "-m",
        "16",
        "--max-size",
        "300K",
        "--codec",
        "none",
        "--call-graph",
        "dwarf,8192",
        "-F",
        "2000",
        "-o",
        out.to_str().unwrap(),
        workload().to_str().unwrap(),
        "20",
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--max-size reached"));
    let total: u64 = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    let streams = std::fs::read_dir(&out)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name() != "data")
        .count() as u64;
    let data = std::fs::metadata(out.join("data")).unwrap().len();
    let bound = (300 << 10) + data + streams * 2 * (64 << 10);
    assert!(
        ((300 << 10)..=bound).contains(&total),
        "{total} bytes in {streams} data.N + data ({data} B), bound {bound}"
    );
    assert_eq!(perf_sample_count(&perf(), &out), our_sample_count(&out));
}

#[test]
fn switched_outputs_lose_and_duplicate_nothing_with_every_codec() {
    require_recording();
    let dir = tempdir("long-switch");
    let wl = workload();
    for (i, extra) in [
        &["--codec", "zstd:1"][..],
        &["--codec", "lz4"][..],
        &["--codec", "none", "--aio=2"][..],
        &["--codec", "zstd:3", "--aio"][..],
    ]
    .iter()
    .enumerate()
    {
        let base = format!("s{i}.data");
        let out = dir.join(&base);
        let json = dir.join(format!("s{i}.json"));
        let mut a = vec![
            "record",
            "--switch-output=1s",
            "-F",
            "999",
            "-g",
            "-o",
            out.to_str().unwrap(),
            "--stats-json",
            json.to_str().unwrap(),
        ];
        a.extend_from_slice(extra);
        a.extend([wl.to_str().unwrap(), "2.6"]);
        perfz_ok(&a);
        assert!(!out.exists(), "every output gets a timestamped name");
        let files = outputs_named(&dir, &base);
        assert!(files.len() >= 3, "{extra:?}: {files:?}");
        let s = stats(&json);
        assert_eq!(s["outputs"].as_array().unwrap().len(), files.len());
        let mut total = 0;
        for f in &files {
            let n = our_sample_count(f);
            total += n;
            // Each output stands alone: perf reads it (lz4 after recompress)
            // and names the workload's functions from its own side band.
            let readable = if extra.contains(&"lz4") {
                let z = dir.join("as-zstd.data");
                perfz_ok(&[
                    "recompress",
                    f.to_str().unwrap(),
                    "-o",
                    z.to_str().unwrap(),
                    "--codec",
                    "zstd:1",
                ]);
                z
            } else {
                f.clone()
            };
            assert_eq!(perf_sample_count(&perf(), &readable), n, "{}", f.display());
            if n > 50 {
                let rep = run_perf(
                    &perf(),
                    &[
                        "report",
                        "--stdio",
                        "--no-children",
                        "-i",
                        readable.to_str().unwrap(),
                    ],
                );
                assert!(
                    rep.contains("perfz_workload_leaf"),
                    "{}: {rep}",
                    f.display()
                );
            }
        }
        assert_eq!(
            total,
            s["samples"].as_u64().unwrap(),
            "{extra:?}: every sample once over all outputs"
        );
    }
}

#[test]
fn switch_on_signal_by_size_and_keep_the_newest() {
    require_recording();
    let dir = tempdir("long-signal");
    let out = dir.join("g.data");
    let mut child = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args(["record", "--switch-output", "-F", "999", "-o"])
        .arg(&out)
        .arg(workload())
        .arg("20")
        .stderr(Stdio::piped())
        .spawn_owned()
        .unwrap();
    let wait_for = |n: usize| wait_for_outputs(&dir, "g.data", n, || out.exists());
    wait_for(0);
    // Each output gets 0.3 s of the workload's CPU time (≈ 300 samples),
    // however busy the machine is.
    let mut ran = 0.0;
    for n in 1..=2 {
        ran = wait_cpu(child.id(), ran + 0.3);
        // SAFETY: signals our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGUSR2) };
        wait_for(n);
    }
    wait_cpu(child.id(), ran + 0.3);
    // SAFETY: as above.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(
        child.wait_within("child").code(),
        Some(STOPPED_WITH_COMMAND)
    );
    let files = outputs_named(&dir, "g.data");
    assert_eq!(files.len(), 3, "two SIGUSR2 then the end: {files:?}");
    for f in &files {
        assert!(our_sample_count(f) > 50, "{}", f.display());
    }
    // By size, keeping the newest two.
    let out = dir.join("z.data");
    let o = perfz_ok(&[
        "record",
        // Small outputs: three or more even when the machine is busy.
        "--switch-output=32K",
        "--switch-max-files",
        "2",
        "--codec",
        "none",
        "-F",
        "1000",
        "--call-graph",
        "dwarf,4096",
        "-o",
        out.to_str().unwrap(),
        workload().to_str().unwrap(),
        // 3 s: beside other tests on 2 CPUs the workload got a fifth of a
        // CPU, and 1 s of it filled only two outputs.
        "3",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("removed the"), "{err}");
    let files = outputs_named(&dir, "z.data");
    assert_eq!(files.len(), 2, "{files:?}");
    for f in &files {
        assert_eq!(perf_sample_count(&perf(), f), our_sample_count(f));
    }
    // A pipe cannot be switched.
    let o = perfz(&["record", "--switch-output", "-o", "-", "true"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot write a pipe"));
}

#[test]
fn perfs_broken_switch_output_files_are_repaired_from_the_earlier_ones() {
    let dir = tempdir("long-repair");
    let broken = dir.join("second.data");
    std::fs::copy(fixture("so-z-second-broken"), &broken).unwrap();
    // perf 6.1 cannot read its own second output.
    let o = Command::new(perf())
        .args(["report", "--stats", "-i"])
        .arg(&broken)
        .output_within();
    let says = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(
        !says.contains("SAMPLE events:") || !o.status.success(),
        "{says}"
    );
    // Alone it does not decode; after the first output it does.
    assert!(PerfReader::open(&broken)
        .and_then(|mut r| {
            while r.next_record()?.is_some() {}
            Ok(())
        })
        .is_err());
    let o = perfz_ok(&[
        "recover",
        broken.to_str().unwrap(),
        "--after",
        fixture("so-z-first").to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("repaired"));
    let n = our_sample_count(&broken);
    assert_eq!(n, 1705, "every sample of perf's run in the second output");
    assert_eq!(perf_sample_count(&perf(), &broken), n);
    // The wrong earlier file is refused, and the file is left as it was.
    let again = dir.join("again.data");
    std::fs::copy(fixture("so-z-second-broken"), &again).unwrap();
    let o = perfz(&[
        "recover",
        again.to_str().unwrap(),
        "--after",
        fixture("z1-cmd").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert_eq!(
        std::fs::read(&again).unwrap(),
        std::fs::read(fixture("so-z-second-broken")).unwrap()
    );
}
