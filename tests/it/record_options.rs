//! perf record's options, judged by perf itself: for each option perfz
//! takes, perf 7.3 and perfz record the same command with it, and `perf
//! evlist -v` of the two files shows the same attr (sample_type,
//! read_format, flags, registers, branch filters); options that change the
//! records or the file are checked on those.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::common::*;

/// `perf evlist -v`'s fields of the first event, without those that differ
/// by design: perf's default `:ppp` and its attr size, perfz's build ids in
/// MMAP2 and `exclude_guest` (perf's default for `:G`-less events, which
/// 6.12 leaves out).
fn first_attr(file: &Path) -> BTreeMap<String, String> {
    let text = run_perf(&perf_7(), &["evlist", "-v", "-i", file.to_str().unwrap()]);
    let line = text.lines().next().unwrap_or_default().to_string();
    let (_, fields) = line.split_once(": ").unwrap_or_default();
    fields
        .split(", ")
        .filter_map(|f| f.split_once(": "))
        .filter(|(k, _)| {
            ![
                "precise_ip",
                "size",
                "build_id",
                "exclude_guest",
                "type",
                "config",
            ]
            .contains(k)
        })
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn record_both(
    dir: &Path,
    name: &str,
    opts: &[&str],
) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let theirs = dir.join(format!("{name}.perf"));
    let ours = dir.join(format!("{name}.perfz"));
    let args = |out: &Path| -> Vec<String> {
        let mut a: Vec<String> = [
            "record",
            "-q",
            "-e",
            "cpu-clock",
            "-o",
            out.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec();
        a.extend(opts.iter().map(|s| s.to_string()));
        a.extend(["--", "true"].map(String::from));
        a
    };
    let o = Command::new(perf_7()).args(args(&theirs)).output_within();
    assert!(
        o.status.success(),
        "perf 7.3 {opts:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let a = args(&ours);
    perfz_ok(&a.iter().map(String::as_str).collect::<Vec<_>>());
    (first_attr(&theirs), first_attr(&ours))
}

#[test]
fn each_attr_option_sets_the_attr_perf_sets() {
    require_recording();
    let dir = tempdir("record-options");
    let cases: &[&[&str]] = &[
        &[],
        &["-d"],
        &["--phys-data"],
        &["--data-page-size"],
        &["--code-page-size"],
        &["-c", "1000", "-P"],
        &["-T"],
        &["-R"],
        &["-W"],
        &["--sample-cpu"],
        &["--sample-identifier"],
        &["-s"],
        &["--running-time"],
        &["-n"],
        &["--all-user"],
        &["--all-kernel"],
        &["-g", "--user-callchains"],
        &["-g", "--kernel-callchains"],
        &["--call-graph", "dwarf"],
        &["--namespaces"],
        &["--all-cgroups"],
        &["--no-bpf-event"],
        &["--no-buffering"],
        &["-I"],
        &["--user-regs=AX,BX,R15"],
        &["-i"],
        &["-sdg"],
        // perf's negations: --no-X unsets X, --X unsets --no-X.
        &["-g", "--no-call-graph"],
        &["-i", "--inherit"],
        &["-d", "--no-data"],
        &["-n", "--samples"],
        &["--no-bpf-event", "--bpf-event"],
        // New in perf 7.x.
        &["--latency"],
        &["--sample-mem-info"],
        &["--data-mmap"],
    ];
    let mut wrong = Vec::new();
    for (i, opts) in cases.iter().enumerate() {
        let (mut theirs, ours) = record_both(&dir, &format!("c{i}"), opts);
        if opts.contains(&"dwarf") {
            // perf 7.3's dwarf mode no longer samples ADDR and DATA_SRC;
            // perf 6.1's and 7.3's own attr tests (test-record-graph-dwarf:
            // sample_type=45359) still want them, as perf 6.12 sets them,
            // and so perfz does.
            let st = theirs.entry("sample_type".into()).or_default();
            *st = st.replace("TIME|CALLCHAIN", "TIME|ADDR|CALLCHAIN") + "|DATA_SRC";
        }
        if theirs != ours {
            wrong.push(format!(
                "{opts:?}:\n  perf 7.3 {theirs:?}\n  perfz    {ours:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "attrs that differ:\n{}", wrong.join("\n"));
}

#[test]
fn options_that_change_records_or_files_do_what_perfs_do() {
    require_recording();
    let dir = tempdir("record-options-files");
    let out = dir.join("p.data");
    let o = out.to_str().unwrap();
    // --namespaces: a NAMESPACES record of the workload.
    perfz_ok(&["record", "-q", "--namespaces", "-o", o, "--", "true"]);
    let ns = run_perf(&perf(), &["script", "-i", o, "--show-namespace-events"]);
    assert!(ns.contains("PERF_RECORD_NAMESPACES"), "{ns}");
    // --synth=no: no COMM of the tasks that existed before (-a); they are
    // the synthesized ones, at time 0.
    let synthesized = |synth: &str| {
        perfz_ok(&["record", "-q", "-a", synth, "-o", o, "--", "true"]);
        let comms = run_perf(&perf(), &["script", "-i", o, "--show-task-events"]);
        comms
            .lines()
            .filter(|l| l.contains(" 0.000000: PERF_RECORD_COMM"))
            .count()
    };
    assert_eq!(synthesized("--synth=no"), 0);
    assert!(synthesized("--synth=task") > 0);
    // --dry-run: nothing recorded, nothing written.
    let dry = dir.join("dry.data");
    perfz_ok(&[
        "record",
        "--dry-run",
        "-o",
        dry.to_str().unwrap(),
        "--",
        "true",
    ]);
    assert!(!dry.exists());
    // --timestamp-filename: OUTPUT.<timestamp>.
    let base = dir.join("ts.data");
    perfz_ok(&[
        "record",
        "-q",
        "--timestamp-filename",
        "-o",
        base.to_str().unwrap(),
        "--",
        "true",
    ]);
    assert_eq!(outputs_named(&dir, "ts.data").len(), 1);
    // --strict-freq: a frequency above the kernel's limit is an error.
    let r = perfz(&[
        "record",
        "-F",
        "999999999",
        "--strict-freq",
        "-o",
        o,
        "--",
        "true",
    ]);
    assert!(!r.status.success());
    // -m with AUX pages, and options perfz refuses: one line saying why.
    for args in [&["-m", "16,16"][..], &["--kcore"], &["--overwrite"]] {
        let mut a = vec!["record"];
        a.extend_from_slice(args);
        a.extend(["-o", o, "--", "true"]);
        let r = perfz(&a);
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(
            !r.status.success() && err.contains("perfz"),
            "{args:?}: {err}"
        );
    }
    // -z --no-compression-level: no compression, as perf's (perfz's own
    // default, zstd, is unset too).
    for (z, compressed) in [("-z", true), ("--no-compression-level", false)] {
        perfz_ok(&["record", "-q", "-z", z, "-o", o, "--", "true"]);
        let h = run_perf(&perf_new(), &["report", "--header-only", "-i", o]);
        assert_eq!(h.contains("# compressed :"), compressed, "-z {z}: {h}");
    }
    // -b on an event without branch stacks: perf's words and exit code.
    let r = perfz(&["record", "-b", "-o", o, "--", "true"]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(255), "{err}");
    assert!(
        err.contains("doesn't support branch stack sampling"),
        "{err}"
    );
}

#[test]
fn exclude_perf_filters_perfzs_own_task_out_of_a_tracepoint() {
    require_recording();
    let dir = tempdir("record-exclude-perf");
    let out = dir.join("x.data");
    let o = out.to_str().unwrap();
    // perfz's own switches, with the filter and without it.
    let own_samples = |extra: &[&str]| {
        let mut args = vec!["record", "-q", "-a", "-e", "sched:sched_switch"];
        args.extend_from_slice(extra);
        args.extend(["-o", o, "--", "sleep", "0.3"]);
        let child = Command::new(env!("CARGO_BIN_EXE_perfz"))
            .args(&args)
            .spawn_owned()
            .unwrap();
        let pid = child.id().to_string();
        let r = child.wait_with_output().unwrap();
        assert!(r.status.success());
        let pids = run_perf(&perf(), &["script", "-i", o, "-F", "pid"]);
        pids.lines().filter(|l| l.trim() == pid).count()
    };
    assert!(own_samples(&[]) > 0, "perfz switches while it records");
    assert_eq!(own_samples(&["--exclude-perf"]), 0);
}

#[test]
fn buildid_mmap_puts_build_ids_in_the_maps_and_writes_no_table() {
    // Not with -a here: the kernel leaks the build-id flag of CPU-wide
    // MMAP2 records into other recorders' (see session/setup.rs), and the
    // suite records beside this test.
    require_recording();
    let dir = tempdir("record-buildid-mmap");
    let out = dir.join("b.data");
    let o = out.to_str().unwrap();
    let missing = |extra: &[&str]| {
        let mut args = vec!["record", "-q", "-o", o];
        args.extend_from_slice(extra);
        args.extend(["--", "ls", "/"]);
        perfz_ok(&args);
        let head = run_perf(&perf(), &["report", "--header-only", "-i", o]);
        let line = head.lines().find(|l| l.starts_with("# missing features:"));
        line.unwrap_or_default()
            .split_whitespace()
            .any(|f| f == "BUILD_ID")
    };
    assert!(missing(&["--buildid-mmap"]), "no build-id table");
    let maps = run_perf(&perf(), &["script", "-i", o, "--show-mmap-events"]);
    assert!(
        maps.lines()
            .any(|l| l.contains("MMAP2") && l.contains("/ls") && l.contains(" <")),
        "{maps}"
    );
    assert!(!missing(&[]), "the table by default");
}

#[test]
fn a_cpu_list_records_every_processs_side_band_as_perf_6_12() {
    require_recording();
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    assert_ne!(online.trim(), "0", "this test needs two CPUs");
    let dir = tempdir("record-options-cpu");
    let out = dir.join("c.data");
    let o = out.to_str().unwrap();
    // ls runs on CPU 1 only; the samples come from CPU 0 only.
    perfz_ok(&[
        "record", "-q", "-C", "0", "-o", o, "--", "taskset", "-c", "1", "ls", "/",
    ]);
    let evlist = run_perf(&perf_new(), &["evlist", "-i", o]);
    assert!(evlist.contains("dummy"), "{evlist}");
    let maps = run_perf(&perf(), &["script", "-i", o, "--show-mmap-events"]);
    assert!(
        maps.lines()
            .any(|l| l.contains("MMAP") && l.contains("/ls")),
        "{maps}"
    );
}

#[test]
fn the_recorded_commands_exit_status_is_perfzs() {
    require_recording();
    let dir = tempdir("record-exit");
    let o = dir.join("e.data");
    for (cmd, code) in [("true", 0), ("false", 1)] {
        let r = perfz(&["record", "-q", "-o", o.to_str().unwrap(), "--", cmd]);
        assert_eq!(r.status.code(), Some(code), "{cmd}");
    }
    let r = perfz(&[
        "record",
        "-q",
        "-o",
        o.to_str().unwrap(),
        "sh",
        "-c",
        "exit 7",
    ]);
    assert_eq!(r.status.code(), Some(7));
    // Killed by a signal: 128 + the signal, as perf (which raises it again).
    let kill = [
        "record",
        "-q",
        "-o",
        o.to_str().unwrap(),
        "sh",
        "-c",
        "kill -TERM $$",
    ];
    assert_eq!(perfz(&kill).status.code(), Some(143));
    assert!(o.exists(), "the recording is kept");
    // An unknown option is named, never run as the command (perf: 129).
    let r = perfz(&["record", "-asdgY", "-o", o.to_str().unwrap(), "true"]);
    assert_eq!(r.status.code(), Some(129));
    assert!(String::from_utf8_lossy(&r.stderr).contains("unknown switch `Y'"));
    // A CPU list that names no CPU (a script's empty `$CPUS`) fails, as
    // perf's does (255), never records nothing and says "Captured".
    for empty in ["", ",", " "] {
        let r = perfz(&[
            "record",
            "-q",
            "-C",
            empty,
            "-o",
            o.to_str().unwrap(),
            "true",
        ]);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(255), "-C {empty:?}: {err}");
        assert!(err.contains("CPU list"), "-C {empty:?}: {err}");
    }
}

#[test]
fn a_pipe_to_a_closed_stdout_fails_instead_of_capturing_nothing() {
    require_recording();
    // `>&-`: fd 1 closed. Rust's runtime would open /dev/null there; the
    // recording must fail as perf's does (255), not say "Captured".
    let r = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "exec {} record -o - -- true >&-",
            env!("CARGO_BIN_EXE_perfz")
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(255), "{err}");
    assert!(err.contains("standard output is closed"), "{err}");
    assert!(!err.contains("Captured"), "{err}");
    // Into /dev/null on purpose it records.
    let r = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "exec {} record -q -o - -- true >/dev/null",
            env!("CARGO_BIN_EXE_perfz")
        ))
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
}

/// A closed standard error (`perfz record --bogus 2>&1 | head -2` once
/// head is gone) loses perfz's words, as perf's, and never panics: the
/// status stays perf's (129 for a usage error, 1 for export's failure).
#[test]
fn a_closed_stderr_is_no_panic() {
    use std::os::fd::{FromRawFd, OwnedFd};
    let closed_pipe = || {
        let mut fds = [0; 2];
        // SAFETY: pipe fills the two descriptors it is given.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: both were just opened and are owned here only.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        drop(read);
        std::process::Stdio::from(write)
    };
    for (args, code) in [
        (&["record", "--bogus", "true"][..], 129),
        (&["export", "/nonexistent/perf.data"][..], 1),
    ] {
        let r = Command::new(env!("CARGO_BIN_EXE_perfz"))
            .args(args)
            .stderr(closed_pipe())
            .stdout(std::process::Stdio::null())
            .status_within();
        assert_eq!(r.code(), Some(code), "perfz {args:?} with stderr closed");
    }
}

#[test]
fn arguments_that_are_not_utf8_are_bytes_as_perf_passes_them() {
    require_recording();
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    let dir = tempdir("not-utf8");
    let bytes = |b: &[u8]| OsString::from_vec(b.to_vec());
    let mut out = dir.clone().into_os_string().into_vec();
    out.extend_from_slice(b"/rec\xff.data");
    let out = bytes(&out);
    // The command gets its argument's bytes and its status is perfz's, as
    // perf's (before: a panic, exit 101, in every subcommand).
    let r = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args([bytes(b"record"), bytes(b"-q"), bytes(b"-o"), out.clone()])
        .args([
            "--",
            "sh",
            "-c",
            r#"test "$1" = "$(printf '\377')" && exit 3"#,
        ])
        .arg(bytes(b"x"))
        .arg(bytes(b"\xff"))
        .output_within();
    assert_eq!(
        r.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    // The file is where the bytes named it, and perf reads the command line
    // back byte for byte.
    let header = Command::new(perf_new())
        .arg("report")
        .arg("--header-only")
        .arg("-i")
        .arg(&out)
        .output_within();
    let want = b"-- sh -c";
    let cmdline = header
        .stdout
        .split(|&b| b == b'\n')
        .find(|l| l.starts_with(b"# cmdline"))
        .unwrap_or_default()
        .to_vec();
    assert!(
        cmdline.windows(want.len()).any(|w| w == want),
        "{cmdline:?}"
    );
    // (perf ends the line with a space after the last word.)
    assert!(
        cmdline.trim_ascii_end().ends_with(b" x \xff"),
        "{cmdline:?}"
    );
    // Every other subcommand: an error or a result, never a panic.
    for sub in ["stat", "export", "report", "recover", "decompress", "eval"] {
        let r = Command::new(env!("CARGO_BIN_EXE_perfz"))
            .arg(sub)
            .arg(bytes(b"/nonexistent/\xff"))
            .output_within();
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(!err.contains("panicked"), "perfz {sub}: {err}");
        // perfz report runs perf report, whose status (255) is its.
        assert!(
            matches!(r.status.code(), Some(1 | 2 | 255)),
            "perfz {sub}: {:?} {err}",
            r.status
        );
    }
    let r = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .arg("stat")
        .arg(&out)
        .output_within();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
}

/// `-G NAME` with -a: one container's profile on a busy machine (issue
/// 49). Two busy programs, one in a cgroup of its own: every sample is of
/// the one in the cgroup, none of the other, though both ran throughout;
/// and perf reads the file.
#[test]
fn cgroup_records_only_that_cgroups_tasks() {
    require_recording();
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    let hierarchy = mounts
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| {
            f.len() > 3 && (f[2] == "cgroup2" || (f[2] == "cgroup" && f[3].contains("perf_event")))
        })
        .map(|f| std::path::PathBuf::from(f[1]))
        .expect("a cgroup2 (or perf_event cgroup) mount: this test needs cgroups");
    let name = format!("perfz-test-{}", std::process::id());
    let group = hierarchy.join(&name);
    std::fs::create_dir_all(&group).unwrap();
    let wl = workload();
    let inside = Command::new("sh")
        .args(["-c", r#"echo $$ > "$1/cgroup.procs" && exec "$2" 30"#, "sh"])
        .arg(&group)
        .arg(&wl)
        .spawn_owned()
        .unwrap();
    let outside = Command::new(&wl).arg("30").spawn_owned().unwrap();
    let (pin, pout) = (inside.id(), outside.id());
    let moved =
        || std::fs::read_to_string(format!("/proc/{pin}/cgroup")).is_ok_and(|c| c.contains(&name));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !moved() {
        assert!(
            std::time::Instant::now() < deadline,
            "the workload never entered {name}"
        );
        std::thread::yield_now();
    }
    let dir = tempdir("record-cgroup");
    let out = dir.join("g.data");
    let o = out.to_str().unwrap();
    let before = cpu_seconds(pout).unwrap();
    let r = record_while_cpu(
        &["-q", "-a", "-e", "cpu-clock", "-G", &name, "-o", o],
        &[pin],
        0.3,
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(
        cpu_seconds(pout).unwrap() > before,
        "the other program never ran"
    );
    drop((inside, outside));
    let script = run_perf(&perf(), &["script", "-F", "pid", "-i", o]);
    let pids: Vec<u32> = script
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    assert!(pids.len() > 50, "{} samples", pids.len());
    assert!(
        pids.iter().all(|&p| p == pin),
        "samples outside {name}: {:?}",
        {
            let mut o: Vec<_> = pids.iter().filter(|&&p| p != pin).collect();
            o.dedup();
            o
        }
    );
    let _ = std::fs::remove_dir(&group);
    // Only with -a or -C, and after an -e, as perf.
    let e = perfz(&["record", "-q", "-G", &name, "-o", o, "--", "true"]);
    assert!(String::from_utf8_lossy(&e.stderr).contains("must define events before cgroups"));
    let e = perfz(&[
        "record",
        "-q",
        "-e",
        "cpu-clock",
        "-G",
        &name,
        "-o",
        o,
        "--",
        "true",
    ]);
    assert!(String::from_utf8_lossy(&e.stderr).contains("only available in system-wide mode"));
}
