//! `--flight-recorder SIZE`: the newest SIZE bytes of compressed trace in
//! memory, written on SIGUSR2, `--control` `snapshot`, and at the end.

use crate::common;

use std::io::{Read, Write};
use std::path::Path;

use common::*;
use perfz::format::{PerfReader, RecordType};

/// (samples, first and last sample time in ns)
fn window(path: &Path) -> (u64, u64, u64) {
    let mut r = PerfReader::open(path).unwrap();
    let (mut n, mut lo, mut hi) = (0, u64::MAX, 0);
    while let Some((rec, meta)) = r.next_record().unwrap() {
        if rec.header.type_ == RecordType::SAMPLE {
            n += 1;
            if let Ok(Some(s)) = meta.parse_sample(&rec) {
                let t = s.time.unwrap_or(0);
                lo = lo.min(t);
                hi = hi.max(t);
            }
        }
    }
    (n, lo, hi)
}

/// Bytes of the COMPRESSED records of a file.
fn compressed_bytes(path: &Path) -> u64 {
    let mut r = PerfReader::open(path).unwrap();
    let mut n = 0;
    while let Some((rec, _)) = r.next_record().unwrap() {
        if rec.header.type_.is_compressed() {
            n += rec.bytes.len() as u64;
        }
    }
    n
}

fn report(file: &Path) -> String {
    run_perf(
        &perf(),
        // No children: perf 6.1 adds them up slowly over deep recursion.
        &[
            "report",
            "--stdio",
            "--no-children",
            "-i",
            file.to_str().unwrap(),
        ],
    )
}

#[test]
fn the_snapshot_holds_the_late_phase_not_the_early_one() {
    require_recording();
    let dir = tempdir("flight-phases");
    let wl = phases_workload();
    for (codec, perf_reads) in [("zstd:1", true), ("lz4", false)] {
        let base = format!("{}.data", codec.replace(':', ""));
        let out = dir.join(&base);
        perfz_ok(&[
            "record",
            "-q",
            "--flight-recorder",
            "48K",
            "--codec",
            codec,
            "-F",
            "999",
            "--call-graph",
            "dwarf,4096",
            // A 64 KiB ring: one push is at most that much.
            "-m",
            "16",
            "-o",
            out.to_str().unwrap(),
            wl.to_str().unwrap(),
            "6",
        ]);
        let files = outputs_named(&dir, &base);
        assert_eq!(files.len(), 1, "one snapshot at the end: {files:?}");
        // The workload's phases are 3 s of its CPU time each: at 999 Hz
        // the 48K window holds far fewer samples than phase two made.
        let (n, ..) = window(&files[0]);
        assert!(n > 100, "{codec}: {n} samples");
        assert!(n < 2500, "{codec}: {n} samples: more than phase two made");
        let readable = if perf_reads {
            files[0].clone()
        } else {
            let z = dir.join("as-zstd.data");
            perfz_ok(&[
                "recompress",
                files[0].to_str().unwrap(),
                "-o",
                z.to_str().unwrap(),
                "--codec",
                "zstd:1",
            ]);
            z
        };
        assert_eq!(perf_sample_count(&perf(), &readable), n);
        let rep = report(&readable);
        assert!(rep.contains("perfz_phase_two"), "{codec}: {rep}");
        assert!(
            !rep.contains("perfz_phase_one"),
            "{codec}: the early phase fell out: {rep}"
        );
        // Bounded memory: the snapshot's compressed trace is at most SIZE
        // plus the open segment (16 KiB) and one push (a 64 KiB ring, and
        // a codec's worst case on it).
        let held = compressed_bytes(&files[0]);
        let bound = (48 << 10) + (16 << 10) + (64 << 10) + (4 << 10);
        assert!(held > 0 && held <= bound, "{codec}: {held} > {bound}");
    }
}

#[test]
fn snapshots_on_signal_and_control_each_open_in_perf() {
    require_recording();
    let dir = tempdir("flight-signal");
    let (ctl, ack) = (dir.join("ctl"), dir.join("ack"));
    mkfifo(&ctl);
    mkfifo(&ack);
    let out = dir.join("s.data");
    let control = format!("--control=fifo:{},{}", ctl.display(), ack.display());
    let args = ["-q", "--flight-recorder", "1M", "-F", "999", "-g", &control];
    let mut child = spawn_record(&args, &out, "20");
    let perfz_pid = child.id();
    let wait_for = |n: usize| wait_for_outputs(&dir, "s.data", n, || true);
    // Each snapshot waits for the workload to have run 0.3 s more CPU
    // time (≈ 300 samples at 999 Hz), however busy the machine is.
    let mut ran = wait_cpu(perfz_pid, 0.3);
    // SAFETY: signals our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGUSR2) };
    wait_for(1);
    ran = wait_cpu(perfz_pid, ran + 0.3);
    let mut c = std::fs::OpenOptions::new().write(true).open(&ctl).unwrap();
    let mut a = std::fs::File::open(&ack).unwrap();
    c.write_all(b"snapshot\n").unwrap();
    let mut buf = [0u8; 4];
    a.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"ack\n");
    wait_for(2);
    wait_cpu(perfz_pid, ran + 0.3);
    c.write_all(b"stop\n").unwrap();
    a.read_exact(&mut buf).unwrap();
    assert!(child.wait_within("child").success());
    let files = outputs_named(&dir, "s.data");
    assert_eq!(files.len(), 3, "SIGUSR2, snapshot, the end: {files:?}");
    assert!(!out.exists(), "nothing is written but snapshots");
    for f in &files {
        let (n, ..) = window(f);
        assert!(n > 100, "{}: {n}", f.display());
        assert_eq!(perf_sample_count(&perf(), f), n);
        assert!(report(f).contains("perfz_workload_leaf"), "{}", f.display());
    }
}
