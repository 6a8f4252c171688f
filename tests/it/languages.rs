//! The language matrix (issue 47): real programs of every language people
//! profile, each recorded by perfz and exported, beside `perf script
//! --no-inline | inferno-collapse-perf` of each perf in tests/tools on the
//! same file, held to the best of them:
//! - the exact-stack match (the share of the weight whose whole folded
//!   line, names compared as strings, is the best perf's) is 99 % or more;
//! - perfz leaves no more weight on unnamed frames (`[unknown]`,
//!   `[module]`) than that perf does;
//! - where a stack's root is named (`reach`), as much of the weight reaches
//!   it as in the perf that reaches it most (dwarf stacks of LLD-linked
//!   programs: perf 7.3's libdw unwinder stops short, 6.1 and 6.12 reach).
//!
//! The perfs differ: 6.12 and 7.3 demangle C++ as GNU's demangler does
//! (return types, `32ul`, `std::istream`), 6.1 without return types; 6.12
//! leaves Rust's v0 names mangled. The best of them is the oracle, never
//! perfz's own expectations. Every workload runs on its own CPU time, so a
//! busy machine makes it run longer, never give fewer samples.
//! OCaml's names are demangled as perf's own OCaml demangler writes them.
//! node's jitdump (`--perf-prof`, named after `perf inject --jit`) is
//! export_tools' `jit_frames_are_named_from_a_jitdump_as_perf_inject_names_them`.
//! Other linkers and layouts (gold, `-z noseparate-code`, `-static`,
//! `-flto`, `-no-pie`, Debian's clang-14) are tests/it/layouts.rs's rows.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

use common::inferno::{parse, references, Folded};
use common::*;

pub(crate) fn src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/workload")
        .join(name)
}

/// Where this test binary's builds go.
pub(crate) fn out_dir() -> PathBuf {
    common::sweep_ended_runs();
    let d = std::env::temp_dir().join(format!("perfz-languages-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub(crate) fn build(what: &str, cmd: &mut Command) {
    let o = cmd.output_within();
    assert!(
        o.status.success(),
        "building {what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// tests/workload/lang/threads.c: frame pointers or none, GNU ld or LLD
/// (rustc's own, through its gcc-ld directory: every Rust toolchain has it).
pub(crate) fn threads_c(fp: bool, lld: bool) -> PathBuf {
    let out = out_dir().join(format!("threads-{fp}-{lld}"));
    let mut cc = Command::new("cc");
    cc.args(["-O2", "-g", "-pthread"]);
    cc.arg(if fp {
        "-fno-omit-frame-pointer"
    } else {
        "-fomit-frame-pointer"
    });
    if lld {
        cc.arg("-B").arg(rust_lld_dir()).arg("-fuse-ld=lld");
    }
    build(
        "threads.c",
        cc.arg(src("lang/threads.c")).arg("-o").arg(&out),
    );
    out
}

/// The directory of rustc's own `ld.lld` (its gcc-ld: every Rust
/// toolchain has it), for `cc -B DIR -fuse-ld=lld`.
pub(crate) fn rust_lld_dir() -> PathBuf {
    let sysroot = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output_within();
    let sysroot = String::from_utf8(sysroot.stdout).unwrap();
    let gcc_ld = Path::new(sysroot.trim()).join("lib/rustlib/x86_64-unknown-linux-gnu/bin/gcc-ld");
    assert!(
        gcc_ld.join("ld.lld").exists(),
        "no ld.lld in {}: a Rust toolchain from rustup has it",
        gcc_ld.display()
    );
    gcc_ld
}

/// tests/workload/rustapp by cargo --release: `debug` (0 or 2), frame
/// pointers or none. Its own target directory under target/.
fn rustapp(debug: u32, fp: bool) -> PathBuf {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("target/rustapp-{debug}-{fp}"));
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(src("rustapp/Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .env("CARGO_PROFILE_RELEASE_DEBUG", debug.to_string());
    if fp {
        cargo.env("RUSTFLAGS", "-C force-frame-pointers=yes");
    } else {
        cargo.env_remove("RUSTFLAGS");
    }
    build("tests/workload/rustapp", &mut cargo);
    target.join("release/rustapp")
}

/// A Python with `-X perf`: python3.12 on PATH (pyenv's, in this image),
/// else trixie's 3.13 that tests/setup.sh unpacks beside perf 7.3.
fn python_with_perf_trampolines() -> OsString {
    let works = |p: &OsString| {
        Command::new(p)
            .args(["-c", "import sys; sys.activate_stack_trampoline('perf')"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let trixie = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/perf-7.3/python3.13");
    [OsString::from("python3.12"), trixie.into_os_string()]
        .into_iter()
        .find(works)
        .expect(
            "no Python with -X perf (3.12+): run tests/setup.sh (it unpacks trixie's python3.13)",
        )
}

/// The share of `folded`'s weight of `each` stack (frames after the
/// process's name) counts.
fn share(folded: &Folded, each: impl Fn(&str) -> u64) -> f64 {
    let total: u64 = folded.values().sum();
    let weight: u64 = folded
        .iter()
        .map(|(k, n)| n * each(k.split_once(';').map_or("", |(_, frames)| frames)))
        .sum();
    weight as f64 / total.max(1) as f64
}

/// The share of `folded`'s weight on frames without a name.
fn unnamed(folded: &Folded) -> f64 {
    share(folded, |frames| {
        let bracketed = |f: &&str| f.starts_with('[') && f.ends_with(']');
        frames.split(';').filter(bracketed).count() as u64
    })
}

/// `ours` leaves no more weight on unnamed frames than `want` (perf
/// `best`'s).
fn no_more_unnamed(name: &str, ours: &Folded, want: &Folded, best: &str) {
    let (u_ours, u_perf) = (unnamed(ours), unnamed(want));
    assert!(
        u_ours <= u_perf + 1e-9,
        "{name}: {:.2} % of the weight on unnamed frames, {best} {:.2} %",
        u_ours * 100.0,
        u_perf * 100.0
    );
}

/// The share of `folded`'s weight whose stack holds frame `f`.
pub(crate) fn reaching(folded: &Folded, f: &str) -> f64 {
    share(folded, |frames| {
        u64::from(frames.split(';').any(|x| x == f))
    })
}

/// The share of `reference`'s weight on the very same stacks in `ours`.
fn exact(reference: &Folded, ours: &Folded) -> f64 {
    crate::export_tools::agreement(reference, ours).0
}

/// JIT maps (/tmp/perf-PID.map) and jitdumps (/tmp/jit-PID.dump, Erlang's)
/// of a recording's processes, removed when the row ends, passed or failed.
struct JitMaps(PathBuf);

impl Drop for JitMaps {
    fn drop(&mut self) {
        let Ok(o) = Command::new(perf())
            .args(["script", "-F", "pid", "-i"])
            .arg(&self.0)
            .output()
        else {
            return;
        };
        let text = String::from_utf8_lossy(&o.stdout);
        for pid in text.split_whitespace().collect::<BTreeSet<_>>() {
            let _ = std::fs::remove_file(format!("/tmp/perf-{pid}.map"));
            let _ = std::fs::remove_file(format!("/tmp/jit-{pid}.dump"));
        }
    }
}

/// One row: `program` recorded with `record` args (in `dir`), exported,
/// and checked against each perf.
pub(crate) fn row(name: &str, record: &[&str], program: &[OsString], reach: Option<&str>) {
    row_then(name, record, program, reach, |_, _, _| {});
}

/// The same, then `also` on the recording, perfz's folded export and each
/// perf's.
pub(crate) fn row_then(
    name: &str,
    record: &[&str],
    program: &[OsString],
    reach: Option<&str>,
    also: impl FnOnce(&Path, &Folded, &[(&'static str, Folded)]),
) {
    let dir = tempdir(&format!("lang-{}", name.replace([' ', ',', '+'], "-")));
    let data = dir.join("row.data");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_perfz"));
    cmd.args(["record", "-q", "-o"])
        .arg(&data)
        .args(record)
        .arg("--")
        .args(program);
    let o = cmd.current_dir(&dir).output_within();
    let _maps = JitMaps(data.clone());
    assert!(
        o.status.success(),
        "{name}: perfz record: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let e = perfz_ok(&["export", data.to_str().unwrap()]);
    let ours = parse(&String::from_utf8(e.stdout).unwrap());
    let refs = references(&data, &[], &[]);
    let (best, want) = refs
        .iter()
        .max_by(|a, b| exact(&a.1, &ours).total_cmp(&exact(&b.1, &ours)))
        .unwrap();
    let shares: Vec<String> = refs
        .iter()
        .map(|(p, r)| format!("{p} {:.1} %", exact(r, &ours) * 100.0))
        .collect();
    let (share, worst) = crate::export_tools::agreement(want, &ours);
    assert!(
        share >= 0.99,
        "{name}: the exact-stack match is {} ({shares:?}); against {best}: {worst}",
        share * 100.0
    );
    let (total, want_total) = (ours.values().sum::<u64>(), want.values().sum::<u64>());
    if total != want_total {
        // perf prints some samples without a frame, and inferno drops
        // them; perfz names them by their ip.
        let frameless = common::inferno::frameless_weight(best, &data);
        assert_eq!(
            total,
            want_total + frameless,
            "{name}: total weight against {best} (and {frameless} of samples it prints without a frame)"
        );
    }
    no_more_unnamed(name, &ours, want, best);
    if let Some(f) = reach {
        let most = refs
            .iter()
            .map(|(p, r)| (reaching(r, f), *p))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap();
        assert!(
            most.0 > 0.5,
            "{name}: no perf reaches `{f}` in half the weight ({most:?}): the row tests nothing"
        );
        let r = reaching(&ours, f);
        assert!(
            r >= most.0 - 0.005,
            "{name}: {:.1} % of the weight reaches `{f}`, {} {:.1} %",
            r * 100.0,
            most.1,
            most.0 * 100.0
        );
    }
    also(&data, &ours, &refs);
    let _ = std::fs::remove_dir_all(&dir);
}

fn args(v: &[&str]) -> Vec<OsString> {
    v.iter().map(OsString::from).collect()
}

pub(crate) fn with(program: PathBuf, rest: &[&str]) -> Vec<OsString> {
    let mut v = vec![program.into_os_string()];
    v.extend(args(rest));
    v
}

pub(crate) const DWARF: &[&str] = &["--call-graph", "dwarf"];

/// C: three threads (frame pointers, dwarf, and dwarf of an LLD-linked
/// build, whose code's file offsets and addresses are not a page multiple
/// apart).
#[test]
fn c_fp_dwarf_and_lld() {
    require_recording();
    row(
        "C fp, threads",
        &["-g"],
        &with(threads_c(true, false), &["0.4"]),
        // The leaf keeps no frame of its own: frame pointers skip its
        // caller, as perf's do.
        Some("start_thread"),
    );
    row(
        "C dwarf",
        DWARF,
        &with(threads_c(false, false), &["0.4"]),
        Some("perfz_thread_main"),
    );
    row(
        "C dwarf, LLD",
        DWARF,
        &with(threads_c(false, true), &["0.4"]),
        Some("perfz_thread_main"),
    );
}

/// C by clang-14 and LLD, which writes no CFI for `.plt`: main calls a
/// tiny library function through its PLT stub (tests/workload/lang/
/// plthot.c), dwarf. A sample in `perfz_tiny@plt` is unwound through the
/// stub to main, as perf 6.12's libunwind does (perf 6.1 names the stub
/// `[plthot]`, 7.3's libdw stops in it).
#[test]
fn c_dwarf_clang_lld_plt() {
    require_recording();
    let dir = out_dir().join("plthot");
    std::fs::create_dir_all(&dir).unwrap();
    let clang = || {
        let mut c = Command::new("clang-14");
        c.args(["-O2", "-g", "-fomit-frame-pointer", "-B"])
            .arg(rust_lld_dir())
            .arg("-fuse-ld=lld");
        c
    };
    build(
        "plthot_lib.c (clang-14: run tests/setup.sh if it is missing)",
        clang()
            .args(["-fPIC", "-shared"])
            .arg(src("lang/plthot_lib.c"))
            .arg("-o")
            .arg(dir.join("libplthot.so")),
    );
    let program = dir.join("plthot");
    build(
        "plthot.c",
        clang()
            .arg(src("lang/plthot.c"))
            .arg("-o")
            .arg(&program)
            .arg("-L")
            .arg(&dir)
            .args(["-lplthot", "-Wl,-rpath,$ORIGIN"]),
    );
    let sections = Command::new("readelf")
        .arg("-SW")
        .arg(&program)
        .output_within();
    let sections = String::from_utf8_lossy(&sections.stdout).into_owned();
    assert!(sections.contains(" .plt "), "no .plt in plthot: {sections}");
    row_then(
        "C dwarf, clang + LLD, PLT",
        DWARF,
        &with(program, &["0.5"]),
        Some("main"),
        |_, ours, _| {
            let in_stub: Folded = ours
                .iter()
                .filter(|(k, _)| k.ends_with(";perfz_tiny@plt"))
                .map(|(k, n)| (k.clone(), *n))
                .collect();
            let all: u64 = ours.values().sum();
            let stub: u64 = in_stub.values().sum();
            assert!(
                stub * 10 >= all,
                "{stub} of {all} in perfz_tiny@plt: the row tests nothing"
            );
            assert_eq!(reaching(&in_stub, "main"), 1.0, "{in_stub:?}");
        },
    );
}

/// C++'s standard library (<regex>, iostreams, <random>, std::sort) at -O2
/// without frame pointers, dwarf: names as GNU's demangler writes them.
#[test]
fn cxx_templates_dwarf() {
    require_recording();
    let program = out_dir().join("cxxlib");
    build(
        "cxxlib.cpp",
        Command::new("c++")
            .args(["-O2", "-g", "-fomit-frame-pointer"])
            .arg(src("lang/cxxlib.cpp"))
            .arg("-o")
            .arg(&program),
    );
    row("C++ dwarf", DWARF, &with(program, &["0.8"]), Some("main"));
}

/// Rust from cargo --release (LLD, std's v0 names, serde_json, regex,
/// flate2): dwarf without and with debug info, and frame pointers.
#[test]
fn rust_cargo_release() {
    require_recording();
    let full = rustapp(2, false);
    // Without debug info: the same build with its DWARF stripped (its
    // symbols and .eh_frame kept, as `debug = 0` leaves them): one cargo
    // build fewer.
    let plain = out_dir().join("rustapp-no-debug");
    build(
        "strip --strip-debug",
        Command::new("strip")
            .arg("--strip-debug")
            .arg("-o")
            .arg(&plain)
            .arg(&full),
    );
    row(
        "Rust dwarf",
        DWARF,
        &with(plain, &["0.8"]),
        Some("rustapp::main"),
    );
    row(
        "Rust dwarf, debug = 2",
        DWARF,
        &with(full, &["0.8"]),
        Some("rustapp::main"),
    );
    row(
        "Rust fp",
        &["-g"],
        &with(rustapp(0, true), &["0.8"]),
        Some("rustapp::main"),
    );
}

/// tests/workload/lang/busy.go, built by the go on PATH.
fn busy_go() -> PathBuf {
    let program = out_dir().join("busygo");
    build(
        "busy.go",
        Command::new("go")
            .args(["build", "-o"])
            .arg(&program)
            .arg(src("lang/busy.go"))
            .env("GO111MODULE", "off")
            .env(
                "GOCACHE",
                Path::new(env!("CARGO_MANIFEST_DIR")).join("target/go-build"),
            ),
    );
    program
}

/// Go keeps frame pointers: goroutines through the runtime.
#[test]
fn go_fp() {
    require_recording();
    row(
        "Go fp",
        &["-g"],
        &with(busy_go(), &["0.8"]),
        Some("main.worker"),
    );
}

/// Go with dwarf stacks: Go writes its CFI only in .debug_frame, and
/// compressed (SHF_COMPRESSED), which perf 7.3's libdw inflates; 6.1 and
/// 6.12 (libunwind) reach no caller of the goroutines' frames. Judged as a
/// row is, against the best perf (7.3): the g0 stack's garbage root of
/// `runtime.systemstack.abi0` frames lies in .bss past the file's bytes,
/// named by its data object (`runtime.scavenger`) as perf names it (before:
/// `[busygo]`, 0.5 to 1.2 % of the weight). With `--inline`, the goroutines' root
/// `runtime.goexit.abi0` stays as it is, as in perf 7.3's `--inline`, and
/// the stacks, inline frames included, are perf 7.3's (99.2 % here).
#[test]
fn go_dwarf() {
    require_recording();
    let dir = tempdir("lang-go-dwarf");
    let data = dir.join("row.data");
    let o = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args(["record", "-q", "-o"])
        .arg(&data)
        .args(DWARF)
        .arg("--")
        .args(with(busy_go(), &["0.8"]))
        .output_within();
    assert!(
        o.status.success(),
        "perfz record: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let export = |extra: &[&str]| {
        let mut a = vec!["export", data.to_str().unwrap()];
        a.extend(extra);
        parse(&String::from_utf8(perfz_ok(&a).stdout).unwrap())
    };
    let ours = export(&[]);
    let refs = references(&data, &[], &[]);
    let (best, share) = refs
        .iter()
        .map(|(p, r)| (*p, exact(r, &ours)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    assert!(
        share >= 0.99,
        "Go dwarf: the exact-stack match is {:.1} % ({best})",
        share * 100.0
    );
    let want = &refs.iter().find(|(p, _)| *p == best).unwrap().1;
    no_more_unnamed("Go dwarf", &ours, want, best);
    let most = refs
        .iter()
        .map(|(p, r)| (reaching(r, "main.worker"), *p))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .unwrap();
    assert!(most.0 > 0.5, "no perf reaches main.worker: {most:?}");
    let r = reaching(&ours, "main.worker");
    assert!(
        r >= most.0 - 0.005,
        "Go dwarf: {:.1} % of the weight reaches main.worker, {} {:.1} %",
        r * 100.0,
        most.1,
        most.0 * 100.0
    );
    let inlined = export(&["--inline"]);
    let perf7 = common::inferno::reference_by(&perf_7(), &data, &["--inline"], &[]);
    let (ours_root, perf_root) = (
        reaching(&inlined, "runtime.goexit.abi0"),
        reaching(&perf7, "runtime.goexit.abi0"),
    );
    assert!(perf_root > 0.5, "perf 7.3 --inline: {perf_root}");
    let share = exact(&perf7, &inlined);
    assert!(
        share >= 0.99,
        "Go dwarf --inline: the exact-stack match with perf 7.3 is {:.1} %",
        share * 100.0
    );
    assert!(
        ours_root >= perf_root - 0.005 && reaching(&inlined, "runtime.goexit") == 0.0,
        "--inline: runtime.goexit.abi0 under {:.1} % of the weight, perf 7.3 {:.1} %",
        ours_root * 100.0,
        perf_root * 100.0
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// OCaml (ocamlopt 4.x keeps no frame pointers: dwarf): the standard
/// library's and its own functions, named as perf demangles OCaml
/// (`camlStdlib__List__sort_572` is `Stdlib.List.sort_572`).
#[test]
fn ocaml_dwarf() {
    require_recording();
    let ocamlopt = Command::new("ocamlopt").arg("-version").output();
    assert!(
        ocamlopt.is_ok_and(|o| o.status.success()),
        "no ocamlopt: run tests/setup.sh (it installs ocaml-nox)"
    );
    // ocamlopt writes its objects beside the source: a copy in out_dir.
    let dir = out_dir().join("ocaml");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(src("lang/busy.ml"), dir.join("busy.ml")).unwrap();
    let program = dir.join("busy");
    build(
        "busy.ml",
        Command::new("ocamlopt")
            .args(["-g", "busy.ml", "-o"])
            .arg(&program)
            .current_dir(&dir),
    );
    row(
        "OCaml dwarf",
        DWARF,
        &with(program, &["0.8"]),
        Some("Busy.entry"),
    );
}

/// Python: with -X perf (3.12+), whose trampolines name Python functions
/// in /tmp/perf-PID.map, and Debian's 3.11 (the interpreter's C frames).
#[test]
fn python_with_and_without_perf_trampolines() {
    require_recording();
    let script = src("lang/busy.py").into_os_string();
    let py = python_with_perf_trampolines();
    row(
        "Python -X perf",
        &["-g"],
        &[py, "-X".into(), "perf".into(), script.clone(), "0.8".into()],
        None,
    );
    let py311 = if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    };
    row(
        "Python 3.11",
        &["-g"],
        &[py311.into(), script, "0.8".into()],
        None,
    );
}

/// node with --perf-basic-prof: JS frames from its perf map.
#[test]
fn node_perf_map() {
    require_recording();
    let js = src("busy.js").into_os_string();
    row(
        "node --perf-basic-prof",
        &["-g"],
        &[
            OsString::from("node"),
            "--perf-basic-prof".into(),
            js,
            "0.8".into(),
        ],
        None,
    );
}

/// Erlang's JIT (+JPperf true: a perf map and a jitdump both): its code
/// named by the map's text as written (`$busy:fib/1`), as perf script
/// names the recording; the jitdump's names (`busy:fib/1`) are perf's only
/// after `perf inject --jit`.
#[test]
fn erlang_perf_map() {
    require_recording();
    // `erlc -help` exits 1: that it runs is enough.
    assert!(
        Command::new("erlc").arg("-help").output().is_ok(),
        "no erlc: run tests/setup.sh (it installs erlang-base)"
    );
    let dir = out_dir().join("erlang");
    std::fs::create_dir_all(&dir).unwrap();
    build(
        "busy.erl",
        Command::new("erlc")
            .arg("-o")
            .arg(&dir)
            .arg(src("lang/busy.erl")),
    );
    let program: Vec<OsString> = ["erl", "+JPperf", "true", "-noshell", "-pa"]
        .iter()
        .map(OsString::from)
        .chain([dir.into_os_string()])
        .chain(args(&["-run", "busy", "main", "0.8"]))
        .collect();
    row("Erlang perf map", &["-g"], &program, Some("$busy:fib/1"));
}

/// Java 17 with a perf map written at exit and frame pointers kept in JIT
/// code.
#[test]
fn java_perf_map() {
    require_recording();
    let classes = out_dir().join("java");
    build(
        "Busy.java",
        Command::new("javac")
            .arg("-d")
            .arg(&classes)
            .arg(src("lang/Busy.java")),
    );
    let program: Vec<OsString> = [
        "java",
        "-XX:+UnlockDiagnosticVMOptions",
        "-XX:+DumpPerfMapAtExit",
        "-XX:+PreserveFramePointer",
        "-cp",
    ]
    .iter()
    .map(OsString::from)
    .chain([classes.into_os_string(), "Busy".into(), "0.8".into()])
    .collect();
    row("Java perf map", &["-g"], &program, None);
}

/// `make -j2` of many short processes (cc, cc1, as, sh), each exec'd.
#[test]
fn make_of_many_short_processes() {
    require_recording();
    let dir = out_dir().join("make");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut program = args(&["make", "-s", "-j2", "-C"]);
    program.push(dir.into_os_string());
    program.push("-f".into());
    program.push(src("lang/Makefile").into_os_string());
    row("make -j2", &["-g"], &program, None);
}
