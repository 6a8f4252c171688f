//! The sample filter in the kernel (perfz's BPF program, issue 58): taken
//! where BPF is permitted (root here), so a dropped sample never reaches
//! the ring; its drops counted as perf counts them (a LOST_SAMPLES record
//! marked PERF_RECORD_MISC_LOST_SAMPLES_BPF, which `perf report --stats`
//! reads as "LOST_SAMPLES (BPF)"); the push path where BPF is not
//! permitted; and the committed object is what its source builds.

use crate::common;

use common::*;
use perfz::{
    compile_sample_filter as compile, load_sample_filter, parse_sample_filter as parse,
    SAMPLE_FILTER_OBJECT, SAMPLE_FILTER_PUSH_PATH_ENV as PUSH_PATH_ENV,
};

const KERNEL: u64 = 0xffff_ffff_0000_0000;

/// The ips of the samples perf script reads.
fn ips(file: &std::path::Path) -> Vec<u64> {
    let out = run_perf(
        &perf(),
        &[
            "script",
            "-f",
            "-i",
            file.to_str().unwrap(),
            "-G",
            "-F",
            "ip",
        ],
    );
    out.split_whitespace()
        .map(|w| u64::from_str_radix(w, 16).unwrap_or_else(|_| panic!("perf script -F ip: {w}")))
        .collect()
}

/// The samples perf 7.3 counts as dropped by a BPF filter (`perf report
/// --stats`: "LOST_SAMPLES (BPF) events: N", 0 where it has no such line).
fn bpf_dropped_by_perf(file: &std::path::Path) -> u64 {
    let out = run_perf(
        &perf_7(),
        &["report", "-i", file.to_str().unwrap(), "--stats"],
    );
    out.lines()
        .find_map(|l| l.trim().strip_prefix("LOST_SAMPLES (BPF) events:"))
        .map_or(0, |n| n.split_whitespace().next().unwrap().parse().unwrap())
}

/// Records the workload at a rate that fills its small rings (-F 20000
/// -g, 8 pages) with `--filter FILTER`: the file and the summary.
fn record(
    dir: &std::path::Path,
    filter: &str,
    name: &str,
) -> (std::path::PathBuf, serde_json::Value) {
    let out = dir.join(format!("{name}.data"));
    let stats = dir.join(format!("{name}.json"));
    let w = workload();
    perfz_ok(&[
        "record",
        "-q",
        "-e",
        "task-clock",
        "-F",
        "20000",
        "-g",
        "-m",
        "8",
        "--filter",
        filter,
        "--stats-json",
        stats.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--",
        w.to_str().unwrap(),
        "0.5",
    ]);
    let j = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    (out, j)
}

/// The kernel path, taken as root: every sample perf reads satisfies the
/// filter (none under its negation), the summary's samples are the file's
/// (the push path dropped nothing: the ring held only kept samples), and
/// the drops perf reads from the BPF LOST_SAMPLES record are the summary's.
#[test]
fn the_kernel_filters_and_perf_reads_its_drops() {
    require_recording();
    let dir = tempdir("kernel-filter");
    let mut dropped_both = 0;
    for (filter, user) in [
        ("ip < 0xffffffff00000000", true),
        ("ip >= 0xffffffff00000000", false),
    ] {
        let (out, j) = record(&dir, filter, "k");
        let f = &j["sample_filter"];
        assert_eq!(f["where"], "kernel", "{filter}: {j}");
        let ips = ips(&out);
        assert_eq!(
            ips.len() as u64,
            j["samples"].as_u64().unwrap(),
            "{filter}: {j}"
        );
        if let Some(bad) = ips.iter().find(|&&ip| (ip < KERNEL) != user) {
            panic!("--filter '{filter}' in the kernel: perf script reads ip {bad:#x}");
        }
        let dropped = f["samples_dropped"].as_u64().unwrap();
        assert_eq!(dropped, bpf_dropped_by_perf(&out), "{filter}: {j}");
        let stat = perfz_ok(&["stat", out.to_str().unwrap()]);
        let stat = String::from_utf8_lossy(&stat.stdout);
        assert_eq!(
            stat.contains(&format!("dropped     : {dropped} samples by a BPF")),
            dropped > 0,
            "perfz stat: {stat}"
        );
        dropped_both += dropped;
        if user {
            assert!(ips.len() > 100, "{filter}: {} samples kept", ips.len());
        }
    }
    assert!(dropped_both > 0, "neither filter dropped a sample");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Where BPF is not permitted (the recording run as nobody), the filter
/// runs in the push path, says why, and still keeps only what satisfies it.
#[test]
fn the_push_path_filters_where_bpf_is_not_permitted() {
    require_recording();
    use std::os::unix::fs::PermissionsExt;
    let dir = tempdir("kernel-filter-nobody");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let exe = dir.join("deep");
    std::fs::copy(workload(), &exe).unwrap();
    let (out, stats) = (dir.join("n.data"), dir.join("n.json"));
    let o = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_perfz"))
        .args([
            "record",
            "-q",
            "-e",
            "task-clock:u",
            "-F",
            "4999",
            "--filter",
            "ip & 0x8",
        ])
        .args([
            "--stats-json",
            stats.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .args(["--", exe.to_str().unwrap(), "0.3"])
        .output_within();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "perfz record as nobody: {err}");
    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    let f = &j["sample_filter"];
    assert_eq!(f["where"], "push path", "{j}");
    assert!(
        f["why"].as_str().unwrap().contains("BPF not permitted"),
        "{j}"
    );
    let ips = ips(&out);
    let dropped = f["samples_dropped"].as_u64().unwrap();
    assert!(
        !ips.is_empty() && dropped > 0 && ips.len() as u64 + dropped > 100,
        "{j}"
    );
    assert!(
        ips.iter().all(|ip| ip & 0x8 != 0),
        "a sample without ip & 0x8 was kept"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The variable that keeps the filter in the push path does: the same
/// filter, the same samples' field, its drops counted there.
#[test]
fn the_push_path_variable_keeps_the_filter_out_of_the_kernel() {
    require_recording();
    let dir = tempdir("kernel-filter-env");
    let (out, stats) = (dir.join("e.data"), dir.join("e.json"));
    let w = workload();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_perfz"))
        .env(PUSH_PATH_ENV, "1")
        .args([
            "record",
            "-q",
            "-e",
            "task-clock",
            "-F",
            "20000",
            "-g",
            "-m",
            "8",
        ])
        .args(["--filter", "ip < 0xffffffff00000000"])
        .args([
            "--stats-json",
            stats.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .args(["--", w.to_str().unwrap(), "0.5"])
        .output_within();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    assert_eq!(j["sample_filter"]["where"], "push path", "{j}");
    let ips = ips(&out);
    assert!(ips.len() > 100 && ips.iter().all(|&ip| ip < KERNEL), "{j}");
    assert_eq!(
        bpf_dropped_by_perf(&out),
        0,
        "no BPF record from the push path"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Samples `object` drops with `filter` on a task-clock event of this
/// thread sampling every 100 µs while the thread spins 50 ms, and the
/// overflows that ran (its count over its period).
fn drops_on_this_thread(object: &[u8], filter: &str) -> (u64, u64) {
    use perfz::event::attr_build::build_attr;
    use perfz::event::events::{EventSpec, Sampling};
    use std::os::fd::AsFd;
    let ev = EventSpec::parse("task-clock").unwrap();
    let mut o = plain_attr_options();
    o.sampling = Sampling::Period(100_000);
    let attr = build_attr(&ev, &o, false);
    let fd = perfz::event::sys::open(&attr, 0, -1, -1).unwrap();
    let c = compile(
        &parse(filter, |_| 0).unwrap(),
        "task-clock",
        attr.sample_type(),
    )
    .unwrap();
    let (k, why) = load_sample_filter(object, &[Some(c)], &[(0, fd.as_fd())]);
    assert_eq!(why, None, "{filter}");
    perfz::event::sys::enable(&fd).unwrap();
    let t = std::time::Instant::now();
    let mut x = 1u64;
    while t.elapsed() < std::time::Duration::from_millis(50) {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
    perfz::event::sys::disable(&fd).unwrap();
    let mut count = [0u8; 64];
    let n = std::io::Read::read(
        &mut std::fs::File::from(fd.try_clone().unwrap()),
        &mut count,
    );
    assert!(n.unwrap() >= 8, "the event's count");
    let count = u64::from_le_bytes(count[..8].try_into().unwrap());
    (k.dropped()[0].1, count / 100_000)
}

/// The committed object is what its source builds: rebuilt with clang
/// (bpf/build.sh), the rebuilt program loads and drops what the committed
/// one drops: all under a filter no sample passes, none under one every
/// sample passes (groups and plain terms alike).
#[test]
fn the_object_rebuilt_from_its_source_filters_as_the_committed_one() {
    require_recording();
    assert!(
        std::path::Path::new("/usr/bin/clang-14").exists() || which("clang"),
        "this test rebuilds the BPF program: apt-get install clang-14"
    );
    let dir = tempdir("kernel-filter-rebuild");
    let rebuilt = dir.join("sample_filter.bpf.o");
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/transform/sample_filter/bpf/build.sh");
    let o = std::process::Command::new(&src)
        .arg(&rebuilt)
        .output_within();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rebuilt = std::fs::read(&rebuilt).unwrap();
    let me = format!("{}", current_tid());
    let all = format!("tid != {me}, ip > 0");
    let none = format!("ip == 0 || tid == {me}");
    for object in [SAMPLE_FILTER_OBJECT, &rebuilt[..]] {
        let (dropped, overflows) = drops_on_this_thread(object, &all);
        assert!(
            overflows > 50 && dropped >= overflows / 2,
            "'{all}': {dropped} dropped of {overflows}"
        );
        let (dropped, overflows) = drops_on_this_thread(object, &none);
        assert!(
            overflows > 50 && dropped == 0,
            "'{none}': {dropped} dropped of {overflows}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// This thread's id, as /proc says it.
fn current_tid() -> u32 {
    std::fs::read_link("/proc/thread-self")
        .ok()
        .and_then(|p| p.file_name()?.to_str()?.parse().ok())
        .expect("/proc/thread-self names this thread")
}

fn which(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
}

/// Two events with filters of their own, each in its own program: every
/// sample perf reads satisfies its event's filter, and perf finds each
/// event's drops under that event (its LOST_SAMPLES record carries the
/// event's id), adding up to the summary's.
#[test]
fn each_event_has_its_own_program_and_its_own_drops() {
    require_recording();
    let dir = tempdir("kernel-filter-two");
    let (out, stats) = (dir.join("t.data"), dir.join("t.json"));
    perfz_ok(&[
        "record",
        "-q",
        "-a",
        "--sample-identifier",
        "-F",
        "4999",
        "-e",
        "task-clock",
        "--filter",
        "ip < 0xffffffff00000000",
        "-e",
        "cpu-clock",
        "--filter",
        "cpu == 0",
        "--stats-json",
        stats.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--",
        "sleep",
        "0.3",
    ]);
    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    assert_eq!(j["sample_filter"]["where"], "kernel", "{j}");
    let script = run_perf(
        &perf_7(),
        &["script", "-i", out.to_str().unwrap(), "-F", "event,cpu,ip"],
    );
    let mut seen = std::collections::BTreeMap::new();
    for l in script.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        let (cpu, event, ip) = (w[0], w[1].trim_end_matches(':'), w[2]);
        let ip = u64::from_str_radix(ip, 16).unwrap();
        match event {
            "task-clock" => assert!(ip < KERNEL, "task-clock kept a kernel ip: {l}"),
            _ => assert_eq!(cpu, "[000]", "cpu-clock kept a sample off CPU 0: {l}"),
        }
        *seen.entry(event.to_string()).or_insert(0u64) += 1;
    }
    assert_eq!(seen.len(), 2, "both events sampled: {seen:?}");
    let report = run_perf(
        &perf_7(),
        &["report", "-i", out.to_str().unwrap(), "--stats"],
    );
    let mut per_event = std::collections::BTreeMap::new();
    let mut event = String::new();
    for l in report.lines() {
        if let Some(e) = l.strip_suffix(" stats:") {
            event = e.to_string();
        } else if let Some(n) = l.trim().strip_prefix("LOST_SAMPLES (BPF) events:") {
            let n: u64 = n.split_whitespace().next().unwrap().parse().unwrap();
            per_event.insert(event.clone(), n);
        }
    }
    assert!(
        per_event.contains_key("cpu-clock") && per_event.contains_key("task-clock"),
        "each event's drops under its name: {report}"
    );
    let total: u64 = per_event.values().sum();
    assert_eq!(
        total,
        j["sample_filter"]["samples_dropped"].as_u64().unwrap(),
        "{report}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
