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
    for seconds in ["0.5", "2"] {
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
        same_names(&data, &want, &seven, &[]);
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    // On some CPUs (AMD EPYC here) the timer never samples an entry's one
    // indirect jump: perf saw none in 8 s. An execute breakpoint on each
    // entry then samples it on any CPU.
    eprintln!("the timer sampled no versioned entry ({said:?}): breakpoints on the entries");
    let versioned = by_breakpoints(&program, &data, &new, &seven);
    assert!(
        versioned > 0,
        "no entry strdup reaches is a versioned one: {said:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// perfz's names of the leaves in `data`'s PLT entries are `want` (perf
/// 6.12's) and perf 7.3's (`perf script` with `script`).
fn same_names(data: &Path, want: &BTreeMap<String, u64>, seven: &Path, script: &[&str]) {
    let got = plt_leaves(&parse(
        &String::from_utf8(perfz_ok(&["export", data.to_str().unwrap()]).stdout).unwrap(),
    ));
    assert_eq!(&got, want, "perfz against perf 6.12");
    let by_7 = plt_leaves(&reference_by(seven, data, script, &[]));
    assert_eq!(got, by_7, "perfz against perf 7.3");
}

/// Each libc PLT entry the workload's strdup reaches, recorded by perf
/// with an execute breakpoint on it (the address space laid out the same
/// each run: `setarch -R`), named by perfz as by perf 6.12 and 7.3: how
/// many of them perf names with a version.
fn by_breakpoints(program: &Path, data: &Path, new: &Path, seven: &Path) -> usize {
    let o = Command::new("setarch")
        .args(["-R"])
        .arg(program)
        .arg("--entries")
        .output_within();
    let entries = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success() && !entries.is_empty(),
        "{} --entries found no libc PLT entry: {entries}",
        program.display()
    );
    let mut versioned = 0;
    for entry in entries.lines().filter_map(|l| l.split_whitespace().nth(1)) {
        let o = Command::new("setarch")
            .args(["-R"])
            .arg(perf())
            .args(["record", "-q", "-c", "100", "-g", "-e"])
            .arg(format!("mem:{entry}:x"))
            .arg("-o")
            .arg(data)
            .arg("--")
            .arg(program)
            .arg("0.1")
            .output_within();
        assert!(
            o.status.success(),
            "perf record with a breakpoint on {entry} (hardware breakpoints needed): {}",
            String::from_utf8_lossy(&o.stderr)
        );
        // inferno reads no event named `mem:ADDR:x:`: perf script leaves
        // the event (and the period: a sample weighs one) out.
        let script = ["-F", "comm,pid,tid,time,ip,sym,dso"];
        let want = plt_leaves(&reference_by(new, data, &script, &[]));
        assert!(
            !want.is_empty(),
            "perf saw no sample in the entry at {entry}"
        );
        versioned += want.keys().filter(|k| k.contains("@@GLIBC_")).count();
        same_names(data, &want, seven, &script);
    }
    versioned
}
