//! Fewer lost samples by design (issue 22): rings sized for dwarf streams
//! unless `-m` says, and the stack use the loss advice rests on, checked
//! against an independent reader.

use crate::common;

use std::path::Path;

use common::*;

/// The largest dyn_size of any sample, read by linux-perf-data (not
/// perfz's reader), and how many samples had a stack.
fn oracle_stack_use(path: &Path) -> (u64, u64) {
    use linux_perf_data::linux_perf_event_reader::EventRecord;
    use linux_perf_data::{PerfFileReader, PerfFileRecord};
    let f = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let PerfFileReader {
        mut perf_file,
        mut record_iter,
    } = PerfFileReader::parse_file(f).unwrap();
    let (mut max, mut n) = (0, 0);
    while let Some(rec) = record_iter.next_record(&mut perf_file).unwrap() {
        if let PerfFileRecord::EventRecord { record, .. } = rec {
            if let Ok(EventRecord::Sample(s)) = record.parse() {
                if let Some((_, dyn_size)) = s.user_stack {
                    max = max.max(dyn_size);
                    n += 1;
                }
            }
        }
    }
    (max, n)
}

fn summary_of(args: &[&str], dir: &Path, name: &str) -> serde_json::Value {
    let json = dir.join(format!("{name}.json"));
    let out = dir.join(format!("{name}.data"));
    let wl = workload();
    let mut a = vec![
        "record",
        "-q",
        "--stats-json",
        json.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    a.extend_from_slice(args);
    a.extend(["--", wl.to_str().unwrap(), "0.2"]);
    perfz_ok(&a);
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

/// `--call-graph dwarf` at 20 kHz: rings hold 32 ms of 8 KiB stacks (plus
/// 512 bytes each), a power of two: 20 000 x 8 704 B x 0.032 s = 5.6 MB ->
/// 8 MiB; the summary says so. `-m` overrides, and frame-pointer
/// recordings keep perf's default.
#[test]
fn dwarf_rings_are_sized_for_the_stream_unless_m_says() {
    require_recording();
    let dir = tempdir("advice-rings");
    let page = 4096; // this machine's and CI's page size
    assert_eq!(perfz::event::ring::page_size(), page);
    let sized = summary_of(&["-F", "20000", "--call-graph", "dwarf"], &dir, "sized");
    assert_eq!(
        sized["pages"].as_u64(),
        Some((8 << 20) / page as u64),
        "{sized}"
    );
    assert!(
        sized["notes"]
            .to_string()
            .contains("rings sized for dwarf stacks"),
        "{}",
        sized["notes"]
    );
    let m = summary_of(
        &["-F", "20000", "--call-graph", "dwarf", "-m", "64"],
        &dir,
        "m",
    );
    assert_eq!(m["pages"].as_u64(), Some(64));
    assert!(!m["notes"].to_string().contains("rings sized"));
    let fp = summary_of(&["-F", "20000", "-g"], &dir, "fp");
    assert_eq!(
        fp["pages"].as_u64(),
        Some(perfz::event::ring::default_pages() as u64)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// What the advice rests on: the record summary and `perfz stat` give the
/// deepest stack any sample used as linux-perf-data reads it from the file.
#[test]
fn stack_use_is_what_the_samples_hold() {
    require_recording();
    let dir = tempdir("advice-stack");
    let s = summary_of(&["-F", "5000", "--call-graph", "dwarf,16384"], &dir, "d");
    let data = dir.join("d.data");
    let (max, n) = oracle_stack_use(&data);
    assert!(n > 100 && max > 0, "{n} samples with stacks, max {max}");
    let u = &s["stack_use"];
    assert_eq!(u["samples"].as_u64(), Some(n), "{u}");
    // The cut keeps whole words: dyn_size rounded up to 8.
    assert_eq!(u["max"].as_u64(), Some(max.div_ceil(8) * 8), "{u}");
    assert_eq!(u["dump"].as_u64(), Some(16384));
    let stat = perfz_ok(&["stat", data.to_str().unwrap()]);
    let text = String::from_utf8(stat.stdout).unwrap();
    assert!(
        text.contains(&format!(
            "user stacks : {n} samples used at most {} of 16384 bytes",
            max.div_ceil(8) * 8
        )),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-r PRIO` (perf's --realtime): as root the drain takes SCHED_FIFO and the
/// workload keeps the normal policy; without CAP_SYS_NICE and with `ulimit
/// -r 0` the recording is refused with the fix, exit 1.
#[test]
fn realtime_drains_or_says_how() {
    require_recording();
    let dir = tempdir("advice-rt");
    let file = dir.join("rt.data");
    let o = perfz(&[
        "record",
        "-q",
        "-r",
        "5",
        "-o",
        file.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "chrt -p $$",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("SCHED_OTHER"), "the workload's policy: {out}");
    let setpriv = Path::new("/usr/bin/setpriv");
    assert!(
        setpriv.exists(),
        "this test needs setpriv: install util-linux (apt-get install -y util-linux)"
    );
    let cmd = format!(
        "ulimit -r 0; exec {} record -q -r 5 -o {} -- true",
        env!("CARGO_BIN_EXE_perfz"),
        file.display()
    );
    let o = std::process::Command::new(setpriv)
        .args([
            "--inh-caps=-sys_nice",
            "--bounding-set=-sys_nice",
            "bash",
            "-c",
            &cmd,
        ])
        .output_within();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(255), "{err}");
    assert!(err.contains("CAP_SYS_NICE"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// What kept the drain away, as the recorder measured it (issue 22): with
/// the workload on the drain's only CPU, a normal-policy drain woken at half
/// a ring waits until the workload's slice ends, its tiny ring overflows,
/// and the advice says the drain waited for its CPU and names `-r`. With
/// `-r` the same drain takes the CPU when woken, so fewer of its losses (if
/// any) come after such a wait.
#[test]
fn the_advice_says_when_the_drain_waited_for_its_cpu() {
    require_recording();
    let dir = tempdir("advice-cpu-wait");
    let wl = workload();
    let run = |extra: &[&str], name: &str| -> serde_json::Value {
        let json = dir.join(format!("{name}.json"));
        let out = dir.join(format!("{name}.data"));
        let mut args = vec![
            "-c",
            "0",
            env!("CARGO_BIN_EXE_perfz"),
            "record",
            "-q",
            "-F",
            "10000",
            "--call-graph",
            "dwarf,4096",
            "-m",
            "4",
            "--stats-json",
            json.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        args.extend(["--", wl.to_str().unwrap(), "1"]);
        let o = std::process::Command::new("taskset")
            .args(&args)
            .output_within();
        assert!(
            o.status.success(),
            "taskset {args:?} (util-linux) failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
    };
    let after_wait =
        |s: &serde_json::Value| s["advice"]["losses_after_a_wait"].as_u64().unwrap_or(0);

    let fair = run(&[], "fair");
    let a = &fair["advice"];
    assert!(fair["lost_events"].as_u64().unwrap() > 0, "{fair}");
    assert!(after_wait(&fair) >= 1, "{a}");
    let (wait, holds) = (
        a["drain_cpu_wait_ms"].as_f64().unwrap(),
        a["ring_holds_ms"].as_f64().unwrap(),
    );
    assert!(
        wait >= holds / 2.0,
        "waited {wait} ms, a ring holds {holds} ms"
    );
    assert!(
        a["text"]
            .as_str()
            .unwrap()
            .contains("-r PRIO lets the drain take its CPU"),
        "{a}"
    );

    // -r needs CAP_SYS_NICE: this test runs as root, as CI does.
    let rt = run(&["-r", "10"], "rt");
    assert!(
        after_wait(&rt) < after_wait(&fair),
        "with -r: {}, without: {}",
        rt["advice"],
        a
    );
    let _ = std::fs::remove_dir_all(&dir);
}
