//! `perfz export --format speedscope` (issue 44), checked by speedscope's
//! own package (1.25.0: its file-format-schema.json, by ajv; its page, in
//! headless Chromium; tests/node/speedscope.js) and against the folded
//! export and `perf script` of the same recordings: each thread weighs
//! what its folded lines weigh, stack by stack, and its samples come in
//! the recording's time order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::browser::{dom, screenshot};
use crate::common::*;

/// tests/node/speedscope.js ARGS, or a failure that says how to install
/// what it needs.
fn speedscope_js(args: &[&str]) -> serde_json::Value {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/node");
    let schema = "node_modules/speedscope/dist/release/file-format-schema.json";
    assert!(
        dir.join(schema).is_file() && dir.join("node_modules/ajv").is_dir(),
        "this test checks the export with speedscope 1.25.0's schema and page and ajv: \
         run tests/setup.sh (npm install --prefix tests/node)"
    );
    let o = Command::new("node")
        .arg(dir.join("speedscope.js"))
        .args(args)
        .output_within();
    assert!(
        o.status.success(),
        "node speedscope.js {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// A speedscope export, valid by speedscope's schema: its profiles.
fn checked(file: &Path) -> serde_json::Value {
    let v = speedscope_js(&["check", file.to_str().unwrap()]);
    assert_eq!(
        v["valid"],
        true,
        "{} is not valid by speedscope's schema: {}",
        file.display(),
        v["errors"]
    );
    v
}

/// `perfz export --format speedscope ARGS INPUTS -o DIR/NAME`.
fn export(dir: &Path, name: &str, args: &[&str], inputs: &[&Path]) -> PathBuf {
    let out = dir.join(name);
    let mut argv = vec![
        "export",
        "--format",
        "speedscope",
        "-o",
        out.to_str().unwrap(),
    ];
    argv.extend_from_slice(args);
    argv.extend(inputs.iter().map(|p| p.to_str().unwrap()));
    perfz_ok(&argv);
    out
}

/// Weight by (thread `pid/tid`, stack) of the folded export with `--tid`.
fn folded_by_thread(args: &[&str], inputs: &[&Path]) -> BTreeMap<(String, String), u64> {
    let mut argv = vec!["export", "--tid"];
    argv.extend_from_slice(args);
    argv.extend(inputs.iter().map(|p| p.to_str().unwrap()));
    let text = String::from_utf8(perfz_ok(&argv).stdout).unwrap();
    let mut m = BTreeMap::new();
    for (line, n) in inferno::parse(&text) {
        let (head, stack) = line.split_once(';').unwrap();
        let thread = head.rsplit_once('-').unwrap().1.to_string();
        *m.entry((thread, stack.to_string())).or_default() += n;
    }
    m
}

/// The thread `pid/tid` of a profile named `comm (pid/tid)`.
fn thread_of(profile: &serde_json::Value) -> String {
    let name = profile["name"].as_str().unwrap();
    let (_, t) = name.rsplit_once(" (").unwrap();
    t.trim_end_matches(')').to_string()
}

/// The same weights from a checked speedscope export; each profile's
/// total is its end value.
fn speedscope_by_thread(v: &serde_json::Value) -> BTreeMap<(String, String), u64> {
    let mut m = BTreeMap::new();
    for p in v["profiles"].as_array().unwrap() {
        assert_eq!(p["total"], p["endValue"], "{}", p["name"]);
        let weights = p["weights"].as_array().unwrap();
        for (s, w) in p["stacks"].as_array().unwrap().iter().zip(weights) {
            let key = (thread_of(p), s.as_str().unwrap().to_string());
            *m.entry(key).or_default() += w.as_u64().unwrap();
        }
    }
    m
}

/// What tests/workload/offcpu.c says of itself: its pid and wall time (ms).
fn own_pid_and_wall(stderr: &str) -> (String, f64) {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("workload: pid"))
        .unwrap_or_else(|| panic!("the workload's account is missing: {stderr}"));
    let w: Vec<&str> = line.split_whitespace().collect();
    let wall = w.iter().position(|x| *x == "wall").expect("wall");
    (w[2].to_string(), w[wall + 1].parse().unwrap())
}

/// An `--off-cpu --threads=2` recording (a directory) of two threads that
/// burn, sleep and wait: each thread's profile weighs, stack by stack,
/// what its folded lines weigh (wall time; on- or off-CPU alone), in
/// nanoseconds, and the main thread's covers its wall time.
#[test]
fn each_threads_profile_weighs_its_folded_lines_on_and_off_cpu() {
    require_recording();
    let dir = tempdir("speedscope-threads");
    let data = dir.join("t.data");
    let w = offcpu_workload();
    let rec = perfz_ok(&[
        "record",
        "-o",
        data.to_str().unwrap(),
        "--off-cpu",
        "-g",
        "--threads=2",
        "--",
        w.to_str().unwrap(),
        "1.5",
        "10",
    ]);
    let (pid, wall_ms) = own_pid_and_wall(&String::from_utf8_lossy(&rec.stderr));
    for (name, side) in [
        ("wall.json", &[][..]),
        ("off.json", &["--off-cpu-only"][..]),
        ("on.json", &["--on-cpu-only"][..]),
    ] {
        let v = checked(&export(&dir, name, side, &[&data]));
        let profiles = v["profiles"].as_array().unwrap();
        assert!(profiles.len() >= 2, "{name}: {} threads", profiles.len());
        assert!(
            profiles.iter().all(|p| p["unit"] == "nanoseconds"),
            "{name}"
        );
        let want = folded_by_thread(side, &[&data]);
        assert_eq!(speedscope_by_thread(&v), want, "{name} vs folded --tid");
        if side.is_empty() {
            let main = profiles
                .iter()
                .find(|p| thread_of(p) == format!("{pid}/{pid}"))
                .unwrap_or_else(|| panic!("no profile of thread {pid}/{pid}"));
            let ms = main["total"].as_f64().unwrap() / 1e6;
            assert!(
                (ms - wall_ms).abs() < 0.15 * wall_ms,
                "the main thread's profile holds {ms:.1} ms, its wall time was {wall_ms:.1} ms"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A frame-pointer recording of `program SECS` as `dir/name`.
fn record_fp(dir: &Path, name: &str, program: &Path, secs: &str) -> PathBuf {
    let data = dir.join(name);
    let args = ["record", "-q", "-g", "-o", data.to_str().unwrap(), "--"];
    perfz_ok(&[&args[..], &[program.to_str().unwrap(), secs]].concat());
    data
}

/// Each sample's leaf function of thread `pid/tid` in `perf script`'s
/// order (time), those of `prefix` alone.
fn perf_script_leaves(data: &Path, thread: &str, prefix: &str) -> Vec<String> {
    let tid = thread.split('/').nth(1).unwrap();
    let text = run_perf(
        &perf(),
        &[
            "script",
            "-F",
            "tid,ip,sym",
            "-G",
            "-i",
            data.to_str().unwrap(),
        ],
    );
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() >= 3 && w[0] == tid && w[2].starts_with(prefix))
        .map(|w| w[2].to_string())
        .collect()
}

/// Two recordings (two processes) read as one, from files and from
/// standard input: a profile each, each weighing its folded lines; the
/// two-phase program's samples in time order (every phase-one sample
/// before every phase-two one, the leaves in `perf script`'s order).
#[test]
fn several_inputs_and_standard_input_a_profile_a_thread_in_time_order() {
    require_recording();
    let dir = tempdir("speedscope-inputs");
    let deep = record_fp(&dir, "deep.data", &workload(), "0.3");
    let phases = record_fp(&dir, "phases.data", &phases_workload(), "0.6");
    let both = checked(&export(&dir, "both.json", &[], &[&deep, &phases]));
    assert_eq!(both["profiles"].as_array().unwrap().len(), 2, "{both}");
    let want = folded_by_thread(&[], &[&deep, &phases]);
    assert_eq!(speedscope_by_thread(&both), want);
    // Standard input: the same profiles as from the file.
    let piped = dir.join("piped.json");
    let o = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args(["export", "--format", "speedscope", "-o"])
        .arg(&piped)
        .arg("-")
        .stdin(std::fs::File::open(&phases).unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn_owned()
        .unwrap()
        .output_within("perfz export -");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = checked(&piped);
    assert_eq!(
        v["profiles"],
        checked(&export(&dir, "p.json", &[], &[&phases]))["profiles"]
    );
    let p = &v["profiles"][0];
    let leaves: Vec<String> = p["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s.as_str()?.rsplit(';').next())
        .filter(|f| f.starts_with("perfz_phase"))
        .map(String::from)
        .collect();
    let last_one = leaves.iter().rposition(|f| f == "perfz_phase_one");
    let first_two = leaves.iter().position(|f| f == "perfz_phase_two");
    assert!(
        matches!((last_one, first_two), (Some(a), Some(b)) if a < b),
        "phase one's samples end at {last_one:?}, phase two's start at {first_two:?}"
    );
    let perf_order = perf_script_leaves(&phases, &thread_of(p), "perfz_phase");
    assert!(
        leaves == perf_order,
        "the samples' order differs from perf script's"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// speedscope's own page (its built app, from the npm package) in
/// headless Chromium, the export loaded as speedscope's CLI loads a file:
/// the sandwich view lists the thread's functions, the time-order view
/// draws its frames.
#[test]
fn speedscope_shows_the_threads_frames_in_its_own_page() {
    require_recording();
    let dir = tempdir("speedscope-page");
    let phases = record_fp(&dir, "phases.data", &phases_workload(), "0.4");
    let json = export(&dir, "p.json", &[], &[&phases]);
    let name = checked(&json)["profiles"][0]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let loader = dir.join("p.js");
    let page = speedscope_js(&["loader", json.to_str().unwrap(), loader.to_str().unwrap()]);
    let url = |view: &str| {
        let index = page["index"].as_str().unwrap();
        format!(
            "file://{index}#localProfilePath={}&view={view}",
            loader.display()
        )
    };
    let sandwich = dom(&url("sandwich"));
    // Its table (by self time) shows the rows in view: the two phases'.
    for f in ["perfz_phase_one", "perfz_phase_two", &name] {
        assert!(
            sandwich.contains(f),
            "speedscope's sandwich view lists no {f}"
        );
    }
    // Frames are pastel colours; the page is white, grey and black. The
    // canvas is drawn by WebGL in another process: on a loaded machine a
    // screenshot may come before it, so up to three are taken.
    let (mut seen, mut drawn) = (Vec::new(), false);
    while !drawn && seen.len() < 3 {
        let pixels = screenshot(&url("time-ordered"), (1200, 800), &dir.join("p.png"));
        let spread = |p: &[u8; 3]| p.iter().max().unwrap() - p.iter().min().unwrap();
        let coloured = pixels.iter().filter(|p| spread(p) > 30).count();
        seen.push(format!("{coloured} of {}", pixels.len()));
        // Two phases' frames fill a few percent of the page: 2 % at least.
        drawn = coloured * 50 > pixels.len();
    }
    assert!(
        drawn,
        "pixels of speedscope's time-order view that are frames, in each screenshot: {seen:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
