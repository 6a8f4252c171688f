//! Symbols from elsewhere (issue 42): `perfz export --symfs DIR` finds a
//! recording's binaries under DIR + their recorded path (or `DIR,flat`:
//! DIR + their base name), as perf's --symfs; `--kallsyms FILE` names
//! kernel frames from FILE, also those of a recording from another kernel.
//! Both against perf script with the same options.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::inferno::{parse, reference_with, Folded};
use crate::common::*;

/// `perfz export DATA ARGS` with the build-id cache at `cache`.
fn export(data: &Path, args: &[&str], cache: &Path) -> Folded {
    let o = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .env("PERF_BUILDID_DIR", cache)
        .env_remove("DEBUGINFOD_URLS")
        .arg("export")
        .arg(data)
        .args(args)
        .output_within();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    parse(&String::from_utf8(o.stdout).unwrap())
}

fn named(f: &Folded, func: &str) -> u64 {
    f.iter()
        .filter(|(k, _)| k.contains(func))
        .map(|(_, n)| n)
        .sum()
}

/// tests/workload/deep.c built into `dir/build`, recorded with -g (no
/// build-id cache), then moved to `to` (created).
fn recorded_then_moved(dir: &Path, to: impl Fn(&Path) -> PathBuf) -> (PathBuf, PathBuf) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workload/deep.c");
    let prog = dir.join("build/deep");
    std::fs::create_dir_all(prog.parent().unwrap()).unwrap();
    let st = Command::new("cc")
        .args(["-O1", "-g", "-fno-omit-frame-pointer", "-fno-inline", "-o"])
        .arg(&prog)
        .arg(&src)
        .status_within();
    assert!(st.success(), "building deep.c");
    let data = dir.join("r.data");
    let (d, p) = (data.to_str().unwrap(), prog.to_str().unwrap());
    perfz_ok(&["record", "-q", "-N", "-g", "-o", d, "--", p, "0.4"]);
    let moved = to(&prog);
    std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
    std::fs::rename(&prog, &moved).unwrap();
    (data, prog)
}

#[test]
fn symfs_names_the_frames_of_binaries_that_moved_as_perf_does() {
    require_recording();
    let dir = tempdir("export-symfs");
    let symfs = dir.join("symfs");
    let under = |p: &Path| symfs.join(p.strip_prefix("/").unwrap());
    let (data, prog) = recorded_then_moved(&dir, under);
    let cache = dir.join("no-cache");
    let leaf = "perfz_workload_leaf";
    let lost = export(&data, &[], &cache);
    assert_eq!(
        named(&lost, leaf),
        0,
        "{} is gone: nothing names its frames",
        prog.display()
    );
    let s = symfs.to_str().unwrap();
    let want = reference_with(&data, &["--symfs", s], &[]);
    let got = export(&data, &["--symfs", s], &cache);
    let total: u64 = want.values().sum();
    assert!(
        named(&want, leaf) * 2 > total,
        "perf script --symfs names the workload"
    );
    assert_eq!(got.values().sum::<u64>(), total);
    let same: u64 = want
        .iter()
        .map(|(k, n)| (*n).min(got.get(k).copied().unwrap_or(0)))
        .sum();
    assert!(
        same * 100 >= total * 99,
        "{same} of {total} agree with perf script --symfs"
    );

    // The flat layout perf gained after 6.12 (6.1 and 6.12 lack it): the base name in DIR.
    let flat = dir.join("flat");
    std::fs::create_dir_all(&flat).unwrap();
    std::fs::rename(under(&prog), flat.join("deep")).unwrap();
    let arg = format!("{},flat", flat.display());
    assert_eq!(export(&data, &["--symfs", &arg], &cache), got);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A copy of /proc/kallsyms whose functions (those not starting with `_`,
/// so `_text`, which perf relocates by, stays) are renamed `copy_NAME`.
fn renamed_kallsyms(to: &Path) {
    let text = std::fs::read_to_string("/proc/kallsyms").unwrap();
    let mut out = String::with_capacity(text.len() * 2);
    for l in text.lines() {
        let f: Vec<&str> = l.splitn(3, ' ').collect();
        match f[..] {
            [a, t, name] if "tTwW".contains(t) && !name.starts_with('_') => {
                out.push_str(&format!("{a} {t} copy_{name}\n"))
            }
            _ => out.push_str(&format!("{l}\n")),
        }
    }
    std::fs::write(to, out).unwrap();
}

#[test]
fn kallsyms_names_kernel_frames_from_the_file_given_as_perf_does() {
    require_recording();
    let dir = tempdir("export-kallsyms");
    let data = dir.join("k.data");
    let d = data.to_str().unwrap();
    perfz_ok(&[
        "record",
        "-q",
        "-g",
        "--codec",
        "none",
        "-o",
        d,
        "--",
        "dd",
        "if=/dev/zero",
        "of=/dev/null",
        "bs=64k",
        "count=30000",
    ]);
    let other = dir.join("other-kernel.data");
    another_kernels(&data, &other);
    let copy = dir.join("kallsyms");
    renamed_kallsyms(&copy);
    let c = copy.to_str().unwrap();
    let cache = dir.join("no-cache");
    let unnamed = export(&other, &[], &cache);
    assert_eq!(
        named(&unnamed, ";do_syscall_64"),
        0,
        "another kernel's frames are not named from ours"
    );
    for data in [&data, &other] {
        let want = reference_with(data, &["--kallsyms", c], &[]);
        let got = export(data, &["--kallsyms", c], &cache);
        let total: u64 = want.values().sum();
        assert!(
            named(&got, ";copy_do_syscall_64") * 2 > total,
            "{}: kernel frames named from the copy",
            data.display()
        );
        let same: u64 = want
            .iter()
            .map(|(k, n)| (*n).min(got.get(k).copied().unwrap_or(0)))
            .sum();
        assert!(
            same * 100 >= total * 99,
            "{}: {same} of {total} agree with perf script --kallsyms",
            data.display()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
