//! Damaged files (the generated corpus of them: corpus.rs) get a one-line error that names the offset and exit code 1:
//! never a panic (101), never an unbounded allocation.

use crate::common;

mod corpus;

use std::path::Path;

use common::*;

fn fails_cleanly(path: &Path, needle: &str) {
    for cmd in ["stat", "decompress"] {
        let out_file = path.with_extension("out");
        let args: Vec<&str> = if cmd == "stat" {
            vec!["stat", path.to_str().unwrap()]
        } else {
            vec![
                "decompress",
                path.to_str().unwrap(),
                "-o",
                out_file.to_str().unwrap(),
            ]
        };
        let out = perfz(&args);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{cmd} {}: {err}",
            path.display()
        );
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{cmd}: not one line: {err}"
        );
        assert!(err.contains(needle), "{cmd}: {err:?} lacks {needle:?}");
        assert!(!out_file.exists(), "{cmd}: left a partial output behind");
        let tmp = out_file.with_file_name(format!(
            "{}.perfz-tmp",
            out_file.file_name().unwrap().to_str().unwrap()
        ));
        assert!(!tmp.exists(), "{cmd}: left its temporary file behind");
    }
}

fn patched(name: &str, dir: &Path, f: impl FnOnce(&mut Vec<u8>)) -> std::path::PathBuf {
    let mut b = std::fs::read(fixture(name)).unwrap();
    f(&mut b);
    let p = dir.join(format!("{name}.bad.data"));
    std::fs::write(&p, &b).unwrap();
    p
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn wrong_magic() {
    let dir = tempdir("magic");
    let p = patched("z1-cmd", &dir, |b| b[..8].copy_from_slice(b"NOTPERF!"));
    fails_cleanly(&p, "not a perf.data file");
}

#[test]
fn absurd_sizes() {
    let dir = tempdir("sizes");
    // data.size far past the end of the file
    let p = patched("z1-cmd", &dir, |b| put_u64(b, 48, 1 << 40));
    fails_cleanly(&p, "lies past the end");
    // attr_size 0
    let p = patched("z1-cmd", &dir, |b| put_u64(b, 16, 0));
    fails_cleanly(&p, "attr_size 0");
    // attr.size larger than the entry
    let p = patched("z1-cmd", &dir, |b| {
        b[120 + 4..120 + 8].copy_from_slice(&4000u32.to_le_bytes())
    });
    fails_cleanly(&p, "does not fit");
}

/// Offset of HEADER_COMPRESSED's payload in a file-mode fixture.
fn compressed_feature_at(b: &[u8]) -> usize {
    let data_off = u64::from_le_bytes(b[40..48].try_into().unwrap());
    let data_size = u64::from_le_bytes(b[48..56].try_into().unwrap());
    let bitmap = u64::from_le_bytes(b[72..80].try_into().unwrap());
    assert!(bitmap & (1 << 27) != 0);
    let idx = (bitmap & ((1 << 27) - 1)).count_ones() as usize;
    let entry = (data_off + data_size) as usize + 16 * idx;
    u64::from_le_bytes(b[entry..entry + 8].try_into().unwrap()) as usize
}

#[test]
fn mmap_len_zero_or_4gib() {
    let dir = tempdir("mmaplen");
    for v in [0u32, u32::MAX] {
        let p = patched("z1-cmd", &dir, |b| {
            let at = compressed_feature_at(b) + 16;
            b[at..at + 4].copy_from_slice(&v.to_le_bytes());
        });
        fails_cleanly(&p, &format!("declares mmap_len {v}"));
    }
}

#[test]
fn corrupt_compressed_payload_names_the_record() {
    let dir = tempdir("corrupt");
    let at = first_record(&std::fs::read(fixture("z1-cmd")).unwrap(), 81);
    let p = patched("z1-cmd", &dir, |b| {
        for x in &mut b[at + 8 + 20..at + 8 + 60] {
            *x ^= 0x5a;
        }
    });
    fails_cleanly(&p, &format!("at offset {at:#x}: cannot decompress"));
}

/// File offset of the first record of `type_` in a file-mode fixture.
fn first_record(b: &[u8], type_: u32) -> usize {
    let mut at = u64::from_le_bytes(b[40..48].try_into().unwrap()) as usize;
    loop {
        let t = u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        if t == type_ {
            return at;
        }
        at += u16::from_le_bytes(b[at + 6..at + 8].try_into().unwrap()) as usize;
    }
}

#[test]
fn a_record_lying_about_its_size() {
    let dir = tempdir("lying");
    let at = first_record(&std::fs::read(fixture("z1-cmd")).unwrap(), 68);
    assert_eq!(
        at % 8,
        3,
        "the first FINISHED_ROUND follows a COMPRESSED record, unaligned"
    );
    // The FINISHED_ROUND claims 60000 bytes...
    let p = patched("z1-cmd", &dir, |b| {
        b[at + 6..at + 8].copy_from_slice(&60000u16.to_le_bytes())
    });
    fails_cleanly(&p, &format!("at offset {at:#x}"));
    // ... or 3 bytes, smaller than its header.
    let p = patched("z1-cmd", &dir, |b| {
        b[at + 6..at + 8].copy_from_slice(&3u16.to_le_bytes())
    });
    fails_cleanly(&p, "below its 8-byte header");
}

#[test]
fn truncation_anywhere_is_an_error_not_a_panic() {
    let dir = tempdir("trunc");
    for name in ["z1-cmd", "pipe-cmd", "zpipe-cmd"] {
        let full = std::fs::read(fixture(name)).unwrap();
        for cut in (0..full.len()).step_by(97).chain([full.len() - 1]) {
            let p = dir.join(format!("{name}.{cut}.data"));
            std::fs::write(&p, &full[..cut]).unwrap();
            let out = perfz(&["stat", p.to_str().unwrap()]);
            let code = out.status.code();
            // A pipe stream cut exactly between records is a valid shorter stream.
            assert!(
                code == Some(1) || code == Some(0),
                "{name} cut at {cut}: {code:?} {}",
                String::from_utf8_lossy(&out.stderr)
            );
            if name.starts_with('z') && !name.contains("pipe") {
                assert_eq!(code, Some(1), "{name} cut at {cut} was accepted");
            }
        }
    }
}

#[test]
fn feature_sections_past_the_end_are_named() {
    let dir = tempdir("featpast");
    // The first feature's section pointer moved past the end of the file.
    let p = patched("z1-cmd", &dir, |b| {
        let data_end = (u64::from_le_bytes(b[40..48].try_into().unwrap())
            + u64::from_le_bytes(b[48..56].try_into().unwrap())) as usize;
        b[data_end..data_end + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    });
    fails_cleanly(&p, "feature HOSTNAME");
    // ... or claiming 2^60 bytes.
    let p = patched("z1-cmd", &dir, |b| {
        let data_end = (u64::from_le_bytes(b[40..48].try_into().unwrap())
            + u64::from_le_bytes(b[48..56].try_into().unwrap())) as usize;
        b[data_end + 8..data_end + 16].copy_from_slice(&(1u64 << 60).to_le_bytes());
    });
    fails_cleanly(&p, "feature HOSTNAME");
}
