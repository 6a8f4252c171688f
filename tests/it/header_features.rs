//! perfz's header carries the feature sections perf 6.12 writes for the
//! same command on the same machine, with the same host facts, and perf
//! 6.1 reads it too.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::{perf, perf_new, perfz_ok, require_recording, run_perf, tempdir};

/// `perf report --header-only -I` of `file` by `perf`.
fn header(perf: &Path, file: &Path) -> String {
    run_perf(
        perf,
        &[
            "report",
            "--header-only",
            "-I",
            "-i",
            file.to_str().unwrap(),
        ],
    )
}

/// The feature sections `perf report` says the file lacks.
fn missing(h: &str) -> BTreeSet<String> {
    h.lines()
        .find_map(|l| l.strip_prefix("# missing features:"))
        .expect("a `missing features` line")
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// The lines starting with any of `prefixes`, in order.
fn lines<'a>(h: &'a str, prefixes: &[&str]) -> Vec<&'a str> {
    h.lines()
        .filter(|l| prefixes.iter().any(|p| l.starts_with(p)))
        .collect()
}

/// The cache lines: from `# CPU cache info:` to the next line not
/// indented under it.
fn caches(h: &str) -> Vec<&str> {
    h.lines()
        .skip_while(|l| !l.starts_with("# CPU cache info:"))
        .take_while(|l| l.starts_with("# CPU cache info:") || l.starts_with("#  "))
        .collect()
}

/// `(total kB, free kB)` of each `# nodeN meminfo` line.
fn numa_memory(h: &str) -> Vec<(String, u64)> {
    lines(h, &["# node"])
        .into_iter()
        .filter(|l| l.contains("meminfo"))
        .map(|l| {
            let node = l.split_whitespace().nth(1).unwrap().to_string();
            let total = l
                .split("total = ")
                .nth(1)
                .and_then(|t| t.split_whitespace().next())
                .and_then(|t| t.parse().ok())
                .unwrap_or_else(|| panic!("a total in {l:?}"));
            (node, total)
        })
        .collect()
}

/// The first and last sample times `perf report` prints (seconds).
fn sample_times(h: &str) -> (f64, f64) {
    let t = |p: &str| -> f64 {
        h.lines()
            .find_map(|l| l.strip_prefix(p))
            .unwrap_or_else(|| panic!("no {p:?} line in\n{h}"))
            .trim()
            .parse()
            .unwrap()
    };
    (t("# time of first sample :"), t("# time of last sample :"))
}

#[test]
fn header_features_match_perf_6_12() {
    require_recording();
    let new = perf_new();
    let d = tempdir("header-features");
    let (a, b) = (d.join("perf.data"), d.join("perfz.data"));
    // A command that runs long enough for a few samples at 4 kHz.
    let cmd = [
        "dd",
        "if=/dev/zero",
        "of=/dev/null",
        "bs=4k",
        "count=100000",
    ];
    let mut args = vec!["record", "-o", a.to_str().unwrap(), "--"];
    args.extend(cmd);
    run_perf(&new, &args);
    let mut args = vec!["record", "-o", b.to_str().unwrap(), "--"];
    args.extend(cmd);
    perfz_ok(&args);
    let (theirs, ours) = (header(&new, &a), header(&new, &b));
    let why = format!("perf 6.12's header:\n{theirs}\nperfz's:\n{ours}");

    // The same sections: perf compresses only with -z, perfz by default.
    let mut ours_missing = missing(&ours);
    ours_missing.insert("COMPRESSED".into());
    assert_eq!(missing(&theirs), ours_missing, "{why}");
    for f in [
        "CPU_TOPOLOGY",
        "NUMA_TOPOLOGY",
        "CACHE",
        "MEM_TOPOLOGY",
        "SAMPLE_TIME",
        "PMU_MAPPINGS",
        "CPU_PMU_CAPS",
        "PMU_CAPS",
        "BPF_PROG_INFO",
        "BPF_BTF",
    ] {
        assert!(
            !missing(&ours).contains(f) || missing(&theirs).contains(f),
            "perfz lacks {f}: {why}"
        );
    }

    // The host facts, line for line.
    let facts = [
        "# sibling ",
        "# CPU ",
        "# node",
        "# pmu mappings",
        "# memory nodes",
        "#    ",
        "# cpu pmu capabilities",
        "# hybrid",
        "# nrcpus",
        "# cpudesc",
        "# cpuid",
        "# total memory",
    ];
    let without_free = |h: &str| -> Vec<String> {
        lines(h, &facts)
            .into_iter()
            .filter(|l| !l.contains("meminfo"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(without_free(&theirs), without_free(&ours), "{why}");
    assert!(!lines(&ours, &["# sibling sockets"]).is_empty(), "{why}");
    assert_eq!(caches(&theirs), caches(&ours), "{why}");
    assert!(caches(&ours).len() > 1, "{why}");
    // A node's memory total is the same fact, but a VM's balloon moves it
    // between the two recordings; its free memory moves all the time.
    let (tn, on) = (numa_memory(&theirs), numa_memory(&ours));
    assert_eq!(tn.len(), on.len(), "{why}");
    for ((tnode, ttotal), (onode, ototal)) in tn.iter().zip(&on) {
        assert_eq!(tnode, onode, "{why}");
        assert!(
            ttotal.abs_diff(*ototal) <= ttotal / 20,
            "node {tnode}: total {ttotal} kB vs {ototal} kB: {why}"
        );
    }

    // SAMPLE_TIME: the recording's own first and last samples, as perf
    // script sees them.
    let (first, last) = sample_times(&ours);
    let script = run_perf(&new, &["script", "-F", "time", "-i", b.to_str().unwrap()]);
    let times: Vec<f64> = script
        .lines()
        .filter_map(|l| l.trim().trim_end_matches(':').parse().ok())
        .collect();
    assert!(!times.is_empty(), "no samples: {script}");
    let min = times.iter().copied().fold(f64::MAX, f64::min);
    let max = times.iter().copied().fold(0.0, f64::max);
    assert!(
        (first - min).abs() < 2e-6 && (last - max).abs() < 2e-6,
        "SAMPLE_TIME {first}..{last}, samples {min}..{max}"
    );
    let (tfirst, _) = sample_times(&theirs);
    assert!(
        first >= tfirst && first - tfirst < 300.0,
        "perfz's first sample ({first}) is not after perf's ({tfirst})"
    );

    // perf 6.1 reads perfz's header whole, with the same host facts.
    let old = header(&perf(), &b);
    assert!(old.contains("# sibling sockets"), "perf 6.1:\n{old}");
    assert!(old.contains("# CPU cache info:"), "perf 6.1:\n{old}");
    assert!(old.contains("# memory nodes"), "perf 6.1:\n{old}");
    assert!(old.contains("# time of first sample"), "perf 6.1:\n{old}");
    assert_eq!(caches(&old), caches(&ours), "perf 6.1:\n{old}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn clock_sections_with_k_as_perf_6_12() {
    require_recording();
    let new = perf_new();
    let d = tempdir("header-clock");
    let (a, b) = (d.join("perf.data"), d.join("perfz.data"));
    run_perf(
        &new,
        &[
            "record",
            "-k",
            "mono",
            "-o",
            a.to_str().unwrap(),
            "--",
            "true",
        ],
    );
    perfz_ok(&[
        "record",
        "-k",
        "mono",
        "-o",
        b.to_str().unwrap(),
        "--",
        "true",
    ]);
    let (theirs, ours) = (header(&new, &a), header(&new, &b));
    let why = format!("perf 6.12's header:\n{theirs}\nperfz's:\n{ours}");
    for f in ["CLOCKID", "CLOCK_DATA"] {
        assert!(!missing(&theirs).contains(f), "{why}");
        assert!(!missing(&ours).contains(f), "{why}");
    }
    let clock = ["# clockid frequency", "# clockid:"];
    assert_eq!(lines(&theirs, &clock), lines(&ours, &clock), "{why}");
    // The reference time: today's date, and the monotonic clock beside it.
    let r = lines(&ours, &["# reference time:"]);
    assert_eq!(r.len(), 1, "{why}");
    assert!(r[0].ends_with("(monotonic)"), "{why}");
    let _ = std::fs::remove_dir_all(&d);
}
