//! Per-event terms on tracepoints and probes (`sched:sched_switch/max-stack=3/`,
//! `probe_libc:inet_pton/call-graph=dwarf,max-stack=8/`), judged by perf
//! itself: perf 7.3 and perfz record the same command line and `perf
//! evlist -v` shows the same attrs; a uprobe's call chains read the same in
//! `perf script`; and perf's own shell test record+probe_libc_inet_pton.sh
//! reads perfz's recording as it reads perf's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;
use crate::perf_suite::{perf_tests, require_tool, sh_quote, tail};

/// Every event's `perf evlist -v` fields, without those that differ by
/// design: the attr size (perfz writes perf 6.1's 128 bytes), build ids in
/// MMAP2 and `exclude_guest` (as record_options.rs), and, where `wide`
/// (system-wide, where perf 7.3 tracks the side band on a `dummy:u` of its
/// own and perfz on the first event), the tracking flags and the ids.
fn attrs(file: &Path, wide: bool) -> Vec<BTreeMap<String, String>> {
    let text = run_perf(&perf_7(), &["evlist", "-v", "-i", file.to_str().unwrap()]);
    let tracking = [
        "mmap",
        "comm",
        "task",
        "mmap2",
        "comm_exec",
        "ksymbol",
        "bpf_event",
        "mmap_data",
    ];
    let mut out: Vec<BTreeMap<String, String>> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let (_, fields) = line.split_once(": ").unwrap_or_default();
            fields
                .split(", ")
                .filter_map(|f| f.split_once(": "))
                .filter(|(k, _)| !["size", "build_id", "exclude_guest"].contains(k))
                .filter(|(k, _)| !wide || !tracking.contains(k))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .collect();
    if wide {
        out.truncate(1);
        for a in &mut out {
            let bits = sample_bits(a)
                .into_iter()
                .filter(|b| b != "ID" && b != "IDENTIFIER");
            a.insert("sample_type".into(), bits.collect::<Vec<_>>().join("|"));
        }
    }
    out
}

/// sample_type's bit names.
fn sample_bits(a: &BTreeMap<String, String>) -> BTreeSet<String> {
    a.get("sample_type")
        .map(|s| s.split('|').map(String::from).collect())
        .unwrap_or_default()
}

/// Records `events` with `opts` with perf 7.3 and with perfz, running
/// `cmd`; their attrs.
fn record_both(
    dir: &Path,
    name: &str,
    events: &str,
    opts: &[&str],
    cmd: &[&str],
) -> [Vec<BTreeMap<String, String>>; 2] {
    let wide = opts.contains(&"-a");
    let theirs = dir.join(format!("{name}.perf"));
    let ours = dir.join(format!("{name}.perfz"));
    let args = |out: &Path| -> Vec<String> {
        let mut a: Vec<String> = vec!["record".into(), "-q".into(), "-e".into(), events.into()];
        a.extend(["-o".into(), out.display().to_string()]);
        a.extend(
            opts.iter()
                .chain(["--"].iter())
                .chain(cmd)
                .map(|s| s.to_string()),
        );
        a
    };
    let o = Command::new(perf_7()).args(args(&theirs)).output_within();
    assert!(
        o.status.success(),
        "perf 7.3 -e {events} {opts:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let a = args(&ours);
    perfz_ok(&a.iter().map(String::as_str).collect::<Vec<_>>());
    [attrs(&theirs, wide), attrs(&ours, wide)]
}

/// perf 7.3 no longer samples ADDR and DATA_SRC for `--call-graph dwarf`,
/// where perf 6.12 (and perfz, and perf's own attr tests) do; an event's
/// term resetting that call graph leaves them, as perf's reset does.
fn with_dwarf_addresses(
    mut theirs: Vec<BTreeMap<String, String>>,
) -> Vec<BTreeMap<String, String>> {
    for a in &mut theirs {
        let mut bits = sample_bits(a);
        bits.extend(["ADDR".to_string(), "DATA_SRC".to_string()]);
        a.insert(
            "sample_type".into(),
            bits.into_iter().collect::<Vec<_>>().join("|"),
        );
    }
    theirs
}

/// sample_type's bits in one order on both sides (with_dwarf_addresses
/// writes them sorted).
fn same_sample_bits(mut v: Vec<BTreeMap<String, String>>) -> Vec<BTreeMap<String, String>> {
    for a in &mut v {
        let bits = sample_bits(a);
        a.insert(
            "sample_type".into(),
            bits.into_iter().collect::<Vec<_>>().join("|"),
        );
    }
    v
}

#[test]
fn tracepoint_terms_set_the_attr_perf_7_sets() {
    require_recording();
    let dir = tempdir("event-terms");
    let tp = "sched:sched_switch";
    let cases: &[(&str, &[&str])] = &[
        ("/max-stack=3/", &[]),
        ("/call-graph=fp/", &[]),
        ("/max-stack=3,call-graph=fp/", &[]),
        ("/call-graph=dwarf,max-stack=8/", &[]),
        ("/call-graph=dwarf,stack-size=4096/", &[]),
        ("/stack-size=9/", &[]),
        ("/no-inherit/", &[]),
        ("/inherit/", &["--no-inherit"]),
        ("/nr=3,no-overwrite/", &[]),
        ("/max-stack=4/", &["-g"]),
        ("/stack-size=4096/", &["-g"]),
        ("/call-graph=no/", &["-g"]),
        ("/call-graph=dwarf/", &["-g", "--user-callchains"]),
        ("/call-graph=fp/", &["--kernel-callchains"]),
        ("/max-stack=3/", &["-c", "5"]),
        ("/call-graph=fp/", &["--call-graph", "dwarf"]),
        ("/max-stack=3,call-graph=fp/", &["-a"]),
        ("/call-graph=dwarf,max-stack=8/", &["-a"]),
        ("/inherit/", &["-a"]),
        // The same terms after other events.
        ("cpu-clock/period=1000/", &[]),
        ("cpu-clock/call-graph=dwarf/", &[]),
        ("cpu-clock/max-stack=5,no-inherit/", &[]),
    ];
    let mut wrong = Vec::new();
    for (i, (terms, opts)) in cases.iter().enumerate() {
        let event = if terms.starts_with('/') {
            format!("{tp}{terms}")
        } else {
            terms.to_string()
        };
        let cmd: &[&str] = if opts.contains(&"-a") {
            &["sleep", "0.1"]
        } else {
            &["true"]
        };
        let [mut theirs, ours] = record_both(&dir, &format!("t{i}"), &event, opts, cmd);
        if opts.contains(&"dwarf") {
            theirs = with_dwarf_addresses(theirs);
        }
        let (theirs, ours) = (same_sample_bits(theirs), same_sample_bits(ours));
        if theirs.is_empty() || theirs != ours {
            wrong.push(format!(
                "-e {event} {opts:?}:\n  perf 7.3 {theirs:?}\n  perfz    {ours:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "attrs that differ:\n{}", wrong.join("\n"));
}

#[test]
fn terms_perf_refuses_on_a_tracepoint_are_refused_with_what_it_takes() {
    require_recording();
    let dir = tempdir("event-terms-refused");
    let out = dir.join("x.data");
    for t in ["period=3", "name=x", "ratio-to-prev=2"] {
        let e = format!("sched:sched_switch/{t}/");
        let line = [
            "record",
            "-q",
            "-o",
            out.to_str().unwrap(),
            "-e",
            &e,
            "--",
            "true",
        ];
        let theirs = Command::new(perf_7()).args(line).output_within();
        assert!(!theirs.status.success(), "perf 7.3 takes {e}");
        let o = perfz(&line);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.contains("its terms: call-graph, stack-size"),
            "{e}: {err}"
        );
    }
}

#[test]
fn one_events_dwarf_term_beside_others_keeps_every_sample_readable() {
    // Its ADDR would put its samples' id elsewhere than the others': all
    // of them sample IDENTIFIER then, as perf's do, and perf 6.1 and 7.3
    // read every sample of both events.
    require_recording();
    let dir = tempdir("event-terms-mixed");
    let out = dir.join("m.data");
    let f = out.to_str().unwrap();
    let events = "cpu-clock,sched:sched_switch/call-graph=dwarf/";
    perfz_ok(&[
        "record", "-q", "-o", f, "-e", events, "-a", "--", "sleep", "0.2",
    ]);
    let all = attrs(&out, false);
    assert_eq!(all.len(), 2, "{all:?}");
    for a in &all {
        assert!(sample_bits(a).contains("IDENTIFIER"), "{a:?}");
    }
    let stat = String::from_utf8_lossy(&perfz_ok(&["stat", f]).stdout).into_owned();
    let ours = |name: &str| -> usize {
        let line = stat.lines().find(|l| l.contains(&format!(": {name} (")));
        let n = line.and_then(|l| l.rsplit(": ").next()?.split(' ').next()?.parse().ok());
        n.unwrap_or_else(|| panic!("perfz stat has no count of {name}:\n{stat}"))
    };
    for perf in [perf(), perf_7()] {
        let text = run_perf(&perf, &["script", "-i", f]);
        for name in ["cpu-clock", "sched:sched_switch"] {
            let theirs = text
                .lines()
                .filter(|l| l.contains(&format!(" {name}:")))
                .count();
            assert!(theirs > 0, "no {name} sample");
            assert_eq!(
                theirs,
                ours(name),
                "{} reads {name}'s samples",
                perf.display()
            );
        }
    }
}

/// libc as this process maps it (perf's shell test finds it the same way).
fn libc() -> PathBuf {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let line = maps
        .lines()
        .find(|l| l.contains("/libc.so") || l.contains("/libc-"))
        .expect("this test probes libc's inet_pton and finds no libc mapped");
    PathBuf::from(line[line.find('/').unwrap()..].trim())
}

/// A uprobe of this test's own on libc's inet_pton, deleted when dropped
/// (its own group, so that perf's shell tests' `probe_libc` beside it are
/// left alone).
struct Probe(
    &'static str,
    #[allow(dead_code)] std::sync::MutexGuard<'static, ()>,
);

impl Probe {
    fn add() -> Probe {
        let p = Probe("probe_perfz_terms:inet_pton", probes_lock());
        let _ = Command::new(perf())
            .args(["probe", "-q", "-d", p.0])
            .output_within();
        let o = Command::new(perf())
            .args(["probe", "-x", libc().to_str().unwrap(), "-a"])
            .arg(format!("{}=inet_pton", p.0))
            .output_within();
        assert!(
            o.status.success(),
            "perf probe could not add a uprobe on libc's inet_pton ({}): this test needs uprobes (CONFIG_UPROBE_EVENTS) and root",
            String::from_utf8_lossy(&o.stderr).trim()
        );
        p
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        let _ = Command::new(perf())
            .args(["probe", "-q", "-d", self.0])
            .output_within();
    }
}

/// Each sample's frames as `perf script` prints them, addresses left out.
fn chains(file: &Path) -> Vec<Vec<String>> {
    let text = run_perf(&perf_7(), &["script", "-i", file.to_str().unwrap()]);
    let mut out: Vec<Vec<String>> = Vec::new();
    for l in text.lines() {
        match l.strip_prefix(char::is_whitespace) {
            Some(frame) if !out.is_empty() && !frame.trim().is_empty() => {
                let frame = frame.trim();
                let at = frame.find(' ').map_or(frame, |i| &frame[i + 1..]);
                out.last_mut().unwrap().push(at.to_string());
            }
            _ if l.contains(": ") => out.push(Vec::new()),
            _ => {}
        }
    }
    out
}

#[test]
fn probes_take_terms_as_perf_7_does() {
    require_recording();
    require_tool("getent", "libc-bin");
    let dir = tempdir("event-terms-probe");
    let probe = Probe::add();
    let cmd = ["getent", "ahosts", "::1"];
    let mut wrong = Vec::new();
    for (i, terms) in [
        "max-stack=3",
        "call-graph=dwarf,max-stack=8",
        "call-graph=fp",
    ]
    .iter()
    .enumerate()
    {
        let event = format!("{}/{terms}/", probe.0);
        let [theirs, ours] = record_both(&dir, &format!("p{i}"), &event, &[], &cmd);
        let (theirs, ours) = (same_sample_bits(theirs), same_sample_bits(ours));
        if theirs.is_empty() || theirs != ours {
            wrong.push(format!(
                "-e {event}:\n  perf 7.3 {theirs:?}\n  perfz    {ours:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "attrs that differ:\n{}", wrong.join("\n"));
    // max-stack=3: at most 3 frames a sample, the same as perf's.
    let (theirs, ours) = (chains(&dir.join("p0.perf")), chains(&dir.join("p0.perfz")));
    assert!(
        !ours.is_empty() && ours.iter().all(|c| !c.is_empty() && c.len() <= 3),
        "{ours:?}"
    );
    assert_eq!(ours, theirs, "the probe's call chains, perfz then perf 7.3");
    drop(probe);
}

/// A `ping` for perf's shell test where none is installed: it resolves its
/// last argument as ping does (getaddrinfo, which calls inet_pton), built
/// as `bin/ping` so that perf script names it as the test expects.
fn fake_ping(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let src = dir.join("ping.c");
    std::fs::write(
        &src,
        "#include <netdb.h>\n#include <string.h>\n\
         int main(int argc, char **argv) {\n\
             struct addrinfo h, *r;\n\
             memset(&h, 0, sizeof h);\n\
             h.ai_family = AF_INET6;\n\
             if (getaddrinfo(argv[argc - 1], 0, &h, &r) == 0) freeaddrinfo(r);\n\
             return 0;\n}\n",
    )
    .unwrap();
    let o = Command::new("cc")
        .args(["-O1", "-fno-omit-frame-pointer", "-o"])
        .arg(bin.join("ping"))
        .arg(&src)
        .output_within();
    assert!(
        o.status.success(),
        "cc: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    bin
}

/// A `perf` that is perf, or (`perfz`) perfz for `perf record`, logging
/// each record call to `calls`.
fn shim(dir: &Path, perfz: bool, calls: &Path) -> PathBuf {
    let d = dir.join(if perfz { "shim-perfz" } else { "shim-perf" });
    std::fs::create_dir_all(&d).unwrap();
    let perf = sh_quote(&perf().display().to_string());
    let record = if perfz {
        format!(
            "if [ \"$1\" = record ]; then shift; echo \"record $*\" >>{}; exec {} record \"$@\"; fi\n",
            sh_quote(&calls.display().to_string()),
            sh_quote(env!("CARGO_BIN_EXE_perfz"))
        )
    } else {
        String::new()
    };
    let p = d.join("perf");
    std::fs::write(&p, format!("#!/bin/sh\n{record}exec {perf} \"$@\"\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

/// The lines the script read from `perf script` and checked, addresses,
/// pids, times and the probe's number (`inet_pton_1`) left out.
fn checked_lines(output: &str) -> Vec<String> {
    output
        .lines()
        .filter(|l| !l.starts_with("FAIL") && (l.contains('(') || l.contains("inet_pton")))
        .map(|l| {
            l.split_whitespace()
                .filter(|w| {
                    !w.chars()
                        .all(|c| c.is_ascii_hexdigit() || "[]:.()".contains(c))
                })
                .map(|w| match w.strip_prefix("probe_libc:inet_pton") {
                    // `perf probe -f` numbers it where another is there.
                    Some(_) => "probe_libc:inet_pton".to_string(),
                    None => w.split("+0x").next().unwrap_or(w).to_string(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[test]
fn perfs_probe_shell_test_reads_perfz_as_it_reads_perf() {
    // record+probe_libc_inet_pton.sh (perf 6.1): `perf record -e
    // probe_libc:inet_pton/max-stack=3/ ping -6 -c 1 ::1`, then the
    // call chain perf script prints, line by line, against what it expects.
    require_recording();
    require_tool("cc", "gcc");
    require_tool("timeout", "coreutils");
    let _probes = probes_lock();
    let script = perf_tests().join("shell/record+probe_libc_inet_pton.sh");
    let dir = tempdir("event-terms-shell");
    let ping = fake_ping(&dir);
    let calls = dir.join("perfz-calls");
    let run = |perfz: bool| {
        let path = format!(
            "{}:{}:{}",
            shim(&dir, perfz, &calls).display(),
            ping.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let o = Command::new("timeout")
            .args(["--kill-after=5", "60", "sh"])
            .arg(&script)
            .env("PATH", path)
            .current_dir(&dir)
            .output_within();
        (o.status.code(), all_output(&o))
    };
    let (base_rc, base) = run(false);
    let (rc, ours) = run(true);
    let recorded = std::fs::read_to_string(&calls).unwrap_or_default();
    assert!(
        recorded.contains("inet_pton") && recorded.contains("/max-stack="),
        "the script's perf record did not reach perfz: {recorded:?}"
    );
    let want = checked_lines(&base);
    assert!(
        !want.is_empty(),
        "perf's run checked no line (no sample?):\n{}",
        tail(&base, 12)
    );
    assert_eq!(
        (rc, checked_lines(&ours)),
        (base_rc, want),
        "perfz's recording read otherwise than perf's; perf:\n{}perfz:\n{}",
        tail(&base, 12),
        tail(&ours, 12)
    );
}
