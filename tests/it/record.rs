//! `perfz record` end to end, as root, read back by our reader and by the real
//! perf 6.1: every codec, frame-pointer and dwarf call graphs, attach,
//! system-wide, a wrapping ring, and bad usage.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::*;
use perfz::format::{PerfReader, RecordType};

/// Samples according to our reader; every SAMPLE must decode.
fn our_samples(path: &Path) -> u64 {
    let mut r = PerfReader::open(path).unwrap();
    let mut n = 0;
    while let Some((rec, meta)) = r.next_record().unwrap() {
        if rec.header.type_ == RecordType::SAMPLE {
            meta.parse_sample(&rec).unwrap().expect("a known attr");
            n += 1;
        }
    }
    n
}

fn record(args: &[&str], out: &Path) -> std::process::Output {
    let mut a = vec!["record", "-o", out.to_str().unwrap()];
    a.extend_from_slice(args);
    perfz_ok(&a)
}

/// Checks a recording of the workload: our count, perf's count and the
/// workload's function names in perf's view of it.
fn check_with_perf(perf: &Path, file: &Path, label: &str) {
    let ours = our_samples(file);
    assert!(ours > 50, "{label}: only {ours} samples");
    let theirs = perf_sample_count(perf, file);
    assert_eq!(
        ours, theirs,
        "{label}: perf counts {theirs} samples, we count {ours}"
    );
    let script = run_perf(
        perf,
        &["script", "-i", file.to_str().unwrap(), "-F", "comm,ip,sym"],
    );
    for f in ["perfz_workload_leaf", "perfz_workload_alpha"] {
        assert!(script.contains(f), "{label}: perf script does not show {f}");
    }
}

#[test]
fn every_codec_with_fp_and_dwarf_call_graphs() {
    require_recording();
    let perf = perf();
    let wl = workload();
    let dir = tempdir("rec-codecs");
    for codec in [
        "zstd:1",
        "zstd:3",
        "zstd:1,oneshot",
        "none",
        "lz4",
        "snappy",
    ] {
        for (cg, cg_args) in [("fp", vec!["-g"]), ("dwarf", vec!["--call-graph", "dwarf"])] {
            let label = format!("{codec} {cg}");
            let file = dir.join(format!("{}-{cg}.data", codec.replace([':', ','], "")));
            let mut args = vec!["--codec", codec, "-F", "1999", "-q"];
            args.extend(&cg_args);
            args.extend(["--", wl.to_str().unwrap(), "0.4"]);
            record(&args, &file);
            let perf = perf.as_path();
            if codec.starts_with("zstd") || codec == "none" {
                check_with_perf(perf, &file, &label);
            } else {
                // perf cannot read lz4/snappy; the converted file must be equivalent.
                let conv = dir.join(format!("{}-{cg}.zstd.data", codec));
                recompress_zstd(&file, &conv);
                assert_eq!(our_samples(&conv), our_samples(&file), "{label}");
                check_with_perf(perf, &conv, &label);
            }
        }
    }
}

/// A pipe announces HEADER_COMPRESSED before its first record, so its
/// mmap_len is declared before anything is written: lz4's records of
/// compressible dwarf stacks decode to MiBs each, and the pipe must still
/// read back whole (it declared perf's ring size, and perfz refused it).
#[test]
fn pipe_output_of_every_codec_reads_back_whole() {
    require_recording();
    let dir = tempdir("rec-pipe-codecs");
    for codec in ["lz4", "snappy", "zstd:1"] {
        let file = dir.join(format!("{}.data", codec.replace(':', "")));
        let stats = dir.join(format!("{}.json", codec.replace(':', "")));
        let o = Command::new(env!("CARGO_BIN_EXE_perfz"))
            .args(["record", "-o", "-", "--codec", codec, "-F", "4000"])
            .arg("--stats-json")
            .arg(&stats)
            .args(["--call-graph", "dwarf,4096", "--"])
            .arg(workload())
            .arg("0.5")
            .stdout(std::fs::File::create(&file).unwrap())
            .stderr(std::process::Stdio::piped())
            .spawn_owned()
            .unwrap()
            .output_within("perfz record -o -");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{codec}: {err}");
        // The samples perfz says it wrote (a pipe's summary line counts
        // none, as perf's).
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
        let said = json["samples"]
            .as_u64()
            .unwrap_or_else(|| panic!("{codec}: {json}"));
        assert!(said > 500, "{codec}: {err}");
        assert_eq!(our_samples(&file), said, "{codec}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn attach_to_a_running_process() {
    require_recording();
    let dir = tempdir("rec-attach");
    // Attached while it runs, for 0.3 s of its CPU time (a wall-clock
    // `sleep 0.5` gave it a share of the CPUs: fewer samples under load).
    let mut child = running_workload("30");
    let file = dir.join("p.data");
    let pid = child.id().to_string();
    let args = ["-g", "-q", "-p", &pid, "-o", file.to_str().unwrap()];
    record_while_cpu(&args, &[child.id()], 0.3);
    let _ = child.kill();
    let _ = child.wait();
    check_with_perf(&perf(), &file, "-p");
}

#[test]
fn system_wide() {
    require_recording();
    let dir = tempdir("rec-sysw");
    let file = dir.join("a.data");
    let wl = workload();
    record(
        &["-a", "-g", "-q", "--", wl.to_str().unwrap(), "0.4"],
        &file,
    );
    let st = perfz::collect_stats(PerfReader::open(&file).unwrap()).unwrap();
    assert!(
        st.counts.values().any(|(n, c)| n == "FORK" && *c > 5),
        "FORK records from /proc"
    );
    check_with_perf(&perf(), &file, "-a");
}

#[test]
fn pipe_output_to_perf_report() {
    require_recording();
    let perf = perf();
    let dir = tempdir("rec-pipe");
    let wl = workload();
    let out = perfz_ok(&[
        "record",
        "-g",
        "-q",
        "-o",
        "-",
        "--",
        wl.to_str().unwrap(),
        "0.3",
    ]);
    let file = dir.join("pipe.data");
    std::fs::write(&file, &out.stdout).unwrap();
    assert_eq!(
        u64::from_le_bytes(out.stdout[8..16].try_into().unwrap()),
        16,
        "pipe header"
    );
    let script = run_perf(
        &perf,
        &["script", "-i", file.to_str().unwrap(), "-F", "ip,sym"],
    );
    assert!(script.contains("perfz_workload_leaf"));
    assert!(our_samples(&file) > 50);
}

#[test]
fn a_tiny_wrapping_ring_keeps_every_record_intact() {
    require_recording();
    let dir = tempdir("rec-wrap");
    let file = dir.join("wrap.data");
    let json = dir.join("wrap.json");
    let wl = workload();
    // 2 data pages, a sample every 20 µs of CPU, deep stacks: the ring wraps
    // thousands of times and may overflow.
    record(
        &[
            "-m",
            "2",
            "-c",
            "20000",
            "-g",
            "-q",
            "--stats-json",
            json.to_str().unwrap(),
            "--",
            wl.to_str().unwrap(),
            "0.4",
        ],
        &file,
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let ring_bytes = summary["ring_bytes"].as_u64().unwrap();
    assert!(
        ring_bytes > 16 * 8192,
        "the ring wrapped many times ({ring_bytes} bytes through 8 KiB)"
    );
    let n = our_samples(&file);
    assert_eq!(
        n,
        summary["samples"].as_u64().unwrap(),
        "every sample pushed is read back"
    );
    assert_eq!(perf_sample_count(&perf(), &file), n);
}

/// (samples with a user stack, of which cut to their written bytes).
fn stack_shapes(path: &Path) -> (u64, u64) {
    let mut r = PerfReader::open(path).unwrap();
    let (mut with_stack, mut cut) = (0, 0);
    while let Some((rec, meta)) = r.next_record().unwrap() {
        if rec.header.type_ == RecordType::SAMPLE {
            let s = meta.parse_sample(&rec).unwrap().unwrap();
            if s.user_stack_size > 0 {
                with_stack += 1;
                assert!(s.user_stack_len <= s.user_stack_size);
                cut += (s.user_stack_size == s.user_stack_len.div_ceil(8).max(1) * 8) as u64;
            }
        }
    }
    (with_stack, cut)
}

#[test]
fn dwarf_samples_keep_only_the_stack_the_kernel_wrote() {
    require_recording();
    let perf = perf();
    let wl = workload();
    let dir = tempdir("rec-stack");
    for codec in ["zstd:1", "none", "lz4"] {
        for keep in [false, true] {
            let file = dir.join(format!("{}-{keep}.data", codec.replace(':', "")));
            let json = dir.join("s.json");
            let mut args = vec![
                "--codec",
                codec,
                "--call-graph",
                "dwarf,16384",
                "-F",
                "2999",
                "-q",
                "--stats-json",
                json.to_str().unwrap(),
            ];
            if keep {
                args.push("--keep-stack-padding");
            }
            args.extend(["--", wl.to_str().unwrap(), "0.4"]);
            record(&args, &file);
            let s: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
            let dropped = s["stack_bytes_cleared"].as_u64().unwrap();
            let (with_stack, cut) = stack_shapes(&file);
            let label = format!("{codec} keep={keep}");
            assert!(
                with_stack > 50,
                "{label}: {with_stack} samples with a stack"
            );
            if keep {
                assert_eq!(dropped, 0, "{label}");
                assert_eq!(cut, 0, "{label}: stacks were cut");
            } else {
                assert!(dropped > 0, "{label}");
                assert_eq!(cut, with_stack, "{label}: every stack cut to dyn_size");
            }
            let readable = if codec == "lz4" {
                let z = dir.join("lz4-as-zstd.data");
                recompress_zstd(&file, &z);
                z
            } else {
                file.clone()
            };
            // perf reads every sample and unwinds the workload's stacks.
            check_with_perf(&perf, &readable, &label);
            let script = run_perf(
                &perf,
                &["script", "-i", readable.to_str().unwrap(), "-F", "ip,sym"],
            );
            assert!(script.contains("main"), "{label}: stacks unwind to main");
        }
    }
}

fn fails(args: &[&str], needle: &str) {
    let out = perfz(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert_ne!(out.status.code(), Some(101), "{args:?} panicked: {err}");
    assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
}

#[test]
fn bad_usage_is_refused_without_leaving_files() {
    // Every case here fails before an event is opened: no recording rights
    // are needed.
    let dir = tempdir("rec-bad");
    let out = dir.join("x.data");
    let o = out.to_str().unwrap();
    fails(&["record", "-F", "0", "-o", o, "--", "true"], "at least 1");
    fails(
        &["record", "-e", "bogus", "-o", o, "--", "true"],
        "unknown event \"bogus\"",
    );
    fails(
        &["record", "-p", "999999999", "-o", o],
        "no process with pid 999999999",
    );
    fails(
        &["record", "-k", "sundial", "-o", o, "--", "true"],
        "perf's are monotonic (mono)",
    );
    fails(
        &["record", "-o", "/nonexistent-dir/x.data", "--", "true"],
        "cannot write /nonexistent-dir/x.data",
    );
    fails(
        &["record", "--codec", "gzip", "-o", o, "--", "true"],
        "unknown codec",
    );
    fails(&["record", "-o", o, "--", "/no/such/program"], "cannot");
    assert!(!out.exists(), "a failed record left {o} behind");
    let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(leftovers.is_empty(), "left behind: {leftovers:?}");
}

/// A directory holding a recording and its `.old`, and a check that a failed
/// start left both exactly as they were and nothing else behind.
fn with_existing_recordings(name: &str, args: &[&str], needle: &str) {
    let dir = tempdir(name);
    let file = dir.join("perf.data");
    std::fs::write(&file, b"the last recording").unwrap();
    std::fs::write(dir.join("perf.data.old"), b"the one before").unwrap();
    let mut a = vec!["record", "-o", file.to_str().unwrap()];
    a.extend_from_slice(args);
    fails(&a, needle);
    assert_eq!(std::fs::read(&file).unwrap(), b"the last recording");
    assert_eq!(
        std::fs::read(dir.join("perf.data.old")).unwrap(),
        b"the one before"
    );
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "left behind: {names:?}");
}

#[test]
fn a_command_that_is_not_there_touches_no_file() {
    with_existing_recordings(
        "rec-nocmd",
        &["--", "perfz-no-such-command"],
        "cannot run perfz-no-such-command: command not found",
    );
    with_existing_recordings("rec-nocpu", &["-C", "4095", "--", "true"], "not online");
}

#[test]
fn a_command_that_fails_to_exec_touches_no_file() {
    // Found and executable, so perfz opens the events and writes the start
    // of the new file; exec then fails (its interpreter does not exist).
    require_recording();
    let bad = tempdir("rec-noexec-bin").join("not-a-program");
    std::fs::write(&bad, "#!/nonexistent/interpreter\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&bad, std::fs::Permissions::from_mode(0o755)).unwrap();
    with_existing_recordings("rec-noexec", &["--", bad.to_str().unwrap()], "cannot run");
}

#[test]
fn an_existing_output_becomes_old() {
    require_recording();
    let dir = tempdir("rec-old");
    let file = dir.join("perf.data");
    std::fs::write(&file, b"previous").unwrap();
    record(&["-q", "--", "true"], &file);
    assert_eq!(
        std::fs::read(dir.join("perf.data.old")).unwrap(),
        b"previous"
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

#[test]
fn without_privileges_it_degrades_and_says_so() {
    require_recording();
    // Root without CAP_IPC_LOCK/SYS_ADMIN/PERFMON and a 64 KiB lock limit: the
    // kernel refuses kernel profiling (paranoid 2) and big rings.
    let setpriv = Path::new("/usr/bin/setpriv");
    assert!(
        setpriv.exists(),
        "this test needs setpriv: install util-linux (apt-get install -y util-linux)"
    );
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap();
    let dir = tempdir("rec-degrade");
    let file = dir.join("d.data");
    let cmd = format!(
        "ulimit -l 64; exec {} record -m 1024 -o {} -- {} 0.3",
        env!("CARGO_BIN_EXE_perfz"),
        file.display(),
        workload().display()
    );
    let out = Command::new(setpriv)
        .args([
            "--inh-caps=-ipc_lock,-sys_admin,-perfmon",
            "--bounding-set=-ipc_lock,-sys_admin,-perfmon",
            "bash",
            "-c",
            &cmd,
        ])
        .output_within();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("refused 1024 pages per ring; using"), "{err}");
    // Either way the outcome is checked: user space only (said) where the
    // kernel refuses kernel profiling, else kernel samples too.
    let user_only = err.contains("recording user space only");
    assert_eq!(
        user_only,
        paranoid.trim().parse::<i32>().unwrap_or(0) >= 2,
        "paranoid {paranoid}: {err}"
    );
    let attr = &perfz::format::PerfReader::open(&file).unwrap().attrs[0].attr;
    assert_eq!(
        attr.flags() & (1 << 5) != 0,
        user_only,
        "exclude_kernel matches what was said"
    );
    assert!(our_samples(&file) > 50);
}

/// A round covers every ring. A command that execs on one CPU and then runs
/// on another leaves its COMM and MMAPs, a few hundred bytes, in the first
/// CPU's ring; perf orders records by rounds (FINISHED_ROUND), so they must
/// be written in the round of their time, or perf script gives the
/// command's samples the old name and no stack ("out of order events").
#[test]
fn an_exec_on_a_quiet_cpu_is_written_in_its_round() {
    require_recording();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(
        cpus >= 2,
        "this test moves a command between CPUs: it needs 2, the machine has {cpus}"
    );
    let program = migrate_workload();
    let comm: String = program
        .file_name()
        .unwrap()
        .to_string_lossy()
        .chars()
        .take(15)
        .collect();
    let dir = tempdir("rounds");
    let out = dir.join("migrate.data");
    for cg in [&["-g"][..], &["--call-graph", "dwarf"][..]] {
        let mut args = cg.to_vec();
        args.extend(["--", "taskset", "-c", "0", program.to_str().unwrap(), "0.5"]);
        record(&args, &out);
        let o = Command::new(perf())
            .args(["script", "-F", "comm,ip,sym", "-i", out.to_str().unwrap()])
            .output_within();
        let (script, said) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert!(o.status.success(), "{cg:?}: perf script failed: {said}");
        assert!(!said.contains("out of order"), "{cg:?}: perf says {said}");
        // A sample's line, then its frames (each after a tab).
        let samples: Vec<&str> = script
            .lines()
            .filter(|l| !l.starts_with('\t') && !l.trim().is_empty())
            .collect();
        assert!(samples.len() > 50, "{cg:?}: {} samples", samples.len());
        let named = samples.iter().filter(|l| l.trim() == comm).count();
        assert!(
            named * 10 >= samples.len() * 9,
            "{cg:?}: {named} of {} samples named {comm} by perf script",
            samples.len()
        );
        assert!(
            script.contains("spin"),
            "{cg:?}: perf script names no frame spin"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The pipe every perf reads, after its `inject` too (issue 49): perf 6.x
/// ended a pipe's features with id 32 and perf 7.x ends them with 33 (its
/// 32 is HEADER_CPU_DOMAIN_INFO: "Invalid HEADER_CPU_DOMAIN_INFO: section
/// too small"), so perfz writes no marker. Each perf reads the pipe, injects
/// build ids into a file and reads that, every sample there.
#[test]
fn a_pipe_is_read_by_every_perf_directly_and_after_its_inject() {
    require_recording();
    let dir = tempdir("rec-pipe-inject");
    let out = perfz_ok(&[
        "record",
        "-q",
        "-c",
        "100000",
        "-o",
        "-",
        "--",
        "dd",
        "if=/dev/zero",
        "of=/dev/null",
        "bs=4k",
        "count=100000",
    ]);
    let pipe = dir.join("pipe.data");
    std::fs::write(&pipe, &out.stdout).unwrap();
    let want = our_samples(&pipe);
    assert!(want > 0, "no samples recorded");
    let perfs = [
        ("6.1", perf(), "-b"),
        ("6.12", perf_new(), "-B"),
        ("7.3", perf_7(), "-B"),
    ];
    for (v, perf, build_ids) in &perfs {
        let count = |file: &Path| {
            let o = Command::new(perf)
                .args(["script", "-F", "ip", "-i", file.to_str().unwrap()])
                .output_within();
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(o.status.success(), "perf {v} script: {err}");
            String::from_utf8_lossy(&o.stdout).lines().count() as u64
        };
        assert_eq!(count(&pipe), want, "perf {v} script of the pipe");
        let injected = dir.join(format!("inject-{v}.data"));
        // perf's inject reads a pipe's format from its standard input only.
        let o = Command::new("sh")
            .args(["-c", r#"f=$1; shift; exec "$@" < "$f""#, "sh"])
            .arg(&pipe)
            .arg(perf)
            .args([
                "inject",
                build_ids,
                "-i",
                "-",
                "-o",
                injected.to_str().unwrap(),
            ])
            .output_within();
        assert!(
            o.status.success(),
            "perf {v} inject: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let report = Command::new(perf)
            .args(["report", "--stdio", "-i", injected.to_str().unwrap()])
            .output_within();
        let err = String::from_utf8_lossy(&report.stderr);
        assert!(
            report.status.success(),
            "perf {v} report after its inject: {err}"
        );
        assert!(
            !err.contains("failed"),
            "perf {v} report after its inject: {err}"
        );
        assert_eq!(
            perf_sample_count(perf, &injected),
            want,
            "perf {v}: samples after inject"
        );
    }
}

/// The summary's lines in perf's words: with -z, the compression on the
/// "Captured and wrote" line as perf -z says it; with perfz's default
/// compression, perf's lines as perf writes them without -z (perf's own
/// tests match them) after a first line that says the default and how to
/// record plain (for a tool that reads no compressed records); no samples
/// counted into a pipe's line.
#[test]
fn the_summary_says_what_perf_says_of_compression_and_pipes() {
    require_recording();
    let dir = tempdir("rec-summary");
    let file = dir.join("z.data");
    let line = |stderr: &[u8]| {
        String::from_utf8_lossy(stderr)
            .lines()
            .find(|l| l.starts_with("[ perf record: Captured and wrote"))
            .unwrap_or_default()
            .to_string()
    };
    let dd = [
        "--",
        "dd",
        "if=/dev/zero",
        "of=/dev/null",
        "bs=4k",
        "count=20000",
    ];
    let z = perfz_ok(&[&["record", "-z", "-o", file.to_str().unwrap()][..], &dd].concat());
    let z = line(&z.stderr);
    let shape = |l: &str| {
        // The figures differ from run to run; the words do not.
        l.split_whitespace()
            .map(
                |w| match w.trim_matches(|c| "(),".contains(c)).parse::<f64>() {
                    Ok(_) => "N",
                    Err(_) => w,
                },
            )
            .collect::<Vec<_>>()
            .join(" ")
    };
    let want = format!(
        "[ perf record: Captured and wrote N MB {} N samples), compressed (original N MB, ratio is N ]",
        file.display()
    );
    assert_eq!(shape(&z), want, "{z}");
    let plain = perfz_ok(&[&["record", "-o", file.to_str().unwrap()][..], &dd].concat());
    let err = String::from_utf8_lossy(&plain.stderr);
    let first = err.lines().find(|l| l.starts_with('[')).unwrap_or_default();
    assert!(
        first.starts_with("[ perfz record: compressed with zstd:3 by default")
            && first.contains("--no-compression-level"),
        "{err}"
    );
    let want = format!(
        "[ perf record: Captured and wrote N MB {} N samples) ]",
        file.display()
    );
    assert_eq!(shape(&line(&plain.stderr)), want, "{err}");
    let pipe = perfz_ok(&[&["record", "-o", "-"][..], &dd].concat());
    let pipe = line(&pipe.stderr);
    assert_eq!(
        shape(&pipe),
        "[ perf record: Captured and wrote N MB - ]",
        "{pipe}"
    );
}

/// Targets given together resolve as perf's target__validate resolves
/// them, with its warning: -p over -a, -p over -u.
#[test]
fn more_than_one_target_resolves_as_perfs_with_its_warning() {
    require_recording();
    let dir = tempdir("rec-targets");
    let o = dir.join("t.data");
    let o = o.to_str().unwrap();
    let me = std::process::id().to_string();
    // `-a -u` is no longer two targets (perf 6.16+: -u is system-wide with
    // a filter; tests/it/newest_perf.rs).
    for (args, warning) in [
        (
            vec!["-a", "-p", me.as_str()],
            "PID/TID switch overriding SYSTEM",
        ),
        (
            vec!["-u", "0", "-p", me.as_str()],
            "PID/TID switch overriding UID",
        ),
    ] {
        let line = [&["record", "-o", o][..], &args, &["--", "true"]].concat();
        let out = perfz_ok(&line);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("Warning:\n{warning}\n")),
            "{args:?}: {err}"
        );
        // Not system-wide: the events follow tasks and their children
        // (inherit), and sample no CPU (as -a's do).
        let evlist = run_perf(&perf(), &["evlist", "-v", "-i", o]);
        assert!(evlist.contains("inherit: 1"), "{args:?}: {evlist}");
        assert!(!evlist.contains("|CPU|"), "{args:?}: {evlist}");
    }
}

/// A task listed for `-p` or `-u` that exits before its events open (the
/// race behind a flaky `-a -u 0` on a busy machine: one of root's
/// processes ended in between) is left out, as perf leaves out a missing
/// thread; a list whose every task is gone fails as before.
#[test]
fn a_listed_task_gone_before_its_events_open_is_left_out() {
    use perfz::event::events::EventSpec;
    use perfz::event::open::{EventSet, Tracking};
    require_recording();
    let mut child = Command::new("true").spawn_owned().unwrap();
    let gone = child.id() as i32;
    assert!(child.wait().unwrap().success());
    assert!(!Path::new(&format!("/proc/{gone}")).exists());
    let me = std::process::id() as i32;
    let ev = [EventSpec::parse("cpu-clock").unwrap()];
    let o = plain_attr_options();
    let open = |pids: &[i32]| EventSet::open(&ev, &o, &[0], pids, 2, false, Tracking::First);
    let set = open(&[me, gone]).expect("the live task's events open");
    assert_eq!(set.fds.len(), 1, "one fd, for the live task");
    let e = open(&[gone]).err().expect("nothing to record");
    assert!(e.to_string().contains("No such process"), "{e}");
}
