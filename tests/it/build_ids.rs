//! Build ids: MMAP2 with build ids also for maps synthesized from /proc,
//! the HEADER_BUILD_ID table of the DSOs samples hit (`--buildid-all`: all),
//! and perf's build-id cache, so a recording symbolizes after a rebuild.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use perfz::format::{feat, PerfReader, RecordType};

/// Builds `src` (deep.c, its functions renamed with `prefix`) into `out`.
fn build(dir: &Path, prefix: &str, out: &Path) {
    let src = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workload/deep.c"),
    )
    .unwrap()
    .replace("perfz_workload_", prefix);
    let c = dir.join(format!("{prefix}.c"));
    std::fs::write(&c, src).unwrap();
    let st = Command::new("cc")
        .args(["-O1", "-g", "-fno-omit-frame-pointer", "-fno-inline", "-o"])
        .arg(out)
        .arg(&c)
        .status_within();
    assert!(st.success());
}

/// perfz and perf with HOME (and so ~/.debug) inside the test's directory.
fn perfz_home(home: &Path, args: &[&str]) {
    let o = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .env("HOME", home)
        .args(args)
        .output_within();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `perfz record ARGS` with `HOME` for 0.1 s more of `pid`'s CPU time.
fn perfz_home_while_cpu(home: &Path, args: &[&str], pid: u32) {
    let mut perfz = Command::new(env!("CARGO_BIN_EXE_perfz"));
    perfz.env("HOME", home);
    record_while_cpu_by(perfz, args, &[pid], 0.1);
}

fn perf_home(home: &Path, args: &[&str]) -> String {
    let o = Command::new(perf())
        .env("HOME", home)
        .args(args)
        .output_within();
    assert!(
        o.status.success(),
        "perf {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn names(report: &str, prefix: &str) -> usize {
    report.matches(prefix).count()
}

#[test]
fn the_cache_keeps_a_recording_symbolized_after_a_rebuild() {
    require_recording();
    let dir = tempdir("bid-rebuild");
    let app: PathBuf = dir.join("app");
    for (cache, home) in [(true, dir.join("home")), (false, dir.join("home-n"))] {
        std::fs::create_dir_all(&home).unwrap();
        build(&dir, "oldfn_", &app);
        let data = dir.join(format!("r-{cache}.data"));
        let mut args = vec![
            "record",
            "-q",
            "-g",
            "-F",
            "999",
            "-o",
            data.to_str().unwrap(),
        ];
        if !cache {
            args.push("-N");
        }
        args.extend([app.to_str().unwrap(), "0.4"]);
        perfz_home(&home, &args);
        let list = perf_home(&home, &["buildid-list", "-i", data.to_str().unwrap()]);
        assert!(list.contains(app.to_str().unwrap()), "{list}");
        // A new binary at the same path, with other function names.
        build(&dir, "newfn_", &app);
        let rep = perf_home(&home, &["report", "--stdio", "-i", data.to_str().unwrap()]);
        if cache {
            assert!(
                names(&rep, "oldfn_leaf") > 0,
                "the cached binary names the old functions: {rep}"
            );
            let bid = list
                .lines()
                .find(|l| l.contains("/app"))
                .unwrap()
                .split_whitespace()
                .next()
                .unwrap()
                .to_string();
            let link = home
                .join(".debug/.build-id")
                .join(&bid[..2])
                .join(&bid[2..]);
            assert!(link.join("elf").is_file(), "{}", link.display());
        } else {
            assert_eq!(
                names(&rep, "oldfn_"),
                0,
                "-N: nothing cached, the old names are gone"
            );
            assert!(!home.join(".debug").exists(), "-N wrote the cache");
        }
    }
}

#[test]
fn the_table_lists_what_samples_hit_or_everything() {
    require_recording();
    let dir = tempdir("bid-table");
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let wl = workload();
    let hit = dir.join("hit.data");
    let all = dir.join("all.data");
    let none = dir.join("none.data");
    // Attached after its start, the workload's loader is mapped but not hit.
    // Each recording lasts 0.1 s of the workload's CPU time, not a
    // wall-clock sleep: on a busy machine it still hits the workload.
    let mut busy = running_workload("30");
    let pid = busy.id().to_string();
    for (f, extra) in [
        (&hit, &[][..]),
        (&all, &["--buildid-all"][..]),
        (&none, &["-B"][..]),
    ] {
        let mut a = vec!["-q", "-N", "-p", &pid, "-o", f.to_str().unwrap()];
        a.extend_from_slice(extra);
        perfz_home_while_cpu(&home, &a, busy.id());
    }
    let _ = busy.kill();
    let _ = busy.wait();
    let table = |f: &Path| -> Vec<String> {
        let r = PerfReader::open(f).unwrap();
        let Some(b) = r.features.get(feat::BUILD_ID) else {
            return Vec::new();
        };
        let mut v = Vec::new();
        let mut p = 0;
        while p + 36 < b.len() {
            let size = u16::from_le_bytes([b[p + 6], b[p + 7]]) as usize;
            let name = &b[p + 36..p + size];
            v.push(
                String::from_utf8_lossy(&name[..name.iter().position(|&c| c == 0).unwrap()])
                    .into_owned(),
            );
            p += size;
        }
        v
    };
    let (h, a) = (table(&hit), table(&all));
    assert!(h.iter().any(|n| n == wl.to_str().unwrap()), "{h:?}");
    assert!(a.len() > h.len(), "--buildid-all {a:?} vs hit {h:?}");
    assert!(
        a.iter().any(|n| n.contains("ld-linux")),
        "the loader is mapped, not hit: {a:?}"
    );
    assert!(table(&none).is_empty(), "-B");
    // perf agrees with our table.
    let list = perf_home(&home, &["buildid-list", "-i", hit.to_str().unwrap()]);
    for n in &h {
        assert!(list.contains(n.as_str()), "{n} in {list}");
    }
}

#[test]
fn maps_synthesized_at_attach_carry_build_ids() {
    require_recording();
    let dir = tempdir("bid-attach");
    let out = dir.join("p.data");
    let mut wl = running_workload("30");
    let pid = wl.id().to_string();
    let args = ["-q", "-N", "-p", &pid, "-o", out.to_str().unwrap()];
    record_while_cpu(&args, &[wl.id()], 0.1);
    let _ = wl.kill();
    let _ = wl.wait();
    let mut r = PerfReader::open(&out).unwrap();
    let mut with_id = 0;
    while let Some((rec, _)) = r.next_record().unwrap() {
        if rec.header.type_ == RecordType::MMAP2 && !rec.nested {
            let name = &rec.body()[64..];
            if name.starts_with(workload().to_str().unwrap().as_bytes()) {
                assert_ne!(
                    rec.header.misc & (1 << 14),
                    0,
                    "MMAP2 of the workload without a build id"
                );
                with_id += 1;
            }
        }
    }
    assert!(with_id > 0, "no synthesized MMAP2 of the workload");
    let list = run_perf(&perf(), &["buildid-list", "-i", out.to_str().unwrap()]);
    assert!(list.contains(workload().to_str().unwrap()), "{list}");
}

/// A program run from a tmpfs only its own mount namespace sees (as in a
/// container), gone before the recording ends: its binary is kept while it
/// runs (through /proc/PID/map_files), so `perfz export` and `perf report`
/// of perfz's file name its frames; in each recording mode that keeps build
/// ids (per task: MMAP2 build ids; -a: read from the kept file).
#[test]
fn a_containers_program_gone_before_the_end_is_named() {
    require_recording();
    for tool in ["unshare", "mount"] {
        assert!(
            Command::new("sh")
                .args(["-c", &format!("command -v {tool}")])
                .status_within()
                .success(),
            "this test needs {tool}: apt-get install -y util-linux mount"
        );
    }
    let dir = tempdir("bid-container");
    let app = dir.join("built");
    build(&dir, "ctrfn_", &app);
    let mnt = dir.join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let run = format!(
        "mount -t tmpfs none {m} && cp {a} {m}/app && {m}/app 0.5",
        m = mnt.display(),
        a = app.display()
    );
    for (mode, extra) in [("task", None), ("cpus", Some("-a"))] {
        let home = dir.join(format!("home-{mode}"));
        std::fs::create_dir_all(&home).unwrap();
        let data = dir.join(format!("{mode}.data"));
        let mut args = vec![
            "record",
            "-q",
            "-g",
            "-F",
            "999",
            "-o",
            data.to_str().unwrap(),
        ];
        args.extend(extra);
        args.extend([
            "--",
            "unshare",
            "-m",
            "--propagation",
            "private",
            "sh",
            "-c",
            &run,
        ]);
        perfz_home(&home, &args);
        assert!(
            !mnt.join("app").exists(),
            "the tmpfs is gone with its namespace"
        );
        let folded = dir.join(format!("{mode}.folded"));
        let o = Command::new(env!("CARGO_BIN_EXE_perfz"))
            .env("HOME", &home)
            .args([
                "export",
                data.to_str().unwrap(),
                "-o",
                folded.to_str().unwrap(),
            ])
            .output_within();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = std::fs::read_to_string(&folded).unwrap();
        assert!(
            names(&text, "ctrfn_leaf") > 0,
            "{mode}: perfz export names it: {text}"
        );
        let rep = perf_home(
            &home,
            &[
                "report",
                "--stdio",
                "--comm",
                "app",
                "-i",
                data.to_str().unwrap(),
            ],
        );
        assert!(
            names(&rep, "ctrfn_leaf") > 0,
            "{mode}: perf report names it: {rep}"
        );
    }
}

/// `--vmlinux FILE` (issue 49): the running kernel's vmlinux is the
/// kernel's entry of the build-id table and cache, as perf's (perf report
/// then reads its symbols); one of another kernel is refused, where perf
/// caches it under the running kernel's build id.
#[test]
fn vmlinux_is_the_kernels_entry_and_must_be_this_kernels() {
    require_recording();
    let dir = tempdir("vmlinux");
    let kid = run_perf(&perf(), &["buildid-list", "-k"])
        .trim()
        .to_string();
    // A stand-in vmlinux: an ELF file with the running kernel's build id.
    let fake = |name: &str, id: &str| {
        let out = dir.join(name);
        let src = dir.join("main.c");
        std::fs::write(&src, "int main(void) { return 0; }\n").unwrap();
        let st = Command::new("cc")
            .arg(&src)
            .arg("-o")
            .arg(&out)
            .arg(format!("-Wl,--build-id=0x{id}"))
            .status_within();
        assert!(st.success());
        out
    };
    let vmlinux = fake("vmlinux", &kid);
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let cache = home.join(".debug");
    let data = dir.join("v.data");
    let line = ["record", "-q", "--vmlinux", vmlinux.to_str().unwrap()];
    let dd = ["--", "dd", "if=/dev/zero", "of=/dev/null", "count=200000"];
    perfz_home(
        &home,
        &[&line[..], &["-o", data.to_str().unwrap()], &dd].concat(),
    );
    let list = run_perf(&perf_new(), &["buildid-list", "-i", data.to_str().unwrap()]);
    let v = vmlinux.canonicalize().unwrap();
    assert!(list.contains(&format!("{kid} {}", v.display())), "{list}");
    let cached = cache
        .join(v.strip_prefix("/").unwrap())
        .join(&kid)
        .join("elf");
    assert!(cached.is_file(), "{} not cached", cached.display());
    let other = fake("other-vmlinux", "0102030405060708090a0b0c0d0e0f1011121314");
    let o = perfz(&[
        "record",
        "-q",
        "--vmlinux",
        other.to_str().unwrap(),
        "-o",
        data.to_str().unwrap(),
        "--",
        "true",
    ]);
    assert_eq!(o.status.code(), Some(255));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("is not the running kernel's") && err.contains(&kid),
        "{err}"
    );
}
