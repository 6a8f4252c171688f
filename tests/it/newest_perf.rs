//! What perf 6.16+ takes that older perfs did not: `-o /dev/null` written
//! as a stream; sample filters (`--filter` on any event); `--uid` as a
//! system-wide recording filtered to the user's tasks.

use crate::common;

use common::*;

/// `-o /dev/null` (scripts test options without keeping a file) records
/// into the device as a stream and exits 0, with a quiet and a busy
/// workload at a high rate; the device stays a device.
#[test]
fn dev_null_takes_a_recording() {
    require_recording();
    use std::os::unix::fs::FileTypeExt;
    perfz_ok(&["record", "-q", "-o", "/dev/null", "--", "true"]);
    let w = workload();
    let o = perfz_ok(&[
        "record",
        "-F",
        "20000",
        "-g",
        "-o",
        "/dev/null",
        "--",
        w.to_str().unwrap(),
        "0.3",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("/dev/null"),
        "the summary names the output: {err}"
    );
    let m = std::fs::metadata("/dev/null").unwrap();
    assert!(m.file_type().is_char_device(), "/dev/null was replaced");
}

/// One field's filter, its negation (where perf's grammar has one), the
/// `perf script -F` field that prints it, what each printed value must
/// satisfy under the filter, and the options that make the event sample it.
struct FieldCase {
    filter: &'static str,
    negation: Option<&'static str>,
    field: &'static str,
    holds: fn(u64) -> bool,
    args: &'static [&'static str],
}

const KERNEL: u64 = 0xffff_ffff_0000_0000;

const FIELD_CASES: &[FieldCase] = &[
    FieldCase {
        filter: "ip < 0xffffffff00000000",
        negation: Some("ip >= 0xffffffff00000000"),
        field: "ip",
        holds: |v| v < KERNEL,
        args: &[],
    },
    FieldCase {
        filter: "ip & 0x8",
        negation: None,
        field: "ip",
        holds: |v| v & 0x8 != 0,
        args: &[],
    },
    FieldCase {
        filter: "cpu == 0",
        negation: Some("cpu != 0"),
        field: "cpu",
        holds: |v| v == 0,
        args: &["--sample-cpu"],
    },
    FieldCase {
        filter: "period > 200000",
        negation: Some("period <= 200000"),
        field: "period",
        holds: |v| v > 200_000,
        args: &[],
    },
    FieldCase {
        filter: "pid != 1, tid > 1",
        negation: Some("pid == 1 || tid <= 1"),
        field: "pid",
        holds: |v| v != 1,
        args: &[],
    },
    FieldCase {
        filter: "addr == 0",
        negation: Some("addr != 0"),
        field: "addr",
        holds: |v| v == 0,
        args: &["-d"],
    },
    FieldCase {
        filter: "phys_addr == 0",
        negation: Some("phys_addr > 0"),
        field: "phys_addr",
        holds: |v| v == 0,
        args: &["--phys-data"],
    },
    FieldCase {
        filter: "tid > 1",
        negation: Some("tid <= 1"),
        field: "tid",
        holds: |v| v > 1,
        args: &[],
    },
    FieldCase {
        filter: "time > 1000",
        negation: Some("time <= 1000"),
        field: "time",
        holds: |v| v > 1000,
        args: &["-T"],
    },
    FieldCase {
        // -W samples WEIGHT_STRUCT here (as perf's), whose first part is
        // the weight perf script prints.
        filter: "weight1 == 0",
        negation: Some("weight1 > 0"),
        field: "weight",
        holds: |v| v == 0,
        args: &["-W"],
    },
    FieldCase {
        filter: "code_pgsz == 4096",
        negation: Some("code_pgsz != 4096"),
        field: "code_page_size",
        holds: |v| v == 4096,
        args: &["--code-page-size"],
    },
    FieldCase {
        filter: "data_pgsz < 4096",
        negation: Some("data_pgsz >= 4096"),
        field: "data_page_size",
        holds: |v| v < 4096,
        args: &["-d", "--data-page-size"],
    },
];

/// The values `perf script -F field` prints, one a sample (`[001]` a CPU,
/// hex for addresses).
fn script_values(file: &std::path::Path, field: &str) -> Vec<u64> {
    let out = run_perf(
        &perf(),
        &["script", "-i", file.to_str().unwrap(), "-G", "-F", field],
    );
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let w = l
                .trim()
                .trim_start_matches('[')
                .trim_end_matches([']', ':']);
            let hex = matches!(field, "ip" | "addr" | "phys_addr");
            let v = match field {
                _ if hex => u64::from_str_radix(w, 16).ok(),
                // Seconds with microseconds, as nanoseconds.
                "time" => w.parse::<f64>().ok().map(|s| (s * 1e9) as u64),
                // 4K, 2M; N/A where the kernel gave none (0).
                "code_page_size" | "data_page_size" if w == "N/A" => Some(0),
                "code_page_size" | "data_page_size" => {
                    let (n, unit) = w.split_at(w.len() - 1);
                    let shift = match unit {
                        "K" => 10,
                        "M" => 20,
                        "G" => 30,
                        _ => 0,
                    };
                    n.parse::<u64>().ok().map(|n| n << shift)
                }
                _ => w.parse().ok(),
            };
            v.unwrap_or_else(|| panic!("perf script -F {field}: {l:?}"))
        })
        .collect()
}

/// The fields perfz's BPF program reads in the kernel; a filter on another
/// runs in the push path.
const IN_KERNEL: &[&str] = &["ip", "cpu", "period", "pid", "tid", "addr"];

/// Records the workload with `-e task-clock --filter FILTER` and the
/// case's options, in the push path where `push` (else in the kernel where
/// the field is read there): the samples perf script reads, and the
/// summary's samples and samples dropped (--stats-json).
fn filtered(
    dir: &std::path::Path,
    c: &FieldCase,
    filter: &str,
    push: bool,
) -> (std::path::PathBuf, u64, u64) {
    let out = dir.join("f.data");
    let stats = dir.join("f.json");
    let w = workload();
    let mut a = vec![
        "record",
        "-q",
        "-e",
        "task-clock",
        "-F",
        "4999",
        "--filter",
        filter,
    ];
    a.extend_from_slice(c.args);
    a.extend([
        "--stats-json",
        stats.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    // Where the scheduler puts the workload decides what a `cpu` filter
    // keeps: CI runs kept nothing with `cpu == 0` and its negation alike
    // (the workload on CPU 1, then on CPU 0). So that case pins it: to
    // CPU 0 under the filter, to CPU 1 under its negation, and each
    // recording keeps the workload's samples.
    let pin = match (c.field, filter == c.filter) {
        ("cpu", true) => Some("0"),
        ("cpu", false) => Some("1"),
        _ => None,
    };
    a.push("--");
    if let Some(cpu) = pin {
        a.extend(["taskset", "-c", cpu]);
    }
    a.extend([w.to_str().unwrap(), "0.3"]);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_perfz"));
    if push {
        cmd.env(perfz::SAMPLE_FILTER_PUSH_PATH_ENV, "1");
    }
    let o = cmd.args(&a).output_within();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    let f = &j["sample_filter"];
    let kernel = !push && IN_KERNEL.contains(&c.field);
    let place = if kernel { "kernel" } else { "push path" };
    assert_eq!(f["where"], place, "{filter}: {j}");
    let dropped = f["samples_dropped"].as_u64().unwrap();
    (out, j["samples"].as_u64().unwrap(), dropped)
}

/// Each filter field, in the kernel where perfz's BPF program reads it
/// (else in the push path): every sample perf script reads back satisfies
/// the filter, none satisfies it under its negation, and the summary's
/// samples are the samples in the file.
#[test]
fn each_filter_field_keeps_only_what_satisfies_it() {
    each_field(false, "filter-fields");
}

/// The same in the push path (PERFZ_SAMPLE_FILTER_IN_PUSH_PATH), for the
/// fields the kernel reads otherwise: the dropped count is what the ring
/// held and the file does not.
#[test]
fn each_kernel_field_keeps_only_what_satisfies_it_in_the_push_path() {
    each_field(true, "filter-fields-push");
}

fn each_field(push: bool, name: &str) {
    require_recording();
    let dir = tempdir(name);
    let mut all_dropped = 0;
    let cases = FIELD_CASES
        .iter()
        .filter(|c| !push || IN_KERNEL.contains(&c.field));
    for c in cases {
        let (out, samples, dropped) = filtered(&dir, c, c.filter, push);
        let kept = script_values(&out, c.field);
        assert_eq!(
            kept.len() as u64,
            samples,
            "{}: the summary's samples",
            c.filter
        );
        if let Some(bad) = kept.iter().find(|&&v| !(c.holds)(v)) {
            panic!(
                "--filter '{}': perf script reads {} {bad:#x}",
                c.filter, c.field
            );
        }
        let Some(neg) = c.negation else {
            assert!(
                !kept.is_empty() && dropped > 0,
                "{}: {} kept, {dropped} dropped",
                c.filter,
                kept.len()
            );
            continue;
        };
        let (out, samples, neg_dropped) = filtered(&dir, c, neg, push);
        let left = script_values(&out, c.field);
        assert_eq!(left.len() as u64, samples, "{neg}: the summary's samples");
        if let Some(bad) = left.iter().find(|&&v| (c.holds)(v)) {
            panic!("--filter '{neg}': perf script reads {} {bad:#x}", c.field);
        }
        // The two recordings together sampled something, kept or dropped
        // (the workload may run on one CPU in one and on the other in the
        // next: a CI run kept 86 with `cpu == 0` and none with its
        // negation), and one of them kept a sample to check.
        let sampled = kept.len() as u64 + left.len() as u64 + dropped + neg_dropped;
        assert!(
            sampled > 100 && kept.len() + left.len() > 0,
            "{}: {} and {} samples kept, {dropped} and {neg_dropped} dropped",
            c.filter,
            kept.len(),
            left.len()
        );
        all_dropped += dropped + neg_dropped;
    }
    assert!(all_dropped > 0, "no filter left a sample out");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The user the uid test records: a uid of its own (no other test's tasks
/// run as it: perf_habits' uid test runs its workload as nobody, and `-a`
/// would sample it).
const UID: &str = "64321";

/// `--uid USER` as perf 6.16+: system-wide (`-a --uid` taken without a
/// warning), keeping the samples of the user's tasks, including a program
/// the user starts after the recording began: perfz execs its command once
/// its events are enabled (the recorder's ready point), and the command
/// starts the workload as [`UID`]. Every sample perf script reads is the
/// workload's task; root's (perfz's, the test's) are left out.
#[test]
fn uid_records_a_users_program_started_after_the_recording() {
    require_recording();
    use std::os::unix::fs::PermissionsExt;
    let dir = tempdir("uid-later");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = dir.join("deep-as-nobody");
    std::fs::copy(workload(), &exe).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = dir.join("u.data");
    let stats = dir.join("u.json");
    let o = perfz(&[
        "record",
        "-a",
        "--uid",
        UID,
        "-F",
        "999",
        "--stats-json",
        stats.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--",
        "setpriv",
        &format!("--reuid={UID}"),
        &format!("--regid={UID}"),
        "--clear-groups",
        exe.to_str().unwrap(),
        "0.3",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        !err.contains("overriding"),
        "-a --uid is taken as it is: {err}"
    );
    let script = run_perf(
        &perf(),
        &["script", "-i", out.to_str().unwrap(), "-F", "comm,pid"],
    );
    let rows: Vec<(String, u32)> = script
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some((w.next()?.to_string(), w.next()?.parse().ok()?))
        })
        .collect();
    let ours = rows.iter().filter(|(c, _)| c == "deep-as-nobody").count();
    assert!(
        ours > 100,
        "{ours} samples of the user's program: {script:.2000}"
    );
    let pids: std::collections::BTreeSet<u32> = rows.iter().map(|r| r.1).collect();
    assert_eq!(
        pids.len(),
        1,
        "only the user's task is sampled (setpriv's task before its exec is the same pid): {pids:?}, tasks: {:?}",
        rows.iter().collect::<std::collections::BTreeSet<_>>()
    );
    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    assert!(
        j["sample_filter"]["samples_dropped"].as_u64().unwrap() > 0,
        "{j}"
    );
    // Root here: the uid filter runs in the kernel (bpf_get_current_uid_gid
    // at each sample, not /proc read later).
    assert_eq!(j["sample_filter"]["where"], "kernel", "{j}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A filter over dwarf samples, whose stacks the push path also cuts: a
/// sample left out takes the cut's edits with it, the kept ones keep
/// theirs, and perf reads the file whole (every sample, its call chains).
#[test]
fn a_filter_and_the_dwarf_stack_cut_edit_one_stream() {
    require_recording();
    let dir = tempdir("filter-dwarf");
    let out = dir.join("d.data");
    let stats = dir.join("d.json");
    let w = workload();
    perfz_ok(&[
        "record",
        "-q",
        "--call-graph",
        "dwarf,4096",
        "-e",
        "task-clock",
        "--filter",
        "ip < 0xffffffff00000000, period > 200000",
        "--stats-json",
        stats.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--",
        w.to_str().unwrap(),
        "0.3",
    ]);
    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    let ips = script_values(&out, "ip");
    assert_eq!(ips.len() as u64, j["samples"].as_u64().unwrap(), "{j}");
    assert!(ips.len() > 100, "{} samples", ips.len());
    assert!(ips.iter().all(|&ip| ip < KERNEL), "a kernel ip was kept");
    // The cut walked the samples (what it clears depends on how deep the
    // stacks ran: none where every dump was full).
    assert!(j["stack_use"]["samples"].as_u64().unwrap_or(0) > 0, "{j}");
    let report = run_perf(
        &perf(),
        &[
            "report",
            "-i",
            out.to_str().unwrap(),
            "--stdio",
            "--children",
        ],
    );
    assert!(report.contains("main"), "no call chains: {report:.2000}");
    let _ = std::fs::remove_dir_all(&dir);
}
