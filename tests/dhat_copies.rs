//! Copies per ring byte, measured: valgrind's DHAT in copy mode counts every
//! memcpy/memmove of the process, libraries included (libzstd's window copy
//! too). Each push path runs once in a child process (this test binary,
//! re-executed under valgrind); a child that builds the same pusher but
//! pushes nothing is the baseline subtracted from it. The result must match
//! what docs/BENCHMARKS.md states and what the copy meter reports.
//!
//! Needs valgrind (`apt-get install -y valgrind`); fails with that fix when
//! it is missing.

#[path = "it/common/mod.rs"]
mod common;

use std::fs::File;
use std::path::Path;
use std::process::Command;

use perfz::codecs::{Codec, CodecSpec, CodecVisitor, Input};
use perfz::format::writer::{FileWriter, PipeWriter};
use perfz::format::{Attr, AttrEntry, FeatureSet};
use perfz::push::{AsyncSink, CopyMeter, Pusher, SerialSink, Sink, ThreadBackend};
use perfz::{pushes, ring_stream, varied_stream};

const CHILD_ENV: &str = "PERFZ_DHAT_CHILD";
const PUSH: usize = 256 * 1024;
/// Ring bytes each child pushes.
const STREAM: usize = 1 << 20;
/// DHAT also counts small copies that scale with the work (zstd's block
/// bookkeeping, snappy's tail handling): allowed per ring byte.
const TOLERANCE: f64 = 0.08;

/// One child's job: `sink codec mode`, mode = fused | layered | nothing.
struct Child {
    sink: String,
    mode: String,
    stream: Vec<u8>,
}

fn devnull_writer() -> FileWriter<File> {
    let f = File::options().write(true).open("/dev/null").unwrap();
    FileWriter::new(
        f,
        &[AttrEntry {
            attr: Attr::new(),
            ids: vec![1],
            name: None,
        }],
    )
    .unwrap()
}

fn run<C: Codec, S: Sink>(mut p: Pusher<C, S, CopyMeter>, stream: &[u8], mode: &str) -> String {
    let mut staging = Vec::with_capacity(PUSH * 2);
    for region in pushes(stream, PUSH) {
        match mode {
            "nothing" => {}
            "fused" => p.push(region).unwrap(),
            // A staging copy before the codec, as a recorder without the
            // compressing memcpy would make.
            _ => {
                staging.clear();
                staging.extend_from_slice(region.first);
                staging.extend_from_slice(region.second);
                p.push(Input::one(&staging)).unwrap();
            }
        }
    }
    let c = p.meter.0;
    format!(
        "meter {} {} {}",
        c.ring_bytes, c.memcpy_bytes, c.written_bytes
    )
}

impl CodecVisitor for Child {
    type Output = String;
    fn visit<C: Codec + Send + 'static>(self, codec: C) -> String {
        match self.sink.as_str() {
            "serial" => run(
                Pusher::new(codec, SerialSink::new(devnull_writer())),
                &self.stream,
                &self.mode,
            ),
            "pipe" => {
                let f = File::options().write(true).open("/dev/null").unwrap();
                let w = PipeWriter::new(f, &[], &FeatureSet::default()).unwrap();
                run(
                    Pusher::new(codec, SerialSink::new(w)),
                    &self.stream,
                    &self.mode,
                )
            }
            _ => {
                // The pwrite thread: valgrind does not model io_uring.
                let w = devnull_writer();
                let b = ThreadBackend::new(w.get_ref()).unwrap();
                run(
                    Pusher::new(codec, AsyncSink::new(w, b, 1, PUSH * 2)),
                    &self.stream,
                    &self.mode,
                )
            }
        }
    }
}

fn stream() -> Vec<u8> {
    let base = ring_stream(&common::fixture("z3-wrap-cmd")).unwrap();
    varied_stream(&base, STREAM)
}

/// The child side: runs one job and prints the meter's counts.
fn child(job: &str) {
    let a: Vec<&str> = job.split(' ').collect();
    let spec: CodecSpec = a[1].parse().unwrap();
    let out = spec
        .visit(Child {
            sink: a[0].into(),
            mode: a[2].into(),
            stream: stream(),
        })
        .unwrap();
    println!("{out}");
}

/// Runs one job under DHAT: (bytes DHAT saw copied, meter ring bytes,
/// meter memcpy bytes, bytes written).
fn measure(job: &str) -> (u64, u64, u64, u64) {
    let dir = common::tempdir("dhat");
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("valgrind")
        .arg("--tool=dhat")
        .arg("--mode=copy")
        .arg(format!("--dhat-out-file={}", dir.join("d.json").display()))
        .arg(&exe)
        .args([
            "--exact",
            "copies_per_ring_byte_are_measured",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, job)
        .output()
        .unwrap_or_else(|e| {
            panic!("this test needs valgrind ({e}): install it (apt-get install -y valgrind)")
        });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{job}: {stderr}");
    let total: u64 = stderr
        .lines()
        .find_map(|l| l.split("Total:").nth(1))
        .and_then(|t| t.split("bytes").next())
        .map(|n| n.trim().replace(',', "").parse().unwrap())
        .unwrap_or_else(|| panic!("{job}: no DHAT total in {stderr}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let meter: Vec<u64> = stdout
        .lines()
        .find_map(|l| l.split("meter ").nth(1))
        .unwrap_or_else(|| panic!("{job}: no meter line in {stdout}"))
        .split_whitespace()
        .take(3)
        .map(|n| n.parse().unwrap())
        .collect();
    (total, meter[0], meter[1], meter[2])
}

#[test]
fn copies_per_ring_byte_are_measured() {
    if let Ok(job) = std::env::var(CHILD_ENV) {
        // The re-executed child under valgrind: do one job, nothing else.
        return child(&job);
    }
    assert!(
        Path::new("/usr/bin/valgrind").exists()
            || Command::new("valgrind").arg("--version").output().is_ok(),
        "this test needs valgrind: install it (apt-get install -y valgrind)"
    );
    let mut table = String::new();
    let mut failures = Vec::new();
    for sink in ["serial", "pipe", "async"] {
        for spec in ["none", "zstd:1", "zstd:1,oneshot", "lz4", "snappy"] {
            let codec: CodecSpec = spec.parse().unwrap();
            let (base, ..) = measure(&format!("{sink} {spec} nothing"));
            for mode in ["fused", "layered"] {
                let (total, ring, memcpy, written) = measure(&format!("{sink} {spec} {mode}"));
                let per_byte = total.saturating_sub(base) as f64 / ring as f64;
                // What the design says: raw records cost one copy only where
                // they go into an async buffer; codecs compress from the ring
                // (0); streaming zstd and lz4 copy their input into a window (+1)
                // and, filling record windows smaller than a worst-case
                // block, its output out of its own staging buffer (+ the
                // compressed bytes per ring byte) — both libzstd's; and a
                // staging buffer before the codec adds exactly 1.
                let raw = codec == CodecSpec::None;
                // Streaming zstd's records are cut in the compressor's own
                // window, kept across pushes (src/push/cutter.rs): the
                // serial sink writes them from there, the async sink copies
                // them into its buffer (+ the compressed bytes per ring byte).
                let ours = match (raw, spec, sink) {
                    (true, _, "async") => 1.0,
                    (false, "zstd:1" | "lz4", "async") => written as f64 / ring as f64,
                    _ => 0.0,
                };
                // lz4 (one frame stream cut by output): lz4_flex's frame
                // encoder copies its input into its window (+1) and each
                // block twice: into its output buffer, then into the record
                // window (+ 2 x the compressed bytes per ring byte).
                let window = match spec {
                    "zstd:1" => 1.0 + written as f64 / ring as f64,
                    "lz4" => 1.0 + 2.0 * written as f64 / ring as f64,
                    _ => 0.0,
                };
                let staging = if mode == "layered" { 1.0 } else { 0.0 };
                let want = ours + window + staging;
                let meter = memcpy as f64 / ring as f64;
                table += &format!(
                    "{sink:<7} {spec:<15} {mode:<8} dhat {per_byte:.3} want {want:.3} meter {meter:.2}\n"
                );
                if (per_byte - want).abs() > TOLERANCE {
                    failures.push(format!(
                        "{sink} {spec} {mode}: DHAT {per_byte:.3} copies/byte, expected {want}"
                    ));
                }
                if (meter - ours).abs() > 1e-9 {
                    failures.push(format!(
                        "{sink} {spec} {mode}: meter {meter:.3}, expected {ours}"
                    ));
                }
            }
        }
    }
    eprintln!("{table}");
    assert!(failures.is_empty(), "{}\n{table}", failures.join("\n"));
}
