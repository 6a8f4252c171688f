//! Latency profiles (issue 49): `perfz record --latency` records what
//! perf's does, and `perfz export --latency` and `perfz report --latency`
//! weigh each sample by how many of the program's threads ran then, as
//! perf 7.3's `perf report --latency` does: the same shares on the same
//! file. The workload has known parallelism: 4 threads, then 1.

use std::collections::BTreeMap;
use std::process::Command;

use crate::common::*;

/// The first two columns of `perf report --stdio`-like rows whose symbol
/// is `perfz_*`: symbol -> (first %, second %).
fn shares(text: &str) -> BTreeMap<String, (f64, f64)> {
    let pct = |w: &str| w.trim_end_matches('%').parse::<f64>().ok();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let sym = w.last()?;
            sym.starts_with("perfz_")
                .then(|| Some((sym.to_string(), (pct(w.first()?)?, pct(w.get(1)?)?))))?
        })
        .collect()
}

/// Each leaf's share of a folded export's weight, in percent.
fn leaf_shares(folded: &str) -> BTreeMap<String, f64> {
    let mut by: BTreeMap<String, u64> = BTreeMap::new();
    let mut total = 0;
    for l in folded.lines() {
        let Some((stack, n)) = l.rsplit_once(' ') else {
            continue;
        };
        let n: u64 = n.parse().unwrap();
        total += n;
        *by.entry(stack.rsplit(';').next().unwrap().to_string())
            .or_default() += n;
    }
    by.into_iter()
        .map(|(k, v)| (k, 100.0 * v as f64 / total.max(1) as f64))
        .collect()
}

#[test]
fn latency_shares_are_perf_7_3s() {
    require_recording();
    let dir = tempdir("latency");
    let data = dir.join("lat.data");
    let file = data.to_str().unwrap();
    let wl = parallel_workload();
    perfz_ok(&[
        "record",
        "-q",
        "--latency",
        "-o",
        file,
        "--",
        wl.to_str().unwrap(),
        "0.2",
        "4",
    ]);
    // perf's word: context_switch on the event, as perf 7.3 records it.
    let evlist = run_perf(&perf_7(), &["evlist", "-v", "-i", file]);
    assert!(evlist.contains("context_switch: 1"), "{evlist}");
    let line = [
        "--latency",
        "--stdio",
        "--no-children",
        "--sort",
        "sym",
        "-i",
        file,
    ];
    let theirs = shares(&run_perf(&perf_7(), &[&["report"][..], &line].concat()));
    let ours = perfz_ok(&[&["report", "--own"][..], &line].concat());
    let ours = shares(&String::from_utf8_lossy(&ours.stdout));
    assert!(
        theirs.contains_key("perfz_wide") && theirs.contains_key("perfz_narrow"),
        "{theirs:?}"
    );
    let folded = perfz_ok(&["export", "--latency", file]);
    let folded = leaf_shares(&String::from_utf8_lossy(&folded.stdout));
    for (sym, (latency, overhead)) in &theirs {
        let (l, o) = ours[sym];
        assert!(
            (l - latency).abs() < 0.02,
            "{sym}: latency perfz {l}%, perf 7.3 {latency}%"
        );
        assert!(
            (o - overhead).abs() < 0.02,
            "{sym}: overhead perfz {o}%, perf 7.3 {overhead}%"
        );
        let f = folded[sym];
        assert!(
            (f - latency).abs() < 0.02,
            "{sym}: folded latency {f}%, perf 7.3 {latency}%"
        );
    }
    // The other outputs weigh alike: pprof's value, as go tool pprof reads it.
    let pb = dir.join("lat.pb.gz");
    perfz_ok(&[
        "export",
        "--latency",
        "--format",
        "pprof",
        "-o",
        pb.to_str().unwrap(),
        file,
    ]);
    let top = Command::new("go")
        .args([
            "tool",
            "pprof",
            "-top",
            "-sample_index=1",
            "-nodefraction=0",
        ])
        .arg(&pb)
        .output_within();
    let top = String::from_utf8_lossy(&top.stdout);
    let wide = percent_column(&top, " perfz_wide", 1)
        .unwrap_or_else(|| panic!("go tool pprof -top names perfz_wide:\n{top}"));
    assert!(
        (wide - theirs["perfz_wide"].0).abs() < 0.1,
        "pprof {wide}%, perf {theirs:?}"
    );
    // A recording without context switches: an error that says what to do.
    let plain = dir.join("plain.data");
    perfz_ok(&["record", "-q", "-o", plain.to_str().unwrap(), "--", "true"]);
    let o = perfz(&["export", "--latency", plain.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("perfz record --latency"));
    // As perf 7.3, no latency profile of a whole system.
    let o = perfz(&[
        "record",
        "-q",
        "--latency",
        "-a",
        "-o",
        plain.to_str().unwrap(),
        "--",
        "true",
    ]);
    assert_eq!(o.status.code(), Some(255));
}
