//! `perfz export` beside the pipeline its users run, `perf script
//! --no-inline | inferno-collapse-perf` (issue 32), on C++ and Rust programs
//! the tests build: the same folded stacks, with the same names (demangled,
//! `[module]`, `@plt`) and weights (each sample its period), one event an
//! output, for at least 99 % of the weight.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

use common::inferno::{parse, reference, reference_by, reference_with, references, Folded};
use common::*;

/// `perfz export DATA ARGS` (folded): the stacks and what it said.
fn ours(data: &Path, args: &[&str]) -> (Folded, String) {
    let mut all = vec!["export", data.to_str().unwrap()];
    all.extend_from_slice(args);
    let o = perfz_ok(&all);
    (
        parse(&String::from_utf8(o.stdout).unwrap()),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The share of the reference's weight that `ours` has on the very same
/// stacks; the biggest difference, for the message.
pub(crate) fn agreement(reference: &Folded, ours: &Folded) -> (f64, String) {
    let total: u64 = reference.values().sum();
    let same: u64 = reference
        .iter()
        .map(|(k, n)| (*n).min(ours.get(k).copied().unwrap_or(0)))
        .sum();
    let worst = reference
        .iter()
        .map(|(k, n)| (n.saturating_sub(ours.get(k).copied().unwrap_or(0)), k))
        .max()
        .map(|(d, k)| format!("{d} of `{k}` missing"))
        .unwrap_or_default();
    (same as f64 / total.max(1) as f64, worst)
}

fn assert_agrees(what: &str, reference: &Folded, ours: &Folded) {
    let (rt, ot): (u64, u64) = (reference.values().sum(), ours.values().sum());
    assert!(rt > 0, "{what}: the reference holds nothing");
    assert_eq!(ot, rt, "{what}: total weight");
    let (share, worst) = agreement(reference, ours);
    assert!(
        share >= 0.99,
        "{what}: {:.1} % of the weight agrees; {worst}",
        share * 100.0
    );
}

/// `ours` agrees with the best of `references` (each perf's) on 99 % of
/// the weight; every perf's share in the message.
fn assert_agrees_best(what: &str, references: &[(&str, Folded)], ours: &Folded) {
    let shares: Vec<(f64, String, &str)> = references
        .iter()
        .map(|(perf, r)| {
            let (share, worst) = agreement(r, ours);
            (share, worst, *perf)
        })
        .collect();
    let (best, _, perf) = shares
        .iter()
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .expect("no reference");
    let said: Vec<String> = shares
        .iter()
        .map(|(s, worst, p)| format!("{p}: {:.1} % ({worst})", s * 100.0))
        .collect();
    assert!(
        *best >= 0.99,
        "{what}: the best, {perf}, agrees on {:.1} % of the weight; {}",
        best * 100.0,
        said.join("; ")
    );
    let (rt, ot): (u64, u64) = (
        references
            .iter()
            .find(|(p, _)| p == perf)
            .unwrap()
            .1
            .values()
            .sum(),
        ours.values().sum(),
    );
    assert_eq!(ot, rt, "{what}: total weight against {perf}");
}

fn built(name: &str, cmd: &mut Command) -> PathBuf {
    let out = std::env::temp_dir().join(format!("perfz-{name}-{}", std::process::id()));
    let st = cmd.arg("-o").arg(&out).status_within();
    assert!(st.success(), "building {name}");
    out
}

fn src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/workload")
        .join(name)
}

/// tests/workload/cxx.cpp, with or without frame pointers.
fn cxx(fp: bool) -> PathBuf {
    static FP: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    static NO_FP: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let (cell, flag) = if fp {
        (&FP, "-fno-omit-frame-pointer")
    } else {
        (&NO_FP, "-fomit-frame-pointer")
    };
    cell.get_or_init(|| {
        let name = if fp { "cxx-fp" } else { "cxx-nofp" };
        built(
            name,
            Command::new("c++")
                .args(["-O2", "-g", flag])
                .arg(src("cxx.cpp")),
        )
    })
    .clone()
}

/// tests/workload/rust.rs, with frame pointers.
fn rust() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            built(
                "rust",
                Command::new("rustc")
                    .args(["-O", "-g", "-C", "force-frame-pointers=yes"])
                    .arg(src("rust.rs")),
            )
        })
        .clone()
}

/// tests/workload/plt.c, linked lazily or BIND_NOW (no .got.plt).
fn plt(now: bool) -> PathBuf {
    let mut c = Command::new("cc");
    c.args(["-O1", "-g", "-fno-omit-frame-pointer", "-fno-builtin"]);
    if now {
        c.arg("-Wl,-z,now");
    }
    built(
        if now { "plt-now" } else { "plt-lazy" },
        c.arg(src("plt.c")),
    )
}

fn record(dir: &Path, name: &str, args: &[&str], program: &Path) -> PathBuf {
    let out = dir.join(format!("{name}.data"));
    let mut all = vec!["record", "-q", "-o", out.to_str().unwrap()];
    all.extend_from_slice(args);
    all.extend(["--", program.to_str().unwrap(), "0.5"]);
    perfz_ok(&all);
    out
}

/// C++ (frame pointers, and dwarf without them) and Rust: demangled names,
/// `[module]` for unknown functions, parameters cut as the collapse cuts
/// them, templates and lambdas kept, frames weighed by their period.
#[test]
fn cxx_and_rust_fold_as_inferno_folds_perf_script() {
    require_recording();
    let dir = tempdir("export-tools");
    for (name, program, args) in [
        ("c++ fp", cxx(true), &["-g"][..]),
        ("c++ dwarf", cxx(false), &["--call-graph", "dwarf"][..]),
        ("rust fp", rust(), &["-g"][..]),
        // Copies that end before the stack does: perf's stacks end in an
        // [unknown] frame there.
        (
            "c++ dwarf,1024",
            cxx(false),
            &["--call-graph", "dwarf,1024"][..],
        ),
    ] {
        let data = record(&dir, &name.replace([' ', ','], "-"), args, &program);
        let (got, _) = ours(&data, &[]);
        let want = references(&data, &[], &[]);
        if name.contains("1024") {
            let cut: u64 = want[1]
                .1
                .iter()
                .filter(|(k, _)| k.split(';').nth(1) == Some("[unknown]"))
                .map(|(_, n)| n)
                .sum();
            assert!(cut > 0, "{name}: no stack of perf's ends in a cut copy");
        }
        assert_agrees_best(name, &want, &got);
        // Mangled names would agree on nothing; a check that they are gone.
        assert!(
            !got.keys().any(|k| k.contains(";_ZN") || k.contains(";_R")),
            "{name}: a mangled name"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Page faults come with periods from 1 up: each stack weighs the sum of
/// its samples' periods, as inferno weighs perf script's period column;
/// --sample-counts weighs each sample 1.
#[test]
fn folded_weighs_each_sample_by_its_period() {
    require_recording();
    let dir = tempdir("export-period");
    let data = record(
        &dir,
        "pf",
        &["-e", "page-faults", "-F", "2000", "-g"],
        &cxx(true),
    );
    let (got, _) = ours(&data, &[]);
    assert_agrees("page-faults", &reference(&data, &[]), &got);
    let (counted, _) = ours(&data, &["--sample-counts"]);
    assert_eq!(counted.values().sum::<u64>(), our_sample_count(&data));
    assert!(
        got.values().sum::<u64>() > counted.values().sum::<u64>(),
        "the periods weigh no more than the samples: no period was read"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two events: the export holds the first, as the collapse keeps it, and
/// says which it left out; -e chooses the other.
#[test]
fn one_event_an_output_the_first_unless_chosen() {
    require_recording();
    let dir = tempdir("export-events");
    let data = record(
        &dir,
        "two",
        &["-e", "cpu-clock,page-faults", "-g"],
        &cxx(true),
    );
    let (got, said) = ours(&data, &[]);
    assert_agrees("the first event", &reference(&data, &[]), &got);
    // Which comes first depends on the run (a page fault at exec, or a
    // tick): the other is the one left out, and -e takes it.
    let (first, other) = if said.contains("; event cpu-clock;") {
        ("cpu-clock", "page-faults")
    } else {
        ("page-faults", "cpu-clock")
    };
    assert!(said.contains(&format!("; event {first};")), "{said}");
    assert!(said.contains(&format!("left out {other} (")), "{said}");
    // Sample counts here: perf script pads the shorter event name, and
    // inferno then reads no period for it (it counts 1 a sample).
    let (chosen, _) = ours(&data, &["-e", other, "--sample-counts"]);
    let fields = ["-F", "comm,tid,time,event,ip,sym,dso"];
    assert_agrees(
        &format!("-e {other}"),
        &reference_with(&data, &fields, &["--event-filter", other]),
        &chosen,
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Samples in PLT entries are named `func@plt` as perf 6.12 names them
/// (6.1 takes the first entry for `_init`), in a lazily bound program and
/// in a BIND_NOW one, which has no `.got.plt`. How many samples land in
/// the PLT depends on the CPU (0.1 % of them with BIND_NOW on one): the
/// workload runs for more of its own CPU time until perf sees 20 there.
#[test]
fn plt_entries_are_named_lazy_or_bind_now() {
    require_recording();
    let perf_new = perf_new();
    let dir = tempdir("export-plt");
    for now in [false, true] {
        let program = plt(now);
        let sections = Command::new("readelf")
            .arg("-SW")
            .arg(&program)
            .output_within();
        let sections = String::from_utf8_lossy(&sections.stdout).into_owned();
        assert_eq!(sections.contains(".got.plt"), !now, "{sections}");
        let mut said = Vec::new();
        for seconds in ["0.5", "2", "8"] {
            let data = dir.join(format!("plt-{now}.data"));
            let o = data.to_str().unwrap();
            perfz_ok(
                &["record", "-q", "-F", "4000", "-g", "-o", o, "--"]
                    .into_iter()
                    .chain([program.to_str().unwrap(), seconds])
                    .collect::<Vec<_>>(),
            );
            let want = reference_by(&perf_new, &data, &[], &[]);
            let in_plt: u64 = want
                .iter()
                .filter(|(k, _)| k.ends_with("abs@plt"))
                .map(|(_, n)| n)
                .sum();
            // cpu-clock's period at -F 4000: 250 us a sample.
            let samples_in_plt = in_plt / 250_000;
            said.push(format!("{samples_in_plt} samples in {seconds} s"));
            if samples_in_plt < 20 {
                continue;
            }
            let (got, _) = ours(&data, &[]);
            assert_agrees(&format!("BIND_NOW {now}"), &want, &got);
            said.clear();
            break;
        }
        assert!(
            said.is_empty(),
            "now {now}: perf saw too few samples in the PLT: {said:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `node --perf-basic-prof tests/workload/busy.js` recorded with `args`.
fn record_node(dir: &Path, args: &[&str]) -> PathBuf {
    let data = dir.join("node.data");
    let mut all = vec!["record", "-q", "-o", data.to_str().unwrap()];
    all.extend_from_slice(args);
    let js = src("busy.js");
    all.extend([
        "--",
        "node",
        "--perf-basic-prof",
        js.to_str().unwrap(),
        "0.7",
    ]);
    // In `dir`: node writes its isolate-*-v8.log where it runs.
    let o = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args(&all)
        .current_dir(dir)
        .output_within();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    data
}

/// The JIT maps of the processes of `data` go with them.
fn remove_jit_maps(data: &Path) {
    let pids = run_perf(
        &perf(),
        &["script", "-F", "pid", "-i", data.to_str().unwrap()],
    );
    for pid in pids
        .split_whitespace()
        .collect::<std::collections::BTreeSet<_>>()
    {
        let _ = std::fs::remove_file(format!("/tmp/perf-{pid}.map"));
    }
}

/// JIT code: node --perf-basic-prof writes /tmp/perf-PID.map, and perf
/// names the frames in anonymous memory from it (module: the map). So does
/// the export: the same stacks, JS frames among them.
#[test]
fn jit_frames_are_named_from_the_map_the_jit_writes() {
    require_recording();
    let dir = tempdir("export-jit");
    let data = record_node(&dir, &["-g"]);
    let want = reference(&data, &[]);
    let (got, _) = ours(&data, &[]);
    remove_jit_maps(&data);
    let total: u64 = want.values().sum();
    let js: u64 = want
        .iter()
        .filter(|(k, _)| k.contains(";JS:"))
        .map(|(_, n)| n)
        .sum();
    assert!(
        js * 3 > total,
        "{js} of {total} in JS frames: node named none"
    );
    assert_agrees("node --perf-basic-prof", &want, &got);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `node --perf-prof tests/workload/busy.js` (a jitdump, jit-PID.dump, in
/// `dir`; no JIT map) recorded by `recorder` with `args`.
fn record_node_jitdump(dir: &Path, recorder: &Path, args: &[&str]) -> PathBuf {
    let data = dir.join("jitdump.data");
    let js = src("busy.js");
    let o = Command::new(recorder)
        .arg("record")
        .args(["-q", "-g", "-o", data.to_str().unwrap()])
        .args(args)
        .args([
            "--",
            "node",
            "--perf-prof",
            "--interpreted-frames-native-stack",
        ])
        .args([js.to_str().unwrap(), "0.7"])
        .current_dir(dir)
        .output_within();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    remove_jit_maps(&data);
    data
}

/// More than a third of the weight is in JS frames (the workload's, named).
fn assert_js_named(what: &str, f: &Folded) {
    let total: u64 = f.values().sum();
    let js: u64 = f
        .iter()
        .filter(|(k, _)| k.contains(";JS:"))
        .map(|(_, n)| n)
        .sum();
    assert!(js * 3 > total, "{what}: {js} of {total} in JS frames");
}

/// `perf inject --jit -i from -o to`: the JIT's code loads as files perf
/// script names frames from.
fn inject_jit(from: &Path, to: &Path) {
    let (from, to) = (from.to_str().unwrap(), to.to_str().unwrap());
    run_perf(&perf(), &["inject", "--jit", "-i", from, "-o", to]);
}

/// JIT code named from a jitdump: perf's way is `perf inject --jit` (on a
/// recording made with `-k mono`, the dump's clock), then perf script;
/// perfz export reads the dump itself, from the path the recording saw
/// mapped, and gives the same stacks (V8's builtins in node's own text
/// are named as the dump names them, `Builtin:...`, as after inject). So
/// on perfz's own recording with `-k mono`, which perf inject reads too.
#[test]
fn jit_frames_are_named_from_a_jitdump_as_perf_inject_names_them() {
    require_recording();
    let dir = tempdir("export-jitdump");
    let data = record_node_jitdump(&dir, &perf(), &["-k", "mono"]);
    let injected = dir.join("injected.data");
    inject_jit(&data, &injected);
    let want = reference(&injected, &[]);
    let (got, _) = ours(&data, &[]);
    assert_js_named("perf's recording, after perf inject --jit", &want);
    assert_agrees("node --perf-prof, perf inject --jit", &want, &got);

    // perfz's own recording, timed by the dump's clock (perf's -k mono):
    // perf inject --jit names its JIT code (once decompressed: inject reads
    // no COMPRESSED records, perf's own -z files' neither), and the export
    // of the recording as it is agrees with that.
    let perfz = Path::new(env!("CARGO_BIN_EXE_perfz"));
    let ours_recorded = record_node_jitdump(&dir, perfz, &["-k", "mono"]);
    let plain = dir.join("ours-plain.data");
    perfz_ok(&[
        "decompress",
        ours_recorded.to_str().unwrap(),
        "-o",
        plain.to_str().unwrap(),
    ]);
    let injected = dir.join("ours-injected.data");
    inject_jit(&plain, &injected);
    let want = reference(&injected, &[]);
    let (got, _) = ours(&ours_recorded, &[]);
    assert_js_named("perfz record -k mono, after perf inject --jit", &want);
    assert_agrees("perfz record -k mono, perf inject --jit", &want, &got);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Kernel-heavy work: dd's reads and writes of /dev/zero and /dev/null.
const DD: [&str; 5] = [
    "dd",
    "if=/dev/zero",
    "of=/dev/null",
    "bs=64k",
    "count=60000",
];

fn kernel_named(f: &Folded) -> bool {
    f.keys().any(|k| k.contains(";do_syscall_64"))
}

/// `perfz record -g -o -` of the dd workload into `dir/pipe.data`.
fn pipe_recording(dir: &Path) -> PathBuf {
    let pipe = dir.join("pipe.data");
    let st = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args(["record", "-q", "-g", "-o", "-", "--"])
        .args(DD)
        .stdout(std::fs::File::create(&pipe).unwrap())
        .stderr(std::process::Stdio::null())
        .status_within();
    assert!(st.success());
    pipe
}

/// Every input perf script takes: standard input, a FIFO, a pipe
/// recording (its kernel named from the FEATURE records in the stream);
/// and a recording whose kernel build id is another kernel's, whose kernel
/// frames stay unnamed as perf leaves them (not this kernel's names).
#[test]
fn standard_input_fifos_pipes_and_other_kernels_as_perf_script_reads_them() {
    require_recording();
    let dir = tempdir("export-inputs");
    let pipe = pipe_recording(&dir);
    let want = reference(&pipe, &[]);
    assert!(kernel_named(&want), "perf names no kernel frame");
    let (from_file, said) = ours(&pipe, &[]);
    assert!(!said.contains("another kernel"), "{said}");
    assert_agrees("a pipe recording", &want, &from_file);
    let o = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args(["export", "-"])
        .stdin(std::fs::File::open(&pipe).unwrap())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn_owned()
        .unwrap()
        .output_within("perfz export -");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_agrees(
        "standard input",
        &want,
        &parse(&String::from_utf8(o.stdout).unwrap()),
    );
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    let feed = {
        let (fifo, pipe) = (fifo.clone(), pipe.clone());
        std::thread::spawn(move || {
            let mut w = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
            std::io::copy(&mut std::fs::File::open(pipe).unwrap(), &mut w).unwrap();
        })
    };
    let (from_fifo, _) = ours(&fifo, &[]);
    feed.join().unwrap();
    assert_agrees("a FIFO", &want, &from_fifo);

    // The running kernel's build id, changed in a copy of a recording.
    let file = dir.join("k.data");
    let mut args = vec!["record", "-q", "-g", "-o", file.to_str().unwrap(), "--"];
    args.extend(DD);
    perfz_ok(&args);
    let other_kernel = dir.join("other-kernel.data");
    another_kernels(&file, &other_kernel);
    let want = reference(&other_kernel, &[]);
    let (got, _) = ours(&other_kernel, &[]);
    assert!(
        !kernel_named(&want) && !kernel_named(&got),
        "a kernel frame named"
    );
    assert_agrees("another kernel's recording", &want, &got);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A pipe recording (no build-id table: the kernel's build id is in its
/// kernel map's MMAP2 only) whose kernel build id is another kernel's:
/// perf script leaves its kernel frames unnamed, and so does the export
/// (it used to look for the build id in the table only, take the matching
/// release for this kernel, and name them all from /proc/kallsyms); the
/// unchanged recording's are named, as perf names them.
#[test]
fn a_pipe_recording_of_another_kernel_keeps_its_kernel_frames_unnamed() {
    require_recording();
    let dir = tempdir("export-other-pipe");
    let pipe = pipe_recording(&dir);
    let want = reference(&pipe, &[]);
    let (got, _) = ours(&pipe, &[]);
    assert!(kernel_named(&want), "perf names no kernel frame");
    assert_agrees("the pipe recording", &want, &got);
    let other = dir.join("other-kernel.data");
    another_kernels(&pipe, &other);
    let want = reference(&other, &[]);
    let (got, said) = ours(&other, &[]);
    assert!(!kernel_named(&want), "perf names another kernel's frames");
    assert!(!kernel_named(&got), "named from this kernel: {said}");
    assert!(said.contains("another kernel"), "{said}");
    assert_agrees("another kernel's pipe recording", &want, &got);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The first half of a file.
fn cut_in_half(from: &Path, to: &Path) {
    let b = std::fs::read(from).unwrap();
    std::fs::write(to, &b[..b.len() / 2]).unwrap();
}

/// A recording cut in half. Uncompressed, export reads every stack perf
/// script reads from it (perf stops a little short of the cut); compressed,
/// perf reads nothing (HEADER_COMPRESSED went with the cut) and export reads
/// it up to the cut. Both say `perfz recover`, which keeps the event's name.
#[test]
fn a_cut_file_is_read_to_the_cut_and_recover_keeps_its_event_name() {
    require_recording();
    let dir = tempdir("export-cut");
    // perf script drops what it queued since the last round when it meets
    // the cut: 2 s, so that many rounds end before it under a loaded CI
    // (after 0.5 s one round once spanned the cut and perf read nothing).
    let plain = dir.join("plain.data");
    let program = cxx(true);
    perfz_ok(&[
        "record",
        "-q",
        "-g",
        "--codec",
        "none",
        "-o",
        plain.to_str().unwrap(),
        "--",
        program.to_str().unwrap(),
        "2",
    ]);
    let cut = dir.join("plain-cut.data");
    cut_in_half(&plain, &cut);
    let want = common::inferno::reference_of_cut(&cut);
    assert!(
        want.values().sum::<u64>() > 0,
        "perf script read nothing before the cut"
    );
    let (got, said) = ours(&cut, &[]);
    assert!(
        said.contains(&format!("`perfz recover {}`", cut.display())),
        "{said}"
    );
    assert!(said.contains("event cpu-clock"), "{said}");
    let (share, worst) = agreement(&want, &got);
    assert!(
        share >= 0.99,
        "{:.1} % of perf's weight: {worst}",
        share * 100.0
    );

    // Long enough for several COMPRESSED records under a loaded CI (half a
    // second there once left none whole before the cut).
    let zstd = dir.join("zstd.data");
    perfz_ok(&[
        "record",
        "-q",
        "-g",
        "-o",
        zstd.to_str().unwrap(),
        "--",
        program.to_str().unwrap(),
        "2",
    ]);
    let cut = dir.join("zstd-cut.data");
    cut_in_half(&zstd, &cut);
    let (got, said) = ours(&cut, &[]);
    assert!(said.contains("perfz recover"), "{said}");
    assert!(got.values().sum::<u64>() > 0, "nothing read before the cut");
    perfz_ok(&["recover", cut.to_str().unwrap()]);
    let header = run_perf(
        &perf(),
        &["report", "--header-only", "-i", cut.to_str().unwrap()],
    );
    assert!(header.contains("name = cpu-clock"), "{header}");
    let (recovered, said) = ours(&cut, &[]);
    assert!(
        said.contains("event cpu-clock") && !said.contains("cut short"),
        "{said}"
    );
    assert_agrees("recovered", &reference(&cut, &[]), &recovered);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Dwarf unwinding through JIT code and V8's builtins (no CFI there):
/// where a frame has none, the unwinder goes on by frame pointers, as
/// perf's fp recordings do, so JS stacks reach node::Start.
#[test]
fn dwarf_stacks_go_through_jit_code_to_main() {
    require_recording();
    let dir = tempdir("export-jit-dwarf");
    let data = record_node(&dir, &["--call-graph", "dwarf"]);
    let (got, _) = ours(&data, &[]);
    remove_jit_maps(&data);
    let weight = |keep: &dyn Fn(&[&str]) -> bool| -> u64 {
        got.iter()
            .filter(|(k, _)| keep(&k.split(';').collect::<Vec<_>>()))
            .map(|(_, n)| n)
            .sum()
    };
    let total: u64 = got.values().sum();
    let js = weight(&|f| f.iter().any(|f| f.starts_with("JS:")));
    let deep = weight(&|f| f.iter().any(|f| f.starts_with("JS:")) && f.contains(&"node::Start"));
    let lone = weight(&|f| f.len() == 2 && f[1].starts_with("Builtins_"));
    assert!(js * 2 > total, "{js} of {total} in JS frames");
    assert!(
        deep * 100 >= js * 95,
        "{deep} of {js} JS weight reaches node::Start"
    );
    assert!(
        lone * 100 <= total,
        "{lone} of {total} end at a lone builtin"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `perfz --help` names every format export writes.
#[test]
fn help_names_every_export_format() {
    let o = perfz_ok(&["--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    let line = help
        .lines()
        .find(|l| l.trim_start().starts_with("export"))
        .unwrap();
    for format in ["folded", "SVG", "pprof", "speedscope", "--diff"] {
        assert!(line.contains(format), "{line}");
    }
}
