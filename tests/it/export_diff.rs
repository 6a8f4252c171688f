//! `perfz export --diff BASE NEW` (issue 44): the two-count folded lines
//! equal `inferno-diff-folded` of the two folded exports (tests/setup.sh's
//! inferno 0.12.8), with and without `--normalize`, and
//! `inferno-flamegraph` draws them; the differential flame graph opens in
//! headless Chromium, red where the new grew; the pprof diff reads in `go
//! tool pprof` as each function's new value less its base's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::browser::{dom, screenshot};
use crate::common::*;

/// tests/setup.sh's inferno tool `name`, or a failure that says how to get it.
fn inferno_tool(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/tools/inferno/bin")
        .join(name);
    assert!(
        p.is_file(),
        "this test compares with inferno 0.12.8's {name}, which is missing: run tests/setup.sh"
    );
    p
}

/// Records the workload with frame pointers for `secs` s as `dir/name`.
fn record(dir: &Path, name: &str, secs: &str) -> PathBuf {
    let data = dir.join(name);
    let w = workload();
    let args = ["record", "-q", "-g", "-o", data.to_str().unwrap(), "--"];
    perfz_ok(&[&args[..], &[w.to_str().unwrap(), secs]].concat());
    data
}

/// Two recordings of the workload, the second twice as long.
fn base_and_new(dir: &Path) -> (PathBuf, PathBuf) {
    require_recording();
    (
        record(dir, "base.data", "0.3"),
        record(dir, "new.data", "0.6"),
    )
}

/// `perfz export ARGS` to `dir/name`.
fn export_to(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let out = dir.join(name);
    perfz_ok(&[&["export", "-o", out.to_str().unwrap()][..], args].concat());
    out
}

/// A text's lines, sorted.
fn sorted_lines(text: &[u8]) -> Vec<String> {
    let mut v: Vec<String> = String::from_utf8_lossy(text)
        .lines()
        .map(String::from)
        .collect();
    v.sort();
    v
}

#[test]
fn diff_lines_are_inferno_diff_folded_of_the_two_exports() {
    let dir = tempdir("export-diff-folded");
    let (base, new) = base_and_new(&dir);
    let (b, n) = (base.to_str().unwrap(), new.to_str().unwrap());
    let bf = export_to(&dir, "base.folded", &[b]);
    let nf = export_to(&dir, "new.folded", &[n]);
    for normalize in [&[][..], &["--normalize"][..]] {
        let ours = export_to(
            &dir,
            "diff.folded",
            &[&["--diff"][..], normalize, &[b, n]].concat(),
        );
        let o = Command::new(inferno_tool("inferno-diff-folded"))
            .args(normalize)
            .args([&bf, &nf])
            .output_within();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let ours_text = std::fs::read(&ours).unwrap();
        let (got, want) = (sorted_lines(&ours_text), sorted_lines(&o.stdout));
        assert!(want.len() > 5, "{want:?}");
        assert_eq!(
            got, want,
            "perfz export --diff {normalize:?} vs inferno-diff-folded"
        );
        // inferno-flamegraph draws them as a differential flame graph.
        let o = Command::new(inferno_tool("inferno-flamegraph"))
            .arg(&ours)
            .output_within();
        let svg = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success() && svg.contains("perfz_workload_leaf"),
            "{svg:.300}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The differential flame graph in headless Chromium: its frames drawn
/// in the red of what grew (the new recording is twice as long), its
/// frames' titles saying by how much.
#[test]
fn diff_svg_opens_in_a_browser_red_where_the_new_grew() {
    let dir = tempdir("export-diff-svg");
    let (base, new) = base_and_new(&dir);
    let (b, n) = (base.to_str().unwrap(), new.to_str().unwrap());
    let svg = export_to(&dir, "diff.svg", &["--diff", "--format", "svg", b, n]);
    let url = format!("file://{}", svg.display());
    // The whole graph (its root, all of it red, at the bottom).
    let text = std::fs::read_to_string(&svg).unwrap();
    let height: u32 = text
        .split("<svg")
        .nth(1)
        .and_then(|s| s.split("height=\"").nth(1))
        .and_then(|s| s.split('"').next()?.parse().ok())
        .expect("the svg says its height");
    let pixels = screenshot(&url, (1200, height.clamp(200, 4000)), &dir.join("diff.png"));
    // inferno's differential colours: (255, c, c) grew, (c, c, 255) shrank.
    let red = pixels
        .iter()
        .filter(|p| p[0] == 255 && p[1] == p[2] && p[1] < 250)
        .count();
    assert!(
        red * 50 > pixels.len(),
        "{red} of {} pixels of the differential flame graph are red",
        pixels.len()
    );
    let page = dom(&url);
    assert!(page.contains("perfz diff: "), "no title in {page:.300}");
    let leaf = page
        .split("<title>perfz_workload_leaf (")
        .nth(1)
        .and_then(|t| t.split("</title>").next())
        .expect("a frame of the workload's leaf");
    assert!(leaf.contains("+"), "its growth is not said: {leaf}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `go tool pprof -top -sample_index=INDEX`: flat value per function
/// (signed; nanoseconds without their unit).
fn pprof_flat(profile: &Path, index: &str) -> BTreeMap<String, i64> {
    let o = Command::new("go")
        .args([
            "tool",
            "pprof",
            "-top",
            "-nodefraction=0",
            "-edgefraction=0",
        ])
        .args([
            "-nodecount=100000",
            "-unit=ns",
            &format!("-sample_index={index}"),
        ])
        .arg(profile)
        .output_within();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && text.contains("flat%"),
        "go tool pprof -top {} (apt-get install -y golang-go): {}{text}",
        profile.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    text.lines()
        .skip_while(|l| !l.contains("flat%"))
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let flat = f.first()?.trim_end_matches("ns").parse().ok()?;
            Some((f.get(5..)?.join(" "), flat))
        })
        .collect()
}

#[test]
fn diff_pprof_reads_in_go_pprof_as_new_less_base() {
    let dir = tempdir("export-diff-pprof");
    let (base, new) = base_and_new(&dir);
    let (b, n) = (base.to_str().unwrap(), new.to_str().unwrap());
    let bp = export_to(&dir, "base.pb.gz", &["--format", "pprof", b]);
    let np = export_to(&dir, "new.pb.gz", &["--format", "pprof", n]);
    let diff = export_to(&dir, "diff.pb.gz", &["--diff", "--format", "pprof", b, n]);
    for index in ["samples", "cpu"] {
        let (bt, nt) = (pprof_flat(&bp, index), pprof_flat(&np, index));
        let got = pprof_flat(&diff, index);
        let mut want = nt.clone();
        for (f, v) in &bt {
            *want.entry(f.clone()).or_default() -= v;
        }
        want.retain(|_, v| *v != 0);
        let got_nonzero: BTreeMap<_, _> = got.iter().filter(|(_, v)| **v != 0).collect();
        assert_eq!(
            got_nonzero,
            want.iter().collect(),
            "{index}: new less base, by function"
        );
        let total = |m: &BTreeMap<String, i64>| m.values().sum::<i64>();
        assert_eq!(total(&got), total(&nt) - total(&bt), "{index}");
        assert!(total(&got) > 0, "{index}: the new recording is longer");
    }
    // Normalized: the base scaled to the new's total (each sample's value
    // truncated), so the difference sums to about nothing.
    let args = ["--diff", "--normalize", "--format", "pprof", b, n];
    let norm = export_to(&dir, "norm.pb.gz", &args);
    let left: i64 = pprof_flat(&norm, "samples").values().sum();
    let new_total: i64 = pprof_flat(&np, "samples").values().sum();
    assert!(
        left.abs() * 20 < new_total,
        "{left} of {new_total} samples left"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A recording against itself: every stack's two counts equal, the pprof
/// diff sums to nothing; what --diff cannot do is refused with the way.
#[test]
fn a_recording_against_itself_and_what_diff_refuses() {
    let dir = tempdir("export-diff-self");
    let f = fixture("z1-cmd");
    let f = f.to_str().unwrap();
    let lines = perfz_ok(&["export", "--diff", f, f]).stdout;
    let lines = String::from_utf8(lines).unwrap();
    assert!(lines.lines().count() > 3, "{lines}");
    for l in lines.lines() {
        let c: Vec<&str> = l.rsplitn(3, ' ').collect();
        assert_eq!(c[0], c[1], "{l}");
    }
    let diff = export_to(&dir, "self.pb.gz", &["--diff", "--format", "pprof", f, f]);
    let flat = pprof_flat(&diff, "samples");
    assert!(flat.values().all(|&v| v == 0), "{flat:?}");
    let o = Command::new("go")
        .args(["tool", "pprof", "-top", "-sample_index=samples"])
        .arg(&diff)
        .output_within();
    let top = String::from_utf8_lossy(&o.stdout);
    assert!(top.contains("accounting for 0, 0% of 106 total"), "{top}");
    // A recording of no sample against one of cpu-clock's, both ways: the
    // empty side counts nothing (go tool pprof reads the whole difference).
    require_recording();
    let empty = dir.join("empty.data");
    let e = empty.to_str().unwrap();
    // Started disabled for 10 s (-D): `true` is gone long before.
    perfz_ok(&[
        "record",
        "-q",
        "-e",
        "cpu-clock",
        "-D",
        "10000",
        "-o",
        e,
        "true",
    ]);
    assert_eq!(
        our_sample_count(&empty),
        0,
        "the empty recording holds samples"
    );
    for (base, new, sign) in [(e, f, 1), (f, e, -1)] {
        let d = export_to(
            &dir,
            "empty.pb.gz",
            &["--diff", "--format", "pprof", base, new],
        );
        let flat = pprof_flat(&d, "samples");
        let total: i64 = flat.values().sum();
        assert_eq!(total, sign * 106, "base {base}, new {new}: {flat:?}");
        let folded = perfz_ok(&["export", "--diff", base, new]).stdout;
        assert!(!folded.is_empty(), "the folded diff of {base} and {new}");
    }
    for (args, says) in [
        (&["--diff", f][..], "--diff takes two recordings"),
        (
            &["--diff", "--format", "speedscope", f, f][..],
            "not speedscope",
        ),
        (&["--normalize", f][..], "--diff"),
    ] {
        let o = perfz(&[&["export"][..], args].concat());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(says), "{args:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
