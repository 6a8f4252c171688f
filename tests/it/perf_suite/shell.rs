//! perf's shell tests (tests/shell/*.sh), each run twice in a private
//! directory: with a `perf` on PATH that is perf itself (the baseline),
//! then with one that runs `perfz record` for `perf record` and perf for
//! every other command (`perf report`, `perf inject`, `perf lock record`
//! stay perf's). A script's exit status is its verdict: 0 passed, 2
//! skipped (it lacks something), anything else failed.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{perf_tests, require_tool, sh_quote, tail};
use crate::common::{perf, require_recording, tempdir, Within};

/// Left out of both passes, with why.
const NOT_RUN: &[(&str, &str)] = &[(
    "daemon.sh",
    // Checked with a logging shim: every perf call it makes is `perf daemon
    // ...`, and the daemon starts its sessions as `<its own binary> record`
    // (perf_exe(), /proc/self/exe), never the `perf` on PATH. It would
    // pass or fail the same with perfz, and takes ~21 s.
    "perf daemon runs its sessions' `record` with its own binary, never PATH's perf: \
     it does not exercise perfz (~21 s)",
)];

/// A script perf needs longer than this for here is not run with perfz
/// (perf's slow tests, such as ones that sweep every event).
const BASELINE_LIMIT_S: u64 = 60;
/// perfz's run of a script perf finished: room for a slower recorder, and
/// a bound on a hang (the whole tree is ended, by `timeout`).
const PERFZ_LIMIT_S: u64 = 120;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Verdict {
    Pass,
    Skip,
    Fail(i32),
    TimedOut,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Verdict::Pass => write!(f, "pass"),
            Verdict::Skip => write!(f, "skip"),
            Verdict::Fail(rc) => write!(f, "FAIL (exit {rc})"),
            Verdict::TimedOut => write!(f, "TIMED OUT"),
        }
    }
}

/// The two `perf` shims: `bin/perf` is perf; `perfz/perf` is perfz for
/// `perf [global options] record ARGS`. Of perf's global options
/// `--buildid-dir DIR` matters to a recorder: it becomes PERF_BUILDID_DIR,
/// which perf honours too and perfz reads for its build-id cache
/// (src/synth/build_id.rs `cache_dir`); the others (--no-pager,
/// --debugfs-dir DIR, --debug ARG) do not change what is recorded.
fn write_shims(root: &Path) -> (PathBuf, PathBuf) {
    let perf = perf().display().to_string();
    let perfz = env!("CARGO_BIN_EXE_perfz");
    let plain = format!("#!/bin/sh\nexec {} \"$@\"\n", sh_quote(&perf));
    let z = format!(
        r#"#!/bin/sh
# perf [global options] record ARGS -> perfz record ARGS; else perf.
at=0
scan() {{
    n=0
    while [ $# -gt 0 ]; do
        n=$((n + 1))
        case $1 in
        --buildid-dir)
            [ $# -ge 2 ] || return
            export PERF_BUILDID_DIR="$2"
            shift
            n=$((n + 1)) ;;
        --buildid-dir=*) export PERF_BUILDID_DIR="${{1#*=}}" ;;
        --debugfs-dir | --debug)
            [ $# -ge 2 ] || return
            shift
            n=$((n + 1)) ;;
        record) at=$n; return ;;
        -v | --version | -h | --help | --exec-path* | --html-path | --list-*) return ;;
        -*) ;;
        *) return ;;
        esac
        shift
    done
}}
scan "$@"
if [ "$at" -gt 0 ]; then
    shift "$at"
    echo "record $*" >>"$PERFZ_SHIM_LOG"
    exec {perfz} record "$@"
fi
exec {perf} "$@"
"#,
        perfz = sh_quote(perfz),
        perf = sh_quote(&perf),
    );
    let mut dirs = Vec::new();
    for (name, text) in [("perf", plain), ("perfz", z)] {
        let dir = root.join("shims").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("perf");
        std::fs::write(&p, text).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        dirs.push(dir);
    }
    (dirs[0].clone(), dirs[1].clone())
}

/// One run of a script.
struct Run {
    verdict: Verdict,
    took: Duration,
    output: String,
    /// The `perf record` calls the perfz shim turned into perfz's.
    perfz_calls: usize,
}

/// Runs `script` with `shim` first on PATH, in a fresh directory under
/// `work`, its output in `work/NAME.log`.
fn run(script: &Path, shim: &Path, work: &Path, limit_s: u64) -> Run {
    let name = script.file_name().unwrap().to_string_lossy().into_owned();
    let cwd = work.join(name.trim_end_matches(".sh"));
    std::fs::create_dir_all(&cwd).unwrap();
    let log_path = work.join(format!("{name}.log"));
    let log = File::create(&log_path).unwrap();
    let calls = work.join(format!("{name}.perfz-calls"));
    File::create(&calls).unwrap();
    let path = format!(
        "{}:{}",
        shim.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let start = Instant::now();
    // coreutils' timeout signals its whole process group: the script and
    // whatever it started.
    let status = Command::new("timeout")
        .args(["--kill-after=5", &limit_s.to_string()])
        .arg(script)
        .env("PATH", path)
        .env("PERFZ_SHIM_LOG", &calls)
        .current_dir(&cwd)
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .status_within();
    let took = start.elapsed();
    let verdict = match status.code() {
        Some(0) => Verdict::Pass,
        Some(2) => Verdict::Skip,
        Some(124 | 137) => Verdict::TimedOut,
        Some(rc) => Verdict::Fail(rc),
        None => Verdict::Fail(-1),
    };
    Run {
        verdict,
        took,
        output: String::from_utf8_lossy(&std::fs::read(&log_path).unwrap()).into_owned(),
        perfz_calls: std::fs::read_to_string(&calls).unwrap().lines().count(),
    }
}

/// The report's line on a script perf and perfz ran, and the failure when
/// perf passes it and perfz does not. A script that never reached perfz
/// (`perf stat`, `perf probe` tests) ran perf alone both times: a second
/// verdict that differs is perf's own flakiness, reported, not perfz's.
fn judge(name: &str, base: &Run, z: &Run) -> (String, Option<String>) {
    let (b, v) = (base.verdict, z.verdict);
    let mut row = format!(
        "  {name:<36} perf: {b} ({:.1} s){}  perfz: {v} ({:.1} s, {})",
        base.took.as_secs_f64(),
        skip_reason(base),
        z.took.as_secs_f64(),
        match z.perfz_calls {
            0 => "perf record never called: perf alone".to_string(),
            n => format!("{n} perf record -> perfz"),
        }
    );
    let failure = match (b, v) {
        (Verdict::Pass, Verdict::Pass) => None,
        (Verdict::Pass, _) if z.perfz_calls == 0 => {
            row += "  <- perf alone failed it the second time: flaky with perf here";
            None
        }
        (Verdict::Pass, _) => {
            row += "  <- FAILS with perfz";
            Some(format!(
                "  {name}: perf passes, perfz: {v}; the output's tail:\n{}",
                tail(&z.output, 20)
            ))
        }
        _ => {
            row += "  (not required: perf does not pass it here)";
            None
        }
    };
    if let Verdict::Fail(_) | Verdict::TimedOut = b {
        row += &format!(
            "\n      perf's output:\n{}",
            tail(&base.output, 4).trim_end()
        );
    }
    (row + "\n", failure)
}

/// A skipping script's last line (most say why).
fn skip_reason(r: &Run) -> String {
    if r.verdict != Verdict::Skip {
        return String::new();
    }
    let last = r.output.lines().rev().find(|l| !l.trim().is_empty());
    format!(" [{}]", last.unwrap_or("no output").trim())
}

#[test]
fn perfz_passes_the_shell_tests_perf_passes() {
    require_recording();
    require_tool("cc", "gcc"); // pipe_test.sh and buildid.sh build programs
    require_tool("timeout", "coreutils");
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(perf_tests().join("shell"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "sh"))
        .collect();
    scripts.sort();
    let root = tempdir("perf-suite-shell");
    let (perf_shim, perfz_shim) = write_shims(&root);
    let start = Instant::now();
    let (mut report, mut failures) = (String::new(), String::new());
    for script in &scripts {
        let name = script.file_name().unwrap().to_string_lossy().into_owned();
        if let Some((_, why)) = NOT_RUN.iter().find(|(n, _)| *n == name) {
            report += &format!("  {name:<36} not run: {why}\n");
            continue;
        }
        let base = run(script, &perf_shim, &root.join("perf"), BASELINE_LIMIT_S);
        if base.verdict == Verdict::TimedOut {
            report += &format!(
                "  {name:<36} not run: perf takes over {BASELINE_LIMIT_S} s for it here\n"
            );
            continue;
        }
        let z = run(script, &perfz_shim, &root.join("perfz"), PERFZ_LIMIT_S);
        let (row, failure) = judge(&name, &base, &z);
        report += &row;
        failures += &failure.unwrap_or_default();
    }
    println!(
        "perf's shell tests ({}), perf then perfz, in {:.0} s:\n{report}",
        perf_tests().join("shell").display(),
        start.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "shell tests perf passes here and perfz does not (runs under {}):\n{failures}",
        root.display()
    );
    let _ = std::fs::remove_dir_all(&root);
}
