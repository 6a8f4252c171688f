//! Dwarf unwinding where a frame has no CFI (issue 42): V8's builtins in
//! node's embedded blob have no FDE, and a sample whose leaf is one of
//! them was unwound as if the leaf were at its first instruction, ending
//! the stack there (22 % of the samples of tests/workload/sort.js were a
//! lone `Builtins_ArrayTimSort`). perf's unwinder walks the frame pointer
//! there, into the JIT frames and node's own; so does the export now.

use std::path::Path;
use std::process::Command;

use crate::common::inferno::{parse, Folded};
use crate::common::*;

/// node on PATH, or the test fails with the fix.
fn require_node() {
    let ok = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "this test records node, which is missing: run tests/setup.sh (apt-get install nodejs)"
    );
}

/// The weight of stacks of one frame that is a V8 builtin, and the total.
fn lone_builtins(f: &Folded) -> (u64, u64) {
    let lone = f
        .iter()
        .filter(|(k, _)| {
            let frames: Vec<&str> = k.split(';').skip(1).collect();
            frames.len() == 1 && frames[0].starts_with("Builtins_")
        })
        .map(|(_, n)| n)
        .sum();
    (lone, f.values().sum())
}

/// The processes' JIT maps (/tmp/perf-PID.map) go with the test.
fn remove_jit_maps(folded_with_pids: &Folded) {
    let pids = folded_with_pids.keys().filter_map(|k| {
        let comm = k.split(';').next()?;
        comm.rsplit_once('-').map(|(_, pid)| pid.to_string())
    });
    for pid in pids.collect::<std::collections::BTreeSet<_>>() {
        let _ = std::fs::remove_file(format!("/tmp/perf-{pid}.map"));
    }
}

#[test]
fn node_builtins_without_cfi_are_left_by_their_frame_pointer() {
    require_recording();
    require_node();
    let dir = tempdir("export-fp-fallback");
    let data = dir.join("sort.data");
    let js = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workload/sort.js");
    let o = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args(["record", "-q", "--call-graph", "dwarf", "-o"])
        .arg(&data)
        .args(["--", "node", "--perf-basic-prof"])
        .arg(&js)
        .arg("1")
        .current_dir(&dir)
        .output_within();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = perfz_ok(&["export", "--pid", data.to_str().unwrap()]);
    let got = parse(&String::from_utf8(out.stdout).unwrap());
    remove_jit_maps(&got);
    let (lone, total) = lone_builtins(&got);
    let in_sort: u64 = got
        .iter()
        .filter(|(k, _)| k.contains("Builtins_ArrayTimSort"))
        .map(|(_, n)| n)
        .sum();
    assert!(
        in_sort * 5 > total,
        "{in_sort} of {total} in Builtins_ArrayTimSort: the workload sorted too little to test"
    );
    assert!(
        lone * 100 <= total,
        "{:.1} % of the weight ends at a lone builtin (at most 1 %)",
        lone as f64 * 100.0 / total as f64
    );
    let _ = std::fs::remove_dir_all(&dir);
}
