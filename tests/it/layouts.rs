//! The language matrix's layouts and linkers (issue 55): the same C
//! programs as tests/it/languages.rs, judged by its `row` against the best
//! of perf 6.1, 6.12 and 7.3, built the ways binaries are built besides GNU
//! ld's default PIE: gold and `-z noseparate-code` (code from file offset 0,
//! so ld.so or the kernel maps one mapping as long as the whole image and
//! then the data over its tail; Debian's libLLVM, libclang-cpp and clang are
//! such files), a shared library built so, `-static`, `-flto`, `-no-pie`,
//! Debian's clang-14 itself, and a frame whose CFA is kept in %rbx (as
//! ld.so keeps it while it resolves a symbol), all with dwarf stacks (frame-pointer
//! stacks name frames the same way, but dwarf unwinding needs each frame's
//! mapping to find its .eh_frame).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;
use crate::languages::{build, out_dir, reaching, row, row_then, src, with, DWARF};

use common::inferno::Folded;
use common::*;

/// `tool` on PATH, or a failure that says how to get it.
fn need(tool: &str, package: &str) {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output_within()
        .status
        .success();
    assert!(
        found,
        "no {tool}: run tests/setup.sh, or apt-get install -y {package}"
    );
}

/// tests/workload/lang/threads.c without frame pointers, built with
/// `flags` besides; `tag` names the build.
fn threads_c(tag: &str, flags: &[&str]) -> PathBuf {
    let out = out_dir().join(format!("threads-{tag}"));
    build(
        &format!("threads.c {flags:?}"),
        Command::new("cc")
            .args(["-O2", "-g", "-pthread", "-fomit-frame-pointer"])
            .args(flags)
            .arg(src("lang/threads.c"))
            .arg("-o")
            .arg(&out),
    );
    out
}

/// Each of threads.c's three threads runs this long on its own CPU time.
const THREAD_SECONDS: &str = "0.15";

/// Code from file offset 0, the data mapped over the image's tail: gold and
/// GNU ld's `-z noseparate-code`.
#[test]
fn c_dwarf_gold_and_noseparate_code() {
    require_recording();
    need("ld.gold", "binutils");
    for (name, tag, flag) in [
        ("C dwarf, gold", "gold", "-fuse-ld=gold"),
        (
            "C dwarf, -z noseparate-code",
            "noseparate",
            "-Wl,-z,noseparate-code",
        ),
    ] {
        row(
            name,
            DWARF,
            &with(threads_c(tag, &[flag]), &[THREAD_SECONDS]),
            Some("perfz_thread_main"),
        );
    }
}

/// A static binary, an LTO build and a position-dependent one (GNU ld's
/// separate code: these guard the layouts that were named already).
#[test]
fn c_dwarf_static_lto_and_no_pie() {
    require_recording();
    for (name, tag, flag) in [
        ("C dwarf, -static", "static", "-static"),
        ("C dwarf, -flto", "lto", "-flto"),
        ("C dwarf, -no-pie", "no-pie", "-no-pie"),
    ] {
        row(
            name,
            DWARF,
            &with(threads_c(tag, &[flag]), &[THREAD_SECONDS]),
            Some("perfz_thread_main"),
        );
    }
}

/// tests/workload/lang/hotlib.c as libhotlib.so linked with `flag`, beside
/// hotlib_main.c's program (GNU ld's default) that loads it from its own
/// directory.
fn hotlib(tag: &str, flag: &str) -> PathBuf {
    let dir = out_dir().join(format!("hotlib-{tag}"));
    std::fs::create_dir_all(&dir).unwrap();
    build(
        &format!("hotlib.c {flag}"),
        Command::new("cc")
            .args([
                "-O2",
                "-g",
                "-fPIC",
                "-shared",
                "-fomit-frame-pointer",
                flag,
            ])
            .arg(src("lang/hotlib.c"))
            .arg("-o")
            .arg(dir.join("libhotlib.so")),
    );
    let program = dir.join("hotlib");
    build(
        "hotlib_main.c",
        Command::new("cc")
            .args(["-O2", "-g", "-fomit-frame-pointer"])
            .arg(src("lang/hotlib_main.c"))
            .arg("-o")
            .arg(&program)
            .arg("-L")
            .arg(&dir)
            .args(["-lhotlib", "-Wl,-rpath,$ORIGIN"]),
    );
    program
}

/// The address range `[start, end)` of each mapping `perf script
/// --show-mmap-events` shows of a file whose path ends with `file`, with
/// its protection (`r-xp`).
fn mappings_of(data: &Path, file: &str) -> Vec<(u64, u64, String)> {
    let o = Command::new(perf())
        .args(["script", "--show-mmap-events", "-F", "pid", "-i"])
        .arg(data)
        .output_within();
    let text = String::from_utf8_lossy(&o.stdout);
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    text.lines()
        .filter(|l| l.contains("PERF_RECORD_MMAP") && l.ends_with(file))
        .filter_map(|l| {
            let (_, range) = l.split_once(": [")?;
            let (start, rest) = range.split_once('(')?;
            let (len, _) = rest.split_once(')')?;
            let prot = l.rsplit(' ').nth(1)?.to_string();
            Some((hex(start), hex(start) + hex(len), prot))
        })
        .collect()
}

/// The library's code is mapped as perf saw it: one `r-xp` mapping with
/// its `rw-p` data mapped over part of it (else the row tests nothing);
/// and its frames are named.
fn code_partly_covered_and_named(data: &Path, ours: &Folded) {
    let maps = mappings_of(data, "/libhotlib.so");
    let code = maps.iter().find(|m| m.2 == "r-xp");
    let covered =
        code.is_some_and(|c| maps.iter().any(|d| d.2 == "rw-p" && c.0 < d.0 && d.0 < c.1));
    assert!(
        covered,
        "libhotlib.so's code mapping is not partly covered by its data: {maps:x?}"
    );
    let named = reaching(ours, "perfz_lib_leaf");
    assert!(
        named > 0.9,
        "{:.1} % of the weight reaches perfz_lib_leaf",
        named * 100.0
    );
}

/// A shared library whose code starts at file offset 0, where the time
/// goes: ld.so maps it whole, then its data over the tail.
#[test]
fn c_dwarf_library_with_code_from_offset_0() {
    require_recording();
    need("ld.gold", "binutils");
    for (name, tag, flag) in [
        (
            "C dwarf, -z noseparate-code library",
            "noseparate",
            "-Wl,-z,noseparate-code",
        ),
        ("C dwarf, gold library", "gold", "-fuse-ld=gold"),
    ] {
        row_then(
            name,
            DWARF,
            &with(hotlib(tag, flag), &["0.4"]),
            Some("main"),
            |data, ours, _| code_partly_covered_and_named(data, ours),
        );
    }
}

/// A hot loop in a function that keeps its CFA in %rbx while its stack is
/// realigned (tests/workload/lang/cfa_rbx.c), as ld.so's
/// `_dl_runtime_resolve_xsavec` keeps it: perf's unwinders follow it to
/// `main`, an unwinder that tracks only rip, rsp and rbp stops in it.
#[test]
fn c_dwarf_cfa_kept_in_rbx() {
    require_recording();
    let program = out_dir().join("cfa_rbx");
    build(
        "cfa_rbx.c",
        Command::new("cc")
            .args(["-O2", "-g", "-fomit-frame-pointer"])
            .arg(src("lang/cfa_rbx.c"))
            .arg("-o")
            .arg(&program),
    );
    row_then(
        "C dwarf, CFA in rbx",
        DWARF,
        &with(program, &["0.3"]),
        Some("main"),
        |_, ours, _| {
            let in_it = reaching(ours, "perfz_spin_rbx");
            assert!(
                in_it > 0.5,
                "{:.1} % of the weight is in perfz_spin_rbx: the row tests nothing",
                in_it * 100.0
            );
        },
    );
}

/// The same function calling the hot loop (`cfa_rbx SECONDS calls`), as
/// `_dl_runtime_resolve_xsavec` calls `_dl_fixup`, in a program built with
/// frame pointers: an unwinder that steps out of it by the frame pointer
/// skips its caller (`main;perfz_rbx_calls;perfz_spin_leaf`, where perf
/// has `main;perfz_rbx_caller;perfz_rbx_calls;perfz_spin_leaf`).
#[test]
fn c_dwarf_cfa_kept_in_rbx_by_a_caller() {
    require_recording();
    let program = out_dir().join("cfa_rbx_fp");
    build(
        "cfa_rbx.c",
        Command::new("cc")
            .args(["-O2", "-g", "-fno-omit-frame-pointer"])
            .arg(src("lang/cfa_rbx.c"))
            .arg("-o")
            .arg(&program),
    );
    row_then(
        "C dwarf, CFA in rbx, a caller",
        DWARF,
        &with(program, &["0.3", "calls"]),
        Some("main"),
        |_, ours, _| {
            let total: u64 = ours.values().sum();
            let chain = ";perfz_rbx_caller;perfz_rbx_calls;perfz_spin_leaf";
            let under: u64 = ours
                .iter()
                .filter(|(k, _)| k.contains(chain))
                .map(|(_, n)| n)
                .sum();
            let whole = under as f64 / total.max(1) as f64;
            assert!(
                whole > 0.5,
                "{:.1} % of the weight is in perfz_spin_leaf under its two callers",
                whole * 100.0
            );
        },
    );
}

/// A function whose return address, by its CFI, is a pointer into the
/// heap (tests/workload/lang/heap_ra.c), as a new thread's first
/// instruction finds one on its stack: the stack ends at the function, as
/// perf 7.3 ends it (6.x print `[anon]`); before, export named the word as
/// JIT code, `[perf-PID.map]`.
#[test]
fn c_dwarf_return_address_in_the_heap() {
    require_recording();
    let program = out_dir().join("heap_ra");
    build(
        "heap_ra.c",
        Command::new("cc")
            .args(["-O2", "-g"])
            .arg(src("lang/heap_ra.c"))
            .arg("-o")
            .arg(&program),
    );
    row_then(
        "C dwarf, return address in the heap",
        DWARF,
        &with(program, &["0.3"]),
        None,
        |_, ours, _| {
            let total: u64 = ours.values().sum();
            let alone = ours.get("heap_ra;perfz_heap_ra").copied().unwrap_or(0);
            assert!(
                alone as f64 > 0.5 * total as f64,
                "{alone} of {total} end at perfz_heap_ra: {ours:?}"
            );
        },
    );
}

/// The share of `folded`'s weight with a frame whose name holds `part`.
fn reaching_any(folded: &Folded, part: &str) -> f64 {
    let total: u64 = folded.values().sum();
    let hit: u64 = folded
        .iter()
        .filter(|(k, _)| k.split(';').skip(1).any(|f| f.contains(part)))
        .map(|(_, n)| n)
        .sum();
    hit as f64 / total.max(1) as f64
}

/// Debian's clang-14 compiling C++: its code is in libLLVM-14.so.1 and
/// libclang-cpp.so.14, both mapped from file offset 0 with their data over
/// the tail.
#[test]
fn clang_14_dwarf() {
    require_recording();
    need("clang-14", "clang-14");
    let object = out_dir().join("cxx.o");
    let program: Vec<OsString> = ["clang-14", "-O2", "-c"]
        .iter()
        .map(OsString::from)
        .chain([
            src("cxx.cpp").into_os_string(),
            "-o".into(),
            object.into_os_string(),
        ])
        .collect();
    // Its stacks are deep: 8 KiB of stack reach `main` in 1 % of the
    // samples, the most perf records (64 KiB) in 94 %; 1 kHz keeps the file
    // near 40 MB.
    let record = ["-F", "1000", "--call-graph", "dwarf,65528"];
    row_then(
        "clang-14 -O2 -c, dwarf",
        &record,
        &program,
        Some("main"),
        |_, ours, perfs| {
            // As much of the weight reaches `main` as in the perf that
            // reaches it most, to the sample (the row's margin is half a
            // percent).
            let main = reaching(ours, "main");
            for (perf, theirs) in perfs {
                let r = reaching(theirs, "main");
                assert!(
                    main >= r - 1e-9,
                    "{:.2} % of the weight reaches main, {perf}'s {:.2} %",
                    main * 100.0,
                    r * 100.0
                );
            }
            let llvm = reaching_any(ours, "llvm::");
            assert!(
                llvm > 0.5,
                "{:.1} % of the weight reaches a frame of libLLVM",
                llvm * 100.0
            );
        },
    );
}
