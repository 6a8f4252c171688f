//! `perfz export --format otlp` (and `otlp-json`) read by OpenTelemetry's
//! own generated classes (PyPI opentelemetry-proto, tests/otlp/check.py):
//! every message decodes, every index is within its table, string 0 is
//! empty, and each profile's stacks folded back, weighed by their values,
//! are `perfz export --format folded` of the same recording: for frame
//! pointer, dwarf, off-CPU and multi-event recordings.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::inferno::{parse, Folded};
use crate::common::*;

/// The venv's python with OpenTelemetry's classes, or a failure that says
/// how to install them.
pub fn otlp_python() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = root.join("tests/tools/otlp-venv/bin/python");
    let found = Command::new(&python)
        .args([
            "-c",
            "import opentelemetry.proto.collector.profiles.v1development.profiles_service_pb2",
        ])
        .output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "this test decodes with OpenTelemetry's classes, which are missing: run tests/setup.sh \
         (it pip installs opentelemetry-proto==1.45.0 into tests/tools/otlp-venv)"
    );
    python
}

/// tests/otlp/check.py's report on `file` (`extra`: `--json`, `--tid`).
fn check(file: &Path, extra: &[&str]) -> serde_json::Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/otlp/check.py");
    let o = Command::new(otlp_python())
        .arg(script)
        .arg(file)
        .args(extra)
        .output_within();
    assert!(
        o.status.success(),
        "OpenTelemetry's classes refuse {}: {}",
        file.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The folded lines of profile `i` of a report.
fn folded_of(report: &serde_json::Value, i: usize) -> Folded {
    let lines = report["folded"][i]
        .as_object()
        .unwrap_or_else(|| panic!("no profile {i}: {}", report["profiles"]));
    lines
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect()
}

/// `perfz export` of `data` with `args`, as folded stacks.
fn folded(data: &Path, args: &[&str]) -> Folded {
    let mut argv = vec!["export"];
    argv.extend_from_slice(args);
    argv.push(data.to_str().unwrap());
    parse(&String::from_utf8_lossy(&perfz_ok(&argv).stdout))
}

/// `perfz export --format FORMAT` of `data` into `out` (with `args`).
fn export_to(data: &Path, format: &str, out: &Path, args: &[&str]) {
    let mut argv = vec!["export", "--format", format, "-o", out.to_str().unwrap()];
    argv.extend_from_slice(args);
    argv.push(data.to_str().unwrap());
    perfz_ok(&argv);
}

/// `data` as OTLP, protobuf and JSON: both decode to the same stacks,
/// which are the folded export's (the threads' ids too); the report.
fn same_as_folded(data: &Path, args: &[&str]) -> serde_json::Value {
    let (pb, json) = (data.with_extension("pb"), data.with_extension("json"));
    export_to(data, "otlp", &pb, args);
    export_to(data, "otlp-json", &json, args);
    let report = check(&pb, &[]);
    let from_json = check(&json, &["--json"]);
    assert_eq!(report["folded"], from_json["folded"], "protobuf and JSON");
    let all: Folded = sum(&report);
    assert_eq!(all, folded(data, args), "OTLP folded back vs perfz export");
    let mut tid = args.to_vec();
    tid.push("--tid");
    assert_eq!(
        sum(&check(&pb, &["--tid"])),
        folded(data, &tid),
        "with --tid"
    );
    report
}

/// Every profile's stacks, added up.
fn sum(report: &serde_json::Value) -> Folded {
    let mut all = Folded::new();
    for i in 0..report["folded"].as_array().unwrap().len() {
        for (k, n) in folded_of(report, i) {
            *all.entry(k).or_default() += n;
        }
    }
    all
}

/// Records `w` with `args` into `dir/name`.
fn record(dir: &Path, name: &str, args: &[&str], w: &[&str]) -> PathBuf {
    require_recording();
    let out = dir.join(name);
    let mut argv = vec!["record", "-q", "-o", out.to_str().unwrap()];
    argv.extend_from_slice(args);
    argv.push("--");
    argv.extend_from_slice(w);
    perfz_ok(&argv);
    out
}

#[test]
fn frame_pointer_and_dwarf_recordings_fold_back_to_the_folded_export() {
    let dir = tempdir("export-otlp");
    let wl = workload();
    let fp = record(&dir, "fp.data", &["-g"], &[wl.to_str().unwrap(), "0.5"]);
    let r = same_as_folded(&fp, &[]);
    assert_eq!(r["profiles"].as_array().unwrap().len(), 1, "{r}");
    let p = &r["profiles"][0];
    assert_eq!(p["type"], "cpu/nanoseconds");
    assert_eq!(p["period_type"], "cpu/nanoseconds");
    assert_eq!(p["scope"], "perfz");
    assert!(p["duration_nano"].as_u64().unwrap() > 100_000_000, "{p}");
    let name = wl.file_name().unwrap().to_str().unwrap();
    assert_eq!(r["resource"]["service.name"], name, "the recorded command");
    assert!(!r["resource"]["host.name"].as_str().unwrap().is_empty());
    let own = r["mappings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["file"] == wl.to_str().unwrap());
    let own = own.unwrap_or_else(|| panic!("no mapping of the workload: {}", r["mappings"]));
    assert!(
        own["attributes"]["process.executable.build_id.gnu"]
            .as_str()
            .is_some_and(|b| b.len() == 40),
        "{own}"
    );
    // --service-name, --sample-counts: the samples counted.
    let named = dir.join("named.pb");
    export_to(
        &fp,
        "otlp",
        &named,
        &["--service-name", "checkout", "--sample-counts"],
    );
    let n = check(&named, &[]);
    assert_eq!(n["resource"]["service.name"], "checkout");
    assert_eq!(n["profiles"][0]["type"], "samples/count");
    assert_eq!(folded_of(&n, 0), folded(&fp, &["--sample-counts"]));

    let nofp = workload_without_frame_pointers();
    let dwarf = record(
        &dir,
        "dwarf.data",
        &["--call-graph", "dwarf"],
        &[nofp.to_str().unwrap(), "0.5"],
    );
    let r = same_as_folded(&dwarf, &[]);
    let leaf = folded_of(&r, 0)
        .keys()
        .any(|k| k.ends_with("perfz_workload_leaf"));
    assert!(
        leaf,
        "the dwarf stacks reach the workload's leaf: {}",
        r["folded"]
    );
    same_as_folded(&dwarf, &["--inline"]);
}

#[test]
fn off_cpu_and_multi_event_recordings_are_a_profile_per_event() {
    let dir = tempdir("export-otlp-events");
    let off = offcpu_workload();
    let data = with_the_cpus_ours("otlp off-cpu", || {
        record(
            &dir,
            "off.data",
            &["--off-cpu", "-g"],
            &[off.to_str().unwrap(), "1", "10"],
        )
    });
    // Wall-clock time: on- and off-CPU profiles, which add up to the
    // folded export's; each alone is the export's alone.
    let r = same_as_folded(&data, &[]);
    let kinds: Vec<&str> = r["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["cpu/nanoseconds", "off-cpu/nanoseconds"], "{r}");
    assert_eq!(folded_of(&r, 0), folded(&data, &["--on-cpu-only"]));
    assert_eq!(folded_of(&r, 1), folded(&data, &["--off-cpu-only"]));
    assert_eq!(r["profiles"][1]["attributes"]["perf.event"], "offcpu-time");
    same_as_folded(&data, &["--off-cpu-only"]);

    let wl = workload();
    let two = record(
        &dir,
        "two.data",
        &["-g", "-e", "cpu-clock,task-clock"],
        &[wl.to_str().unwrap(), "0.5"],
    );
    let pb = dir.join("two.pb");
    export_to(&two, "otlp", &pb, &[]);
    let r = check(&pb, &[]);
    let profiles = r["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 2, "a profile per event: {r}");
    for (i, p) in profiles.iter().enumerate() {
        let event = p["attributes"]["perf.event"].as_str().unwrap();
        assert_eq!(folded_of(&r, i), folded(&two, &["-e", event]), "{event}");
        assert!(p["total"].as_u64().unwrap() > 0, "{event}: {p}");
    }
    let mut events: Vec<&str> = profiles
        .iter()
        .map(|p| p["attributes"]["perf.event"].as_str().unwrap())
        .collect();
    events.sort();
    assert_eq!(events, ["cpu-clock", "task-clock"]);
}
#[test]
fn a_recording_without_samples_writes_nothing_and_says_so() {
    let dir = tempdir("export-otlp-empty");
    let data = record(
        &dir,
        "none.data",
        &["-e", "cpu-clock", "-c", "1000000000000"],
        &["true"],
    );
    let out = dir.join("none.pb");
    let o = perfz(&[
        "export",
        "--format",
        "otlp",
        "-o",
        out.to_str().unwrap(),
        data.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("no samples"), "{err}");
    assert!(!out.exists(), "nothing is written");
}
