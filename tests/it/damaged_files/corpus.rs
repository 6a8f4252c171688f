//! A corpus of broken files, built here from the fixtures: truncated at every
//! record boundary, with random bit flips, with size fields set to extremes.
//! `perfz stat` and `perfz decompress` must answer each with exit code 0 (the
//! damage was harmless) or 1 with a one-line message — never a panic (101),
//! never a death by signal, and never more memory than a 1 GiB address-space
//! limit allows.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::*;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Outer record offsets of a file-mode or pipe-mode file.
fn record_offsets(b: &[u8]) -> Vec<usize> {
    let size = u64::from_le_bytes(b[8..16].try_into().unwrap());
    let (mut at, end) = if size == 16 {
        (16usize, b.len())
    } else {
        let off = u64::from_le_bytes(b[40..48].try_into().unwrap()) as usize;
        (
            off,
            off + u64::from_le_bytes(b[48..56].try_into().unwrap()) as usize,
        )
    };
    let mut out = Vec::new();
    while at + 8 <= end.min(b.len()) {
        out.push(at);
        let s = u16::from_le_bytes([b[at + 6], b[at + 7]]) as usize;
        if s < 8 {
            break;
        }
        at += s;
    }
    out
}

fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let dir = tempdir("broken-src");
    let lz4 = dir.join("z1.lz4.data");
    perfz_ok(&[
        "recompress",
        "--codec",
        "lz4",
        fixture("z1-cmd").to_str().unwrap(),
        "-o",
        lz4.to_str().unwrap(),
    ]);
    let mut sources: Vec<(String, Vec<u8>)> = [
        "z1-cmd",
        "z3-wrap-cmd",
        "pipe-cmd",
        "zpipe-cmd",
        "z-2events-cmd",
    ]
    .iter()
    .map(|n| (n.to_string(), std::fs::read(fixture(n)).unwrap()))
    .collect();
    sources.push(("z1-lz4".into(), std::fs::read(&lz4).unwrap()));
    let mut rng = Rng(0x5eed_1234_abcd_9876);
    for (name, b) in &sources {
        let offs = record_offsets(b);
        // Truncation at every record boundary, and one byte into each record.
        for &o in &offs {
            out.push((format!("{name}-cut{o}"), b[..o].to_vec()));
            out.push((format!("{name}-cut{o}+1"), b[..o + 1].to_vec()));
        }
        // Size fields at extremes: every outer record's size.
        for &o in offs.iter().step_by(3) {
            for v in [0u16, 7, 9, 65535] {
                let mut m = b.clone();
                m[o + 6..o + 8].copy_from_slice(&v.to_le_bytes());
                out.push((format!("{name}-size{o}={v}"), m));
            }
        }
        // Header fields at extremes (file mode): attr_size, attrs, data, bitmap.
        if u64::from_le_bytes(b[8..16].try_into().unwrap()) == 104 {
            for at in [16usize, 24, 32, 40, 48, 72, 80] {
                for v in [0u64, 1, u64::MAX, u64::MAX / 2, 1 << 40] {
                    let mut m = b.clone();
                    m[at..at + 8].copy_from_slice(&v.to_le_bytes());
                    out.push((format!("{name}-hdr{at}={v}"), m));
                }
            }
            // Every feature section pointer at extremes.
            let data_end = (u64::from_le_bytes(b[40..48].try_into().unwrap())
                + u64::from_le_bytes(b[48..56].try_into().unwrap()))
                as usize;
            for e in 0..4 {
                for v in [u64::MAX, 0, data_end as u64] {
                    let mut m = b.clone();
                    let at = data_end + 16 * e + 8 * (rng.next() % 2) as usize;
                    if at + 8 <= m.len() {
                        m[at..at + 8].copy_from_slice(&v.to_le_bytes());
                        out.push((format!("{name}-feat{e}={v}"), m));
                    }
                }
            }
        }
        // Random bit flips, 1 to 8 at a time.
        for i in 0..40 {
            let mut m = b.clone();
            for _ in 0..1 + rng.next() % 8 {
                let at = (rng.next() % m.len() as u64) as usize;
                m[at] ^= 1 << (rng.next() % 8);
            }
            out.push((format!("{name}-flip{i}"), m));
        }
    }
    out
}

fn check(path: &Path, args: &[&str]) {
    let cmd = format!(
        "ulimit -v 1048576; exec {} {}",
        env!("CARGO_BIN_EXE_perfz"),
        args.iter()
            .map(|a| format!("'{a}'"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let out = Command::new("bash").args(["-c", &cmd]).output_within();
    let err = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {}
        Some(1) => {
            assert!(
                err.starts_with("perfz: "),
                "{}: {args:?}: no message: {err}",
                path.display()
            );
            assert_eq!(
                err.trim_end().lines().count(),
                1,
                "{}: {args:?}: not one line: {err}",
                path.display()
            );
        }
        other => panic!(
            "{}: {args:?}: exit {other:?} (101 = panic, None = killed): {err}",
            path.display()
        ),
    }
}

#[test]
fn broken_files_get_an_error_never_a_panic() {
    let dir = tempdir("broken");
    let files = corpus();
    assert!(files.len() > 400, "a real corpus ({} files)", files.len());
    let out = dir.join("out.data");
    for (name, bytes) in &files {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        check(&p, &["stat", p.to_str().unwrap()]);
        check(
            &p,
            &["export", p.to_str().unwrap(), "-o", out.to_str().unwrap()],
        );
        check(
            &p,
            &[
                "decompress",
                p.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
            ],
        );
        let _ = std::fs::remove_file(&p);
    }
}

/// A zstd "bomb": one COMPRESSED record of a few KiB that expands to 256 MiB,
/// in a file that declares perf's usual 516 KiB mmap_len. Reading it must stop
/// at the declared bound with a message, inside a 1 GiB address space.
#[test]
fn a_decompression_bomb_is_refused_within_bounded_memory() {
    use perfz::format::writer::FileWriter;
    use perfz::format::{CompressedInfo, FeatureSet, PerfReader};
    let attrs = PerfReader::open(&fixture("z1-cmd")).unwrap().attrs.clone();
    let zeros = vec![0u8; 256 << 20];
    let payload = zstd_oracle::bulk::compress(&zeros, 19).unwrap();
    assert!(payload.len() < 60_000);
    let mut rec = Vec::new();
    rec.extend_from_slice(&81u32.to_le_bytes());
    rec.extend_from_slice(&0u16.to_le_bytes());
    rec.extend_from_slice(&((8 + payload.len()) as u16).to_le_bytes());
    rec.extend_from_slice(&payload);
    let mut w = FileWriter::new(std::io::Cursor::new(Vec::new()), &attrs).unwrap();
    w.write_records(&rec).unwrap();
    let mut f = FeatureSet::default();
    f.set_compressed(CompressedInfo {
        version: 0,
        codec: 1,
        level: 19,
        ratio: 0,
        mmap_len: 528384,
    });
    let bytes = w.finish(&f).unwrap().into_inner();
    let dir = tempdir("bomb");
    let p = dir.join("bomb.data");
    std::fs::write(&p, bytes).unwrap();
    let cmd = format!(
        "ulimit -v 1048576; exec {} stat {}",
        env!("CARGO_BIN_EXE_perfz"),
        p.display()
    );
    let out = Command::new("bash").args(["-c", &cmd]).output_within();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("expands beyond"), "{err}");
}
