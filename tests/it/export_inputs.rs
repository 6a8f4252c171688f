//! `perfz export` of inputs that are not what they claim (issue 41): a
//! stream that is not a perf.data, a JIT map of junk, maps with entries
//! inside entries, options that contradict each other. Each is refused at
//! once with what to do, or read within bounds, as perf reads it.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;
use crate::hostile_dsos::perfz_with_peak;

use common::*;

/// `sh -c SCRIPT` with PERFZ set to perfz, TMPDIR to `tmp`, and files
/// limited to 2 MiB (a spool that runs away is killed, not the disk).
fn sh_bounded(script: &str, tmp: &Path) -> std::process::Output {
    Command::new("sh")
        .args(["-c", &format!("ulimit -f 2048; {script}")])
        .env("PERFZ", env!("CARGO_BIN_EXE_perfz"))
        .env("TMPDIR", tmp)
        .output_within()
}

#[test]
fn a_stream_without_perfs_header_is_refused_before_it_is_spooled() {
    let dir = tempdir("export-stream");
    let tmp = dir.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // perf script -i - < /dev/zero: "no magic", at once.
    let o = sh_bounded("exec \"$PERFZ\" export - < /dev/zero", &tmp);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("not a perf.data stream"), "{err}");
    assert!(err.contains("PERFILE2"), "{err}");
    // A pipe header, then zeros for ever: read to the first record perf
    // stops at (size 0), not to the end of the disk.
    let header = dir.join("header");
    let mut h = b"PERFILE2".to_vec();
    h.extend_from_slice(&16u64.to_le_bytes());
    std::fs::write(&header, h).unwrap();
    let o = sh_bounded(
        &format!("cat {} /dev/zero | \"$PERFZ\" export -", header.display()),
        &tmp,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("below its 8-byte header"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    assert!(left.is_empty(), "spools left behind: {left:?}");
    // A recording piped in, file mode and pipe mode, still exports.
    let data = fixture("z1-cmd");
    let want = perfz_ok(&["export", data.to_str().unwrap()]).stdout;
    let o = sh_bounded(
        &format!("cat {} | \"$PERFZ\" export -", data.display()),
        &tmp,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.stdout, want);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn contradictory_time_options_are_refused_and_nothing_is_written() {
    require_recording();
    let dir = tempdir("export-contradict");
    let data = dir.join("off.data");
    perfz_ok(&[
        "record",
        "-q",
        "--off-cpu",
        "-o",
        data.to_str().unwrap(),
        "sleep",
        "0.2",
    ]);
    let out = dir.join("out.folded");
    let (d, o) = (data.to_str().unwrap(), out.to_str().unwrap());
    for args in [
        ["-e", "offcpu-time", "--on-cpu-only"],
        ["-e", "cpu-clock", "--off-cpu-only"],
    ] {
        let r = perfz(&[&["export", "-o", o, d][..], &args[..]].concat());
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("give one of them"), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A recording of tests/workload/anon_code.c: (recording, pid, base of
/// its anonymous code, whose loop is at base + 0x800).
pub(crate) fn anon_recording(dir: &Path) -> (PathBuf, u32, u64) {
    let data = dir.join("anon.data");
    let where_ = dir.join("where");
    let w = anon_code_workload();
    let (d, wh) = (data.to_str().unwrap(), where_.to_str().unwrap());
    perfz_ok(&["record", "-q", "-o", d, w.to_str().unwrap(), "0.3", wh]);
    let text = std::fs::read_to_string(&where_).unwrap();
    let (pid, base) = text.trim().split_once(' ').unwrap();
    (
        data,
        pid.parse().unwrap(),
        u64::from_str_radix(base, 16).unwrap(),
    )
}

/// A JIT map that reuses code space (a big entry, a small one inside it:
/// the loop is in the big one alone) and 48 MiB of junk entries whose
/// names are not UTF-8: the loop is named the big entry's, as perf script
/// names it, and reading the map costs about its size, not 7 times it.
#[test]
fn a_perf_map_is_read_by_line_as_bytes_and_its_inner_entries_fall_back_to_outer_ones() {
    require_recording();
    let dir = tempdir("export-perf-map");
    let (data, pid, base) = anon_recording(&dir);
    let map = PathBuf::from(format!("/tmp/perf-{pid}.map"));
    let d = data.to_str().unwrap();
    let cache = dir.join("cache");
    let (_, base_peak) = perfz_with_peak(&cache, &["export", d]);
    let mut text = format!("{base:x} 1000 jit_big_").into_bytes();
    text.extend_from_slice(b"\xff\n");
    text.extend_from_slice(format!("{:x} 100 jit_small\n", base + 0x100).as_bytes());
    let junk_name = [0xffu8; 200];
    let mut at = 0x1000_0000u64;
    while text.len() < 48 << 20 {
        text.extend_from_slice(format!("{at:x} 10 ").as_bytes());
        text.extend_from_slice(&junk_name);
        text.push(b'\n');
        at += 16;
    }
    std::fs::write(&map, &text).unwrap();
    let (folded, peak) = perfz_with_peak(&cache, &["export", d]);
    let perf_says = Command::new(perf())
        .args(["script", "-F", "ip,sym", "-i", d])
        .output_within();
    let _ = std::fs::remove_file(&map);
    assert!(folded.contains("jit_big_"), "{folded}");
    let perf_says = String::from_utf8_lossy(&perf_says.stdout);
    assert!(perf_says.contains("jit_big_"), "perf script: {perf_says}");
    let grown = (peak - base_peak) << 10;
    assert!(
        grown < (text.len() as i64) * 3 / 2,
        "a {} MiB map grew the export by {} MiB",
        text.len() >> 20,
        grown >> 20
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_input_says_its_cause_once() {
    let o = perfz(&["export", "/nonexistent/perf.data"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("os error 2").count(), 1, "{err}");
    assert!(
        err.starts_with("perfz: reading /nonexistent/perf.data: No such file"),
        "{err}"
    );
}
