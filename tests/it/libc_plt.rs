//! libc's own PLT: its IRELATIVE entries (libc's calls to its own IFUNCs,
//! strdup's to strlen and memcpy) are named as perf 6.12 and 7.3 name
//! them, by the symbol perf keeps at the resolver among the symbols it
//! loaded for libc (its debug file's .symtab, libc6-dbg):
//! `memcpy@@GLIBC_2.14@plt`, where the resolver's other names are the
//! local `memcpy` and `__GI_memcpy`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::common;

use common::inferno::{parse, reference_by, Folded};
use common::*;

/// The weight of each leaf frame named `…@plt`.
fn plt_leaves(f: &Folded) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for (stack, n) in f {
        let leaf = stack.rsplit(';').next().unwrap_or_default();
        if leaf.ends_with("@plt") {
            *m.entry(leaf.to_string()).or_default() += n;
        }
    }
    m
}

/// libc's debug file, which names its symbols as perf names them here.
fn require_libc_debug() {
    let o = Command::new("readelf")
        .args(["-n", "/lib/x86_64-linux-gnu/libc.so.6"])
        .output_within();
    let notes = String::from_utf8_lossy(&o.stdout).into_owned();
    let id = notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .unwrap_or_else(|| panic!("libc.so.6 has no build id: {notes}"));
    let debug = format!("/usr/lib/debug/.build-id/{}/{}.debug", &id[..2], &id[2..]);
    assert!(
        Path::new(&debug).exists(),
        "no {debug}: run tests/setup.sh (it installs libc6-dbg)"
    );
}

/// The samples in libc's PLT entries, by entry, are perf 6.12's and 7.3's:
/// before, the IFUNC entries were named by libc's own .dynsym
/// (`memcpy@plt`), not by the symbols perf loaded for it.
#[test]
fn libcs_own_plt_entries_are_named_as_perf_names_them() {
    require_recording();
    require_libc_debug();
    let (new, seven) = (perf_new(), perf_7());
    let dir = tempdir("libc-plt");
    let program = dir.join("plt_libc");
    let st = Command::new("cc")
        .args(["-O2", "-g", "-fno-omit-frame-pointer"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workload/plt_libc.c"))
        .arg("-o")
        .arg(&program)
        .status_within();
    assert!(st.success(), "building plt_libc.c");
    let data = dir.join("plt.data");
    let mut said = Vec::new();
    // How many samples land in an entry depends on the CPU: the workload
    // runs for more of its own CPU time until perf sees 20 there.
    for seconds in ["0.5", "2", "8"] {
        let d = data.to_str().unwrap();
        perfz_ok(
            &["record", "-q", "-F", "4000", "-g", "-o", d, "--"]
                .into_iter()
                .chain([program.to_str().unwrap(), seconds])
                .collect::<Vec<_>>(),
        );
        let want = plt_leaves(&reference_by(&new, &data, &[], &[]));
        let versioned: u64 = want
            .iter()
            .filter(|(k, _)| k.contains("@@GLIBC_"))
            .map(|(_, n)| n)
            .sum();
        // cpu-clock's period at -F 4000: 250 us a sample.
        said.push(format!(
            "{} samples in {seconds} s: {want:?}",
            versioned / 250_000
        ));
        if versioned / 250_000 < 20 {
            continue;
        }
        let got = plt_leaves(&parse(
            &String::from_utf8(perfz_ok(&["export", d]).stdout).unwrap(),
        ));
        assert_eq!(got, want, "perfz against perf 6.12");
        let by_7 = plt_leaves(&reference_by(&seven, &data, &[], &[]));
        assert_eq!(got, by_7, "perfz against perf 7.3");
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    panic!("perf saw too few samples in libc's versioned PLT entries: {said:?}");
}
