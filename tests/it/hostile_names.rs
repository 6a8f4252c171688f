//! Symbol names no compiler writes, as any user can give them (an ELF
//! symbol, a line of their own JIT's /tmp/perf-PID.map): every export and
//! the own report table name the frame, without a panic and within a
//! bound, as perf names it.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;
use crate::export_inputs::anon_recording;

use common::*;

/// A JIT map, removed when the test ends, passed or failed.
struct PerfMap(PathBuf);

impl Drop for PerfMap {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// What names a frame: the folded stacks, the pprof profile (ungzipped
/// by gzip), the own report table; each command exits 0.
struct Views {
    folded: String,
    pprof: Vec<u8>,
    report: String,
}

fn views(data: &Path, dir: &Path) -> Views {
    let d = data.to_str().unwrap();
    let folded = perfz_ok(&["export", d]).stdout;
    let profile = dir.join("names.pb.gz");
    let p = profile.to_str().unwrap();
    perfz_ok(&["export", "--format", "pprof", "-o", p, d]);
    let gunzip = Command::new("gzip").args(["-dc", p]).output_within();
    assert!(gunzip.status.success(), "gzip -dc {p}");
    let report = perfz_ok(&["report", "--own", d]).stdout;
    Views {
        folded: String::from_utf8_lossy(&folded).into_owned(),
        pprof: gunzip.stdout,
        report: String::from_utf8_lossy(&report).into_owned(),
    }
}

/// The recording of tests/workload/anon_code.c with `name` over its loop
/// in its JIT map: the views of it, and perf script's symbols.
fn named_loop(dir: &Path, data: &Path, pid: u32, base: u64, name: &str) -> (Views, String) {
    let map = PerfMap(PathBuf::from(format!("/tmp/perf-{pid}.map")));
    std::fs::write(&map.0, format!("{base:x} 1000 {name}\n")).unwrap();
    let v = views(data, dir);
    let perf_says = Command::new(perf())
        .args(["script", "-F", "ip,sym", "-i"])
        .arg(data)
        .output_within();
    drop(map);
    (v, String::from_utf8_lossy(&perf_says.stdout).into_owned())
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// `_ZN` `é` 18 × `x` `E`: the legacy-Rust test sliced the name 19 bytes
/// from its end, inside the `é`, and every export and the own report
/// panicked (exit 101). perf names the samples with it.
#[test]
fn a_name_whose_tail_cuts_a_char_names_the_frame_in_every_view() {
    require_recording();
    let dir = tempdir("hostile-name-char");
    let (data, pid, base) = anon_recording(&dir);
    let name = format!("_ZN\u{e9}{}E", "x".repeat(18));
    let (v, perf_says) = named_loop(&dir, &data, pid, base, &name);
    assert!(perf_says.contains(&name), "perf script: {perf_says}");
    assert!(v.folded.contains(&name), "{}", v.folded);
    assert!(contains(&v.pprof, &name), "pprof names the loop {name}");
    assert!(v.report.contains(&name), "{}", v.report);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Names of a few hundred bytes whose back-references double the text
/// with every level: Rust v0 (rustc-demangle writes 1 MB of it) and C++
/// (GNU's demangler, 13 MB). Each view holds the name mangled, as perf
/// 7.3 leaves the Rust one, and no more than a bound's worth of text.
#[test]
fn names_that_demangle_to_megabytes_are_left_mangled_in_every_view() {
    require_recording();
    let dir = tempdir("hostile-name-long");
    let (data, pid, base) = anon_recording(&dir);
    let rust = "_RINvC1a1fhTB7_B7_ETB8_B8_ETBg_Bg_ETBo_Bo_ETBw_Bw_ETBE_BE_ETBM_BM_ETBU_BU_ETB12_B12_ETB1a_B1a_ETB1k_B1k_ETB1u_B1u_ETB1E_B1E_ETB1O_B1O_ETB1Y_B1Y_ETB28_B28_ETB2i_B2i_ETB2s_B2s_ETB2C_B2C_ETB2M_B2M_ETB2W_B2W_ETB36_B36_EE";
    let mut cpp = String::from("_Z1f1A1BIS_S_E");
    for k in b"123456789ABCDEFGHI" {
        let s = format!("S{}_", *k as char);
        cpp += &format!("S0_I{s}{s}E");
    }
    for name in [rust, &cpp] {
        let (v, _) = named_loop(&dir, &data, pid, base, name);
        assert!(v.folded.contains(name), "{name}: {:.400}", v.folded);
        assert!(
            v.folded.len() < 64 << 10,
            "{name}: {} bytes of folded stacks",
            v.folded.len()
        );
        assert!(contains(&v.pprof, name), "pprof names the loop {name}");
        assert!(
            v.pprof.len() < 64 << 10,
            "{name}: a pprof profile of {} bytes",
            v.pprof.len()
        );
        assert!(v.report.contains(name), "{name}: {:.400}", v.report);
        assert!(
            v.report.len() < 64 << 10,
            "{name}: {} bytes",
            v.report.len()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
