//! perf's attr tests for `perf record` (tests/attr/test-record-*): the
//! perf_event_attr of every event a command opens, against the test's
//! expected values. perf is checked by its own runner, attr.py, through a
//! hook inside perf that logs each perf_event_open; perfz has no such hook,
//! so its events are read from the perf.data it writes (the attrs a
//! recorder writes are the ones it opened). The matching rules are
//! attr.py's (attr_file.rs).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use super::attr_file::{compare, data_equal, load_test, skip_on, AttrTest, Event};
use super::perf_data_attrs::read_events;
use super::{perf_tests, require_tool, sh_quote, tail};
use crate::common::{perf, require_recording, tempdir, Within};

/// attr.py's verdict on perf for one test.
#[derive(PartialEq, Debug)]
enum Baseline {
    Pass,
    /// perf's exit status is not the test's `ret` ("unsupp"): an event or
    /// feature this machine lacks.
    Unsupported,
    Failed(String),
}

/// `attr.py -t NAME` with perf: silent on a pass, "unsupp" when perf's
/// exit status differs from `ret`, FAILED (exit -1) on a mismatch.
fn baseline(dir: &Path, name: &str) -> Baseline {
    let out = Command::new("python3")
        .arg(dir.parent().unwrap().join("attr.py"))
        .arg("-d")
        .arg(dir)
        .arg("-p")
        .arg(perf())
        .args(["-t", name, "-v"])
        .env("PYTHONWARNINGS", "ignore")
        .output_within();
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    if text.contains("FAILED") {
        let why: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("expected") || l.contains("FAILED"))
            .collect();
        return Baseline::Failed(why.join("; "));
    }
    assert!(
        out.status.success(),
        "perf's attr.py does not run here ({}): it needs python3 < 3.12 (SafeConfigParser); \
         its output:\n{}",
        out.status,
        tail(&text, 10)
    );
    assert!(
        !text.contains("skipped"),
        "attr.py skips {name} for this machine's architecture and this harness does not: \
         the port of skip_test is wrong:\n{text}"
    );
    if text.contains("unsupp") {
        Baseline::Unsupported
    } else {
        Baseline::Pass
    }
}

/// `uname -m`, as attr.py's `os.uname()` gives it.
fn machine() -> String {
    // SAFETY: utsname is plain bytes (zeros are a valid value); uname
    // fills it and NUL-terminates its fields.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        assert_eq!(libc::uname(&mut u), 0);
        std::ffi::CStr::from_ptr(u.machine.as_ptr())
            .to_string_lossy()
            .into_owned()
    }
}

/// `RECORDER record -o DIR/perf.data ARGS` through sh (ARGS redirect), as
/// attr.py runs it: the exit status (sh's: 128 + the signal of a killed
/// recorder) and the events of the file it wrote, or why there are none.
fn record(
    recorder: &Path,
    t: &AttrTest,
    dir: &Path,
) -> (i32, Result<BTreeMap<String, Event>, String>) {
    let data = dir.join("perf.data");
    let _ = std::fs::remove_file(&data);
    let cmd = format!(
        "{} {} -o {} {}",
        sh_quote(&recorder.display().to_string()),
        t.command,
        sh_quote(&data.display().to_string()),
        t.args
    );
    let out = Command::new("sh")
        .args(["-c", &cmd])
        .current_dir(dir)
        .output_within();
    let rc = out.status.code().unwrap_or(-1);
    (rc, read_events(&data))
}

/// What a failed run said, run again without the test's `>/dev/null 2>&1`.
fn said(recorder: &Path, t: &AttrTest, dir: &Path) -> String {
    let args = t.args.trim_end().trim_end_matches("2>&1").trim_end();
    let cmd = format!(
        "{} {} -o {} {}",
        sh_quote(&recorder.display().to_string()),
        t.command,
        sh_quote(&dir.join("loud.data").display().to_string()),
        args.trim_end_matches(">/dev/null")
    );
    let out = Command::new("sh")
        .args(["-c", &cmd])
        .current_dir(dir)
        .output_within();
    // Its first lines, less the workload's (`kill` prints its usage).
    let kills = ["Usage:", "Options:"];
    let text: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.contains("kill") && !l.starts_with(' '))
        .filter(|l| !kills.contains(&l.trim()))
        .take(3)
        .map(str::to_string)
        .collect();
    text.join(" / ")
}

/// The test's verdict on one recorder: every problem, or none.
fn check(recorder: &Path, t: &AttrTest, dir: &Path) -> Vec<String> {
    let (rc, events) = record(recorder, t, dir);
    let mut problems = Vec::new();
    if !data_equal(&rc.to_string(), &t.ret) {
        problems.push(format!(
            "exit status {rc} where the test expects {} (perf exits with the workload's)",
            t.ret
        ));
    }
    match events {
        Err(e) => {
            problems.push(format!("no events read: {e}"));
            problems.push(format!("it says: {}", said(recorder, t, dir)));
        }
        Ok(result) => {
            for (from, to, flip) in [(&t.expect, &result, false), (&result, &t.expect, true)] {
                if let Err(e) = compare(from, to, flip) {
                    problems.push(e);
                }
            }
        }
    }
    problems
}

/// A problem of [`check`]'s that says the recorder was killed by a signal
/// (a shell's exit status over 128).
fn killed(problem: &str) -> bool {
    (problem.strip_prefix("exit status "))
        .and_then(|r| r.split(' ').next()?.parse::<i32>().ok())
        .is_some_and(|rc| rc > 128)
}

#[test]
fn perfz_passes_the_attr_tests_perf_passes() {
    require_recording();
    require_tool("python3", "python3");
    let dir = perf_tests().join("attr");
    let mut tests: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("test-record-")
        })
        .collect();
    tests.sort();
    let (machine, work) = (machine(), tempdir("perf-suite-attr"));
    let perfz = PathBuf::from(env!("CARGO_BIN_EXE_perfz"));
    let start = Instant::now();
    let (mut report, mut failures, mut harness) = (String::new(), String::new(), String::new());
    for path in &tests {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let t = load_test(path);
        if skip_on(&t.arch, &machine) {
            report += &format!(
                "  {name:<36} not run: for arch {} (this is {machine})\n",
                t.arch
            );
            continue;
        }
        match baseline(&dir, &name) {
            Baseline::Pass => {}
            Baseline::Unsupported => {
                report += &format!(
                    "  {name:<36} not run: perf's exit status is not {} here (unsupp: \
                     hardware or a feature this machine lacks)\n",
                    t.ret
                );
                continue;
            }
            Baseline::Failed(why) => {
                report += &format!("  {name:<36} not run: perf fails it here: {why}\n");
                continue;
            }
        }
        // The check itself, on perf's own file: it must pass what attr.py
        // passes, or this harness (not perfz) is wrong. perf 6.1 can abort
        // on a build id the kernel leaked into its ring from another
        // recorder's event (session/setup.rs; other tests record beside
        // it): a crash of perf's own is run once more, and where perf
        // crashes again the test is not run.
        let mut own = check(&perf(), &t, &work);
        if own.iter().any(|p| killed(p)) {
            own = check(&perf(), &t, &work);
        }
        if let Some(crash) = own.iter().find(|p| killed(p)) {
            report += &format!("  {name:<36} not run: perf crashes here twice ({crash})\n");
            continue;
        }
        for p in own {
            harness += &format!("  {name}: {p}\n");
        }
        let problems = check(&perfz, &t, &work);
        report += &format!(
            "  {name:<36} {}\n",
            if problems.is_empty() { "pass" } else { "FAIL" }
        );
        for p in problems {
            failures += &format!("  {name}: {p}\n");
        }
    }
    println!(
        "perf's attr tests ({}), perf by attr.py then perfz, in {:.0} s:\n{report}",
        dir.display(),
        start.elapsed().as_secs_f64()
    );
    assert!(
        harness.is_empty(),
        "the harness rejects perf's own perf.data where attr.py passes perf:\n{harness}"
    );
    assert!(
        failures.is_empty(),
        "attr tests perf passes here and perfz does not:\n{failures}"
    );
    let _ = std::fs::remove_dir_all(&work);
}
