//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use perfz::format::{PerfReader, RecordType};

mod bounded;
pub mod browser;
pub mod compressed2;
pub mod inferno;
pub mod owned;
mod reaper;
pub use bounded::{WaitWithin, Within};
pub use owned::{Owned, SpawnOwned};

/// The perf 6.1 fixtures (tests/fixtures/perf61, with their README).
pub fn fixtures() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/perf61");
    assert!(dir.is_dir(), "fixtures not found at {}", dir.display());
    dir
}

/// Every fixture's name (file or directory) without `.data`.
pub const FIXTURES: &[&str] = &[
    "plain-cmd",
    "z1-cmd",
    "z3-wrap-cmd",
    "pipe-cmd",
    "zpipe-cmd",
    "zthreads-cmd",
    "z-2events-cmd",
    "z-aio-cmd",
    "z-attach-p",
    "z-sysw-switch",
    "plain-sysw",
];

pub fn fixture(name: &str) -> PathBuf {
    fixtures().join(format!("{name}.data"))
}

pub fn perfz(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args(args)
        .output_within()
}

pub fn perfz_ok(args: &[&str]) -> Output {
    let out = perfz(args);
    assert!(
        out.status.success(),
        "perfz {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The real `perf` 6.1. A test that needs it fails with the fix when it is
/// missing (README: tests that need perf or recording rights fail, never skip).
pub fn perf() -> PathBuf {
    for p in ["/usr/bin/perf", "/usr/local/bin/perf"] {
        if Path::new(p).exists() {
            return PathBuf::from(p);
        }
    }
    panic!("this test needs the real `perf`: install it (tests/setup.sh, or Debian: apt-get install -y linux-perf)");
}

/// The newer perf the interop tests read every output with beside 6.1:
/// bookworm-backports' perf 6.12, unpacked by tests/setup.sh.
pub fn perf_new() -> PathBuf {
    unpacked_perf("6.12")
}

/// The perf of `version` tests/setup.sh unpacked under tests/tools (a test
/// that needs it fails with the fix where it does not run).
fn unpacked_perf(version: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/tools/perf-{version}/perf"));
    let runs = Command::new(&p).arg("--version").output().is_ok_and(|o| {
        String::from_utf8_lossy(&o.stdout).starts_with(&format!("perf version {version}"))
    });
    assert!(
        runs,
        "this test reads with perf {version} too and {} does not run it: run tests/setup.sh (as root)",
        p.display()
    );
    p
}

/// perfz record's status when a signal (SIGINT, SIGTERM) stops it while
/// it records a command: the command's, which it then ends with SIGTERM
/// (128 + 15), as perf 6.12's.
pub const STOPPED_WITH_COMMAND: i32 = 143;

/// The newest perf: trixie-backports' perf 7.3, unpacked by tests/setup.sh
/// with the trixie libraries it needs (its wrapper starts it).
pub fn perf_7() -> PathBuf {
    unpacked_perf("7.3")
}

/// perf 6.1, 6.12 and 7.3, with their names for messages: every perf a
/// user has today reads what perfz writes.
pub fn perfs() -> [(&'static str, PathBuf); 3] {
    [
        ("perf 6.1", perf()),
        ("perf 6.12", perf_new()),
        ("perf 7.3", perf_7()),
    ]
}

/// `(tid, time, ip)` of every sample as `perf script` reads them.
pub fn perf_script_samples(perf: &Path, file: &Path) -> Vec<(u32, String, u64)> {
    let f = file.to_str().unwrap();
    parse_script(&run_perf(
        perf,
        &["script", "-i", f, "-F", "tid,time,ip", "-G"],
    ))
}

/// Asserts two sample lists are equal, naming their sizes and the first
/// difference (not the thousands of samples) when they are not.
#[track_caller]
pub fn assert_same_samples(got: &[(u32, String, u64)], want: &[(u32, String, u64)], what: &str) {
    if got != want {
        let i = got.iter().zip(want).take_while(|(a, b)| a == b).count();
        panic!(
            "{what}: {} samples where {} were expected; the first difference at {i}: {:?} where {:?}",
            got.len(),
            want.len(),
            got.get(i),
            want.get(i)
        );
    }
}

/// `(tid, time as perf script prints it, ip)` of every sample, sorted.
pub fn samples(path: &Path) -> Vec<(u32, String, u64)> {
    let mut r = PerfReader::open(path).unwrap();
    let mut out = Vec::new();
    while let Some((rec, meta)) = r.next_record().unwrap() {
        if rec.header.type_ == RecordType::SAMPLE {
            let s = meta
                .parse_sample(&rec)
                .unwrap()
                .expect("sample has an attr");
            let t = s.time.unwrap_or(0);
            out.push((
                s.tid.unwrap_or(0),
                format!("{}.{:06}", t / 1_000_000_000, t % 1_000_000_000 / 1000),
                s.ip.unwrap_or(0),
            ));
        }
    }
    out.sort();
    out
}

/// The same triples from `perf script -F tid,time,ip`-like output (also the
/// fuller `comm pid/tid time: event: ip sym (dso)` form), sorted. Callchain
/// lines (indented, no time) are ignored.
pub fn parse_script(text: &str) -> Vec<(u32, String, u64)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let toks: Vec<&str> = line.split_whitespace().collect();
        let Some(ti) = toks.iter().position(|t| {
            t.ends_with(':')
                && t[..t.len() - 1].contains('.')
                && t[..t.len() - 1]
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == '.')
        }) else {
            continue;
        };
        let time = toks[ti].trim_end_matches(':').to_string();
        let tid = toks[..ti]
            .iter()
            .rev()
            .find_map(|t| {
                t.rsplit('/')
                    .next()
                    .and_then(|x| x.parse::<i32>().ok().map(|t| t as u32))
            })
            .unwrap_or_else(|| panic!("a tid before the time in {line:?}"));
        // The ip is the first hex token after the time (after the event name, if any).
        let ip = toks[ti + 1..]
            .iter()
            .find(|t| !t.ends_with(':') && u64::from_str_radix(t, 16).is_ok())
            .map(|t| u64::from_str_radix(t, 16).unwrap())
            .unwrap_or_else(|| panic!("an ip after the time in {line:?}"));
        out.push((tid, time, ip));
    }
    out.sort();
    out
}

/// A script's whole output: its standard output, then its standard error.
#[allow(dead_code)]
pub fn all_output(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

/// Runs perf with `args`, returning stdout; panics with stderr on failure.
pub fn run_perf(perf: &Path, args: &[&str]) -> String {
    let out = Command::new(perf).args(args).output_within();
    assert!(
        out.status.success(),
        "perf {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A directory of this test binary's for `name`, empty (`perfz-test-NAME-PID`
/// under the temporary directory). What a run leaves there (a failed
/// test's files, to look at) stays until the next run: its first call
/// removes the test directories of runs that ended.
pub fn tempdir(name: &str) -> PathBuf {
    sweep_ended_runs();
    let d = std::env::temp_dir().join(format!("perfz-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Removes, once per run, the `perfz-test-*-PID` and `perfz-languages-PID`
/// directories under the temporary directory whose PID is no running
/// process's (runs that ended).
pub fn sweep_ended_runs() {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| {
        let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let ours = name.starts_with("perfz-test-") || name.starts_with("perfz-languages-");
            let pid = name.rsplit('-').next().and_then(|p| p.parse::<u32>().ok());
            let ended = pid.is_some_and(|p| {
                p != std::process::id() && !Path::new(&format!("/proc/{p}")).exists()
            });
            if ours && ended && e.file_type().is_ok_and(|t| t.is_dir()) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    });
}

/// Fails the test with the fix unless this machine lets us open perf events
/// (a software event on CPU 0 for ourselves).
pub fn require_recording() {
    use perfz::event::attr_build::build_attr;
    use perfz::event::events::EventSpec;
    let ev = EventSpec::parse("cpu-clock").unwrap();
    let o = plain_attr_options();
    if let Err(e) = perfz::event::sys::open(&build_attr(&ev, &o, false), 0, -1, -1) {
        panic!(
            "this test records and perf_event_open is refused ({e}): run the tests as root, \
             or lower /proc/sys/kernel/perf_event_paranoid (sysctl kernel.perf_event_paranoid=-1)"
        );
    }
}

/// Attr options of a plain 100 Hz sampler: no call graph, no ids, no
/// inheritance, enabled at once.
pub fn plain_attr_options() -> perfz::event::attr_build::AttrOptions {
    use perfz::event::events::{CallGraph, Sampling};
    perfz::event::attr_build::AttrOptions {
        sampling: Sampling::Frequency(100),
        call_graph: CallGraph::None,
        with_id: false,
        with_cpu: false,
        inherit: false,
        enable_on_exec: false,
        switch_events: false,
        build_id: false,
        sampling_explicit: true,
        clockid: None,
        with_period: false,
        extra: Default::default(),
    }
}

/// Builds tests/workload/NAME.c once per test binary.
fn built(name: &str, cell: &'static std::sync::OnceLock<PathBuf>) -> PathBuf {
    built_with(name, "-fno-omit-frame-pointer", cell)
}

/// tests/workload/deep.c built without frame pointers (for dwarf unwinding).
#[allow(dead_code)]
pub fn workload_without_frame_pointers() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    built_with("deep", "-fomit-frame-pointer", &BUILT)
}

fn built_with(name: &str, fp: &str, cell: &'static std::sync::OnceLock<PathBuf>) -> PathBuf {
    cell.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/workload/{name}.c"));
        let out = std::env::temp_dir().join(format!("perfz-{name}{fp}-{}", std::process::id()));
        let st = Command::new("cc")
            .args(["-O1", "-g", fp, "-fno-inline", "-o"])
            .arg(&out)
            .arg(&src)
            .status_within();
        assert!(st.success(), "building {}", src.display());
        out
    })
    .clone()
}

/// The workload of tests/workload/deep.c, built once per test binary.
pub fn workload() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    built("deep", &BUILT)
}

/// tests/workload/anon_code.c (a loop in anonymous memory, as a JIT's).
#[allow(dead_code)]
pub fn anon_code_workload() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    built("anon_code", &BUILT)
}

/// Held by whatever adds or deletes probes (perf probe): tracefs holds
/// one set of them for the machine, perf refuses an event name any group
/// has already, and perf's shell tests delete their groups whole; tests
/// that run at once would break each other's.
pub static PROBES: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// [`PROBES`], taken (a test that panicked holding it poisons nothing).
pub fn probes_lock() -> std::sync::MutexGuard<'static, ()> {
    PROBES.lock().unwrap_or_else(|e| e.into_inner())
}

/// tests/workload/parallel.c (THREADS threads, then one).
#[allow(dead_code)]
pub fn parallel_workload() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    built("parallel", &BUILT)
}

/// The percentage in column `column` (0 first) of the first line of a
/// table (`perf report`'s, `go tool pprof -top`'s) that ends with
/// `row_end`.
#[allow(dead_code)]
pub fn percent_column(text: &str, row_end: &str, column: usize) -> Option<f64> {
    let line = text.lines().find(|l| l.ends_with(row_end))?;
    let word = line.split_whitespace().nth(column)?;
    word.trim_end_matches('%').parse().ok()
}

/// tests/workload/phases.c (phase one, then phase two).
#[allow(dead_code)]
pub fn phases_workload() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    built("phases", &BUILT)
}

/// Headless Chromium, to open what perfz draws as a person would.
#[allow(dead_code)]
pub fn chromium() -> PathBuf {
    for c in ["chromium", "chromium-browser", "google-chrome"] {
        let found = Command::new(c)
            .arg("--version")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if found {
            return PathBuf::from(c);
        }
    }
    panic!(
        "this test opens a flame graph in headless Chromium, which is missing: run tests/setup.sh \
         (apt-get install chromium)"
    );
}

/// tests/workload/offcpu.c (a main thread that burns, sleeps and waits on
/// a pipe fed by a second thread, a third of its time each, and says how
/// long each took).
#[allow(dead_code)]
pub fn offcpu_workload() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    built("offcpu", &BUILT)
}

/// tests/workload/migrate.c (moves itself to the last CPU and spins).
#[allow(dead_code)]
pub fn migrate_workload() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    built("migrate", &BUILT)
}

/// Finishes the file a pusher wrote into: every write landed, and the
/// features HEADER_COMPRESSED alone, as the pusher's codec left it.
#[allow(dead_code)]
pub fn finish_pushed<C, S, M>(p: perfz::push::Pusher<C, S, M>)
where
    C: perfz::codecs::Codec,
    S: perfz::push::Sink,
    M: perfz::push::Meter,
{
    let f = perfz::format::FeatureSet::default().with_compressed(p.compressed_info());
    p.into_sink()
        .hand_over(None)
        .landed()
        .unwrap()
        .finish(&f)
        .unwrap();
}

/// Samples in a recording, by perfz's reader.
#[allow(dead_code)]
pub fn our_sample_count(path: &Path) -> u64 {
    let mut r = perfz::format::PerfReader::open(path).unwrap();
    let mut n = 0;
    while let Some((rec, _)) = r.next_record().unwrap() {
        n += (rec.header.type_ == perfz::format::RecordType::SAMPLE) as u64;
    }
    n
}

/// A FIFO at `p` (for --control tests).
#[allow(dead_code)]
pub fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// `SAMPLE events: N` of `perf report --stats`.
pub fn perf_sample_count(perf: &Path, path: &Path) -> u64 {
    let out = run_perf(perf, &["report", "--stats", "-i", path.to_str().unwrap()]);
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    sample_line(&out).unwrap_or_else(|| {
        panic!(
            "perf read no stats from {} ({size} B): {out}",
            path.display()
        )
    })
}

/// [`perf_sample_count`], or `None` where perf cannot read the file — or
/// does not finish within a minute (perf 6.1 loops forever on some damaged
/// files; coreutils' `timeout` ends it).
pub fn try_perf_sample_count(perf: &Path, path: &Path) -> Option<u64> {
    let o = Command::new("timeout")
        .args(["--kill-after=5", "60"])
        .arg(perf)
        .args(["report", "--stats", "-i"])
        .arg(path)
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| sample_line(&String::from_utf8_lossy(&o.stdout)))
        .flatten()
}

/// The sample count of `perf report --stats` output (perf prints no
/// SAMPLE line for a file without samples: 0).
fn sample_line(out: &str) -> Option<u64> {
    if !out.contains("Aggregated stats") {
        return None;
    }
    Some(
        out.lines()
            .find(|l| l.trim_start().starts_with("SAMPLE events:"))
            .map_or(0, |l| l.split_whitespace().nth(2).unwrap().parse().unwrap()),
    )
}

/// Sample count according to linux-perf-data 0.13, an independent reader.
pub fn oracle_samples(path: &Path) -> usize {
    use linux_perf_data::{PerfFileReader, PerfFileRecord};
    let f = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let PerfFileReader {
        mut perf_file,
        mut record_iter,
    } = PerfFileReader::parse_file(f).unwrap();
    let mut n = 0;
    while let Some(rec) = record_iter.next_record(&mut perf_file).unwrap() {
        if let PerfFileRecord::EventRecord { record, .. } = rec {
            if record.record_type == linux_perf_data::linux_perf_event_reader::RecordType::SAMPLE {
                n += 1;
            }
        }
    }
    n
}

/// Converts a recording to zstd:1 (which perf reads) with `perfz recompress`.
pub fn recompress_zstd(input: &Path, output: &Path) {
    perfz_ok(&[
        "recompress",
        "--codec",
        "zstd:1",
        input.to_str().unwrap(),
        "-o",
        output.to_str().unwrap(),
    ]);
}

/// CPU seconds (user + system) process `pid` has used, from /proc.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    // SAFETY: sysconf reads a constant.
    let tick = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let f: Vec<&str> = stat.rsplit(')').next()?.split_whitespace().collect();
    Some((f[11].parse::<f64>().ok()? + f[12].parse::<f64>().ok()?) / tick)
}

/// Waits until `pid` has used `secs` of CPU time (a state, however busy
/// the machine is) and returns what it has used.
pub fn wait_cpu_of(pid: u32, secs: f64) -> f64 {
    for _ in 0..6000 {
        if let Some(t) = cpu_seconds(pid).filter(|&t| t >= secs) {
            return t;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("process {pid} did not reach {secs} s of CPU time within 60 s");
}

/// [`wait_cpu_of`] the workload perfz runs (its first child).
pub fn wait_cpu(perfz_pid: u32, secs: f64) -> f64 {
    let mut child = None;
    for _ in 0..6000 {
        child = std::fs::read_to_string(format!("/proc/{perfz_pid}/task/{perfz_pid}/children"))
            .ok()
            .and_then(|k| k.split_whitespace().next()?.parse::<u32>().ok());
        if child.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    wait_cpu_of(child.expect("perfz started its workload within 60 s"), secs)
}

/// CPU seconds `pids` have used between them (those gone count 0).
pub fn cpu_seconds_of(pids: &[u32]) -> f64 {
    pids.iter().map(|&p| cpu_seconds(p).unwrap_or(0.0)).sum()
}

/// `perfz record ARGS` of a target that runs already (-p, -t, -u, -a),
/// for as long as `pids` take to use `secs` more CPU time between them,
/// however busy the machine: the recorded command is `sh -c read`, which
/// ends when the test closes its input once that CPU time is used (a
/// `sleep` gave a busy workload a share of the CPUs, not samples). The
/// window opens when sh runs (perfz lets its command exec once the events
/// are open). perfz's output.
pub fn record_while_cpu(args: &[&str], pids: &[u32], secs: f64) -> Output {
    record_while_cpu_by(Command::new(env!("CARGO_BIN_EXE_perfz")), args, pids, secs)
}

/// [`record_while_cpu`] by `perfz` (a command with its environment set).
pub fn record_while_cpu_by(mut perfz: Command, args: &[&str], pids: &[u32], secs: f64) -> Output {
    let mut child = perfz
        .arg("record")
        .args(args)
        .args(["--", "sh", "-c", "read x || true"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn_owned()
        .unwrap();
    let me = child.id();
    let sh_runs = || {
        std::fs::read_to_string(format!("/proc/{me}/task/{me}/children"))
            .unwrap_or_default()
            .split_whitespace()
            .any(|k| std::fs::read_to_string(format!("/proc/{k}/comm")).is_ok_and(|c| c == "sh\n"))
    };
    let mut started = false;
    for _ in 0..6000 {
        started = sh_runs();
        if started || !matches!(child.try_wait(), Ok(None)) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    if started {
        let from = cpu_seconds_of(pids);
        let mut used = false;
        for _ in 0..6000 {
            used = cpu_seconds_of(pids) >= from + secs;
            if used {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(
            used,
            "{pids:?} did not use {secs} s more CPU time within 60 s"
        );
    }
    drop(child.stdin.take());
    let out = child.output_within("perfz record -- sh -c read");
    assert!(
        started && out.status.success(),
        "perfz record {args:?} (its command ran: {started}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// tests/workload/deep.c for `secs` of its own CPU time, once it runs its
/// loop (it has used 0.05 s of CPU): a target to attach to.
pub fn running_workload(secs: &str) -> Owned {
    let wl = Command::new(workload()).arg(secs).spawn_owned().unwrap();
    wait_cpu_of(wl.id(), 0.05);
    wl
}

/// Entries of `dir` named `base.<timestamp>` (switched outputs, snapshots:
/// 16 digits, perf's names), sorted: oldest first.
#[allow(dead_code)]
pub fn outputs_named(dir: &Path, base: &str) -> Vec<PathBuf> {
    let prefix = format!("{base}.");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .strip_prefix(&prefix)
                .is_some_and(|ts| ts.len() >= 16 && ts[..16].bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    v.sort();
    v
}

/// Waits until `dir` holds at least `n` outputs named `base.*` and `done()`
/// holds (a state, with a 30 s deadline).
#[allow(dead_code)]
pub fn wait_for_outputs(dir: &Path, base: &str, n: usize, done: impl Fn() -> bool) {
    for _ in 0..3000 {
        if outputs_named(dir, base).len() >= n && done() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("no output {n} named {base}.* within 30 s");
}

/// `perfz record ARGS -o OUT WORKLOAD SECS`, started (stderr piped): for
/// tests that signal or steer the recorder while it runs.
#[allow(dead_code)]
pub fn spawn_record(args: &[&str], out: &Path, secs: &str) -> Owned {
    Command::new(env!("CARGO_BIN_EXE_perfz"))
        .arg("record")
        .args(args)
        .arg("-o")
        .arg(out)
        .arg(workload())
        .arg(secs)
        .stderr(std::process::Stdio::piped())
        .spawn_owned()
        .unwrap()
}

/// The recording at `from` with its kernel's build id changed: a recording
/// of another kernel.
pub fn another_kernels(from: &Path, to: &Path) {
    let kid = run_perf(&perf(), &["buildid-list", "-k"]);
    let kid = kid.trim();
    let kid: Vec<u8> = (0..kid.len() / 2)
        .map(|i| u8::from_str_radix(&kid[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let mut bytes = std::fs::read(from).unwrap();
    // Every copy: the build-id table's, and the kernel map's (perf 7's
    // MMAP2 carries it too).
    let at: Vec<usize> = (0..bytes.len().saturating_sub(kid.len()))
        .filter(|&i| bytes[i..i + kid.len()] == kid[..])
        .collect();
    assert!(!at.is_empty(), "the kernel's build id");
    for i in at {
        bytes[i] ^= 0xff;
    }
    std::fs::write(to, bytes).unwrap();
}

/// CPU time the host took from this machine's CPUs since boot (/proc/stat's
/// steal), in ms: on a shared VM a CPU-bound thread's samples miss it (the
/// sampling timer fires late, once), so its on-CPU weight falls short of
/// its own clock by up to that much.
pub fn host_steal_ms() -> u64 {
    // SAFETY: sysconf reads a constant.
    let tick = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let cpu = stat.lines().next().unwrap_or_default();
    let steal = cpu
        .split_whitespace()
        .nth(8)
        .and_then(|s| s.parse::<u64>().ok());
    steal.unwrap_or(0) * 1000 / tick
}

/// Runs `f` (a recording whose weights the test holds to a workload's own
/// clock) again, three times at most, while the host took more than 20 ms
/// of CPU (steal) during it: a state of the machine, not of perfz; said.
pub fn with_the_cpus_ours<T>(what: &str, mut f: impl FnMut() -> T) -> T {
    for attempt in 1.. {
        let before = host_steal_ms();
        let got = f();
        let stolen = host_steal_ms().saturating_sub(before);
        if stolen <= 20 || attempt == 3 {
            if stolen > 20 {
                println!("{what}: the host took {stolen} ms of CPU during it, three times");
            }
            return got;
        }
        println!("{what}: the host took {stolen} ms of CPU during it; recorded again");
    }
    unreachable!()
}
