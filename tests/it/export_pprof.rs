//! `perfz export --format pprof` read by the reference reader (`go tool
//! pprof`, Debian's golang-go) and by an independent decoder (the npm
//! package pprof-format, tests/node/decode.js), against `perf report`
//! on the same recording: same functions, same sample counts, the same
//! total period.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

/// `go`, or a failure that says how to install it.
fn go() -> PathBuf {
    let found = Command::new("go").arg("version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "this test reads the profile with `go tool pprof`: apt-get install -y golang-go"
    );
    PathBuf::from("go")
}

/// tests/node/decode.js's verdict on a profile, or a failure that says how
/// to install the decoder.
fn node_decode(profile: &Path) -> serde_json::Value {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/node");
    assert!(
        dir.join("node_modules/pprof-format").is_dir(),
        "this test decodes the profile with the npm package pprof-format: \
         npm install --prefix tests/node (Node.js and npm: apt-get install -y nodejs npm)"
    );
    let o = Command::new("node")
        .arg(dir.join("decode.js"))
        .arg(profile)
        .output_within();
    assert!(
        o.status.success(),
        "pprof-format could not decode {}: {}",
        profile.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `perf report --no-children --sort sym`: self samples per named symbol,
/// and the total period ("Event count").
fn perf_report(data: &Path) -> (BTreeMap<String, u64>, u64) {
    let text = run_perf(
        &perf(),
        &[
            "report",
            "-i",
            data.to_str().unwrap(),
            "--stdio",
            "--no-children",
            "--sort",
            "sym",
            "-g",
            "none",
            "-F",
            "sample,sym",
        ],
    );
    let mut counts = BTreeMap::new();
    let mut period = 0;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("# Event count (approx.): ") {
            period = n.trim().parse().unwrap();
        }
        let t = line.trim();
        let Some((n, rest)) = t.split_once("  ") else {
            continue;
        };
        let (Ok(n), Some(sym)) = (n.parse::<u64>(), rest.trim().get(4..)) else {
            continue;
        };
        // Unnamed addresses are printed as 0x...: no function to compare.
        if !sym.starts_with("0x") {
            *counts.entry(sym.to_string()).or_default() += n;
        }
    }
    (counts, period)
}

/// `go tool pprof -top` by samples: flat count per function.
fn pprof_top(profile: &Path) -> BTreeMap<String, u64> {
    let o = Command::new(go())
        .args([
            "tool",
            "pprof",
            "-top",
            "-sample_index=samples",
            "-nodefraction=0",
            "-nodecount=100000",
        ])
        .arg(profile)
        .output_within();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && text.contains("flat%"),
        "go tool pprof -top {}: {}{text}",
        profile.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    text.lines()
        .skip_while(|l| !l.contains("flat%"))
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((f.get(5..)?.join(" "), f[0].parse().ok()?))
        })
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// The same functions with the same self sample counts: every function
/// of at least 1 % of the samples in either, the workload's leaf among
/// them.
fn check(data: &Path, profile: &Path) {
    let (want, period) = perf_report(data);
    let total: u64 = want.values().sum();
    let top = pprof_top(profile);
    let big = |m: &BTreeMap<String, u64>| -> BTreeMap<String, u64> {
        m.iter()
            .filter(|(_, n)| **n * 100 >= total)
            .map(|(k, n)| (k.clone(), *n))
            .collect()
    };
    assert!(total > 500, "{total} samples");
    assert!(big(&want).contains_key("perfz_workload_leaf"), "{want:?}");
    assert_eq!(big(&top), big(&want), "go tool pprof -top vs perf report");
    let node = node_decode(profile);
    assert_eq!(
        node["sampleTypes"],
        serde_json::json!([["samples", "count"], ["cpu", "nanoseconds"]])
    );
    assert_eq!(node["totals"][1].as_u64(), Some(period), "the total period");
    // Every named function, however rare, as perf report counts it.
    for (f, n) in &want {
        assert_eq!(node["leaves"][f].as_u64(), Some(*n), "{f}: {node}");
    }
    assert!(node["durationNanos"].as_u64().unwrap() > 100_000_000);
    let comments = node["comments"].to_string();
    assert!(comments.contains(data.file_name().unwrap().to_str().unwrap()));
}

/// The build id perf lists for `file` in the recording.
fn perf_build_id(data: &Path, file: &Path) -> String {
    let list = run_perf(&perf(), &["buildid-list", "-i", data.to_str().unwrap()]);
    list.lines()
        .find(|l| l.ends_with(file.to_str().unwrap()))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no build id for {} in {list}", file.display()))
        .to_string()
}

/// A perfz frame-pointer recording and perf's own dwarf recording, as
/// pprof: go tool pprof and pprof-format read what perf report reads; the
/// program's mapping (first) carries its build id.
#[test]
fn pprof_is_read_by_go_tool_pprof_and_pprof_format_as_perf_report_reads() {
    require_recording();
    let dir = tempdir("export-pprof");
    let wl = workload();
    let w = wl.to_str().unwrap();
    let z = dir.join("z.data");
    perfz_ok(&[
        "record",
        "-q",
        "-g",
        "-o",
        z.to_str().unwrap(),
        "--",
        w,
        "0.6",
    ]);
    let zp = dir.join("z.pb.gz");
    perfz_ok(&[
        "export",
        "--format",
        "pprof",
        "-o",
        zp.to_str().unwrap(),
        z.to_str().unwrap(),
    ]);
    check(&z, &zp);
    let node = node_decode(&zp);
    assert_eq!(node["mappings"][0][0].as_str(), Some(w), "{node}");
    assert_eq!(
        node["mappings"][0][1].as_str().unwrap(),
        perf_build_id(&z, &wl)
    );

    let nofp = workload_without_frame_pointers();
    let p = dir.join("p.data");
    let st = Command::new(perf())
        .args(["record", "-q", "-B", "--call-graph", "dwarf", "-o"])
        .arg(&p)
        .args(["--", nofp.to_str().unwrap(), "0.6"])
        .status_within();
    assert!(st.success(), "perf record");
    let pp = dir.join("p.pb.gz");
    perfz_ok(&[
        "export",
        "--format",
        "pprof",
        "-o",
        pp.to_str().unwrap(),
        p.to_str().unwrap(),
    ]);
    check(&p, &pp);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A profile holds one event: with two, pprof asks for -e (exit 1, nothing
/// written), and `-e` keeps that event's samples only, in every format.
#[test]
fn pprof_of_two_events_wants_one_chosen() {
    require_recording();
    let dir = tempdir("export-pprof-events");
    let data = dir.join("two.data");
    let d = data.to_str().unwrap();
    let wl = workload();
    perfz_ok(&[
        "record",
        "-q",
        "-e",
        "cpu-clock,page-faults",
        "-g",
        "-o",
        d,
        "--",
        wl.to_str().unwrap(),
        "0.3",
    ]);
    let out = dir.join("two.pb.gz");
    let o = perfz(&[
        "export",
        "--format",
        "pprof",
        "-o",
        out.to_str().unwrap(),
        d,
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("-e") && err.contains("page-faults"), "{err}");
    assert!(!out.exists(), "nothing is written");
    perfz_ok(&[
        "export",
        "--format",
        "pprof",
        "-e",
        "page-faults",
        "-o",
        out.to_str().unwrap(),
        d,
    ]);
    let node = node_decode(&out);
    assert_eq!(
        node["sampleTypes"][1],
        serde_json::json!(["page-faults", "count"])
    );
    let faults = perf_report_event(&data, "page-faults");
    assert!(faults > 0);
    assert_eq!(node["totals"][0].as_u64(), Some(faults));
    let folded = perfz_ok(&["export", "-e", "cpu-clock", "--sample-counts", d]);
    let n: u64 = String::from_utf8(folded.stdout)
        .unwrap()
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert_eq!(n, perf_report_event(&data, "cpu-clock"));
    let bad = perfz(&["export", "-e", "cycles", d]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("cpu-clock"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// perf's count of the samples of one event of a recording.
fn perf_report_event(data: &Path, event: &str) -> u64 {
    let text = run_perf(
        &perf(),
        &["script", "-F", "event", "-G", "-i", data.to_str().unwrap()],
    );
    text.lines()
        .filter(|l| l.trim().trim_end_matches(':') == event)
        .count() as u64
}
