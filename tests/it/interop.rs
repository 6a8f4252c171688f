//! Our conversions read by the real perf 6.1 and 6.12 (and by
//! linux-perf-data): the samples each perf sees in our output equal those
//! it sees in its own file.

use crate::common;

use common::*;

use common::perf_script_samples as script;

#[test]
fn decompressed_and_recompressed_fixtures_read_the_same_in_perf() {
    for (which, perf) in perfs() {
        fixtures_read_the_same(which, &perf);
    }
}

fn fixtures_read_the_same(which: &str, perf: &std::path::Path) {
    let dir = tempdir(&format!("interop-{}", which.replace(' ', "")));
    for name in FIXTURES {
        let input = fixture(name);
        let want = script(perf, &input);
        assert!(!want.is_empty(), "{which} {name}");
        for (label, args) in [
            ("plain", vec!["decompress"]),
            ("zstd3", vec!["recompress", "--codec", "zstd:3"]),
            ("zstd-5", vec!["recompress", "--codec", "zstd:-5"]),
        ] {
            let out = dir.join(format!("{name}.{label}.data"));
            let mut a = args.clone();
            a.extend([input.to_str().unwrap(), "-o", out.to_str().unwrap()]);
            perfz_ok(&a);
            assert_eq!(
                script(perf, &out),
                want,
                "{which} {name} {label}: perf script differs"
            );
            // perf report --stats reads every record of it (compressed pipe input
            // trips a perf 6.1 --stats quirk, see the fixtures README).
            if !(name.starts_with("zpipe") || (name.contains("pipe") && label != "plain")) {
                let stats = run_perf(perf, &["report", "--stats", "-i", out.to_str().unwrap()]);
                assert!(
                    stats.contains("SAMPLE events:"),
                    "{which} {name} {label}: {stats}"
                );
            }
            // And perf report itself (the profile) opens it.
            run_perf(perf, &["report", "--stdio", "-i", out.to_str().unwrap()]);
        }
    }
}

#[test]
fn lz4_and_snappy_round_trips_are_byte_identical() {
    let dir = tempdir("lossless");
    for name in FIXTURES {
        let input = fixture(name);
        let plain = dir.join(format!("{name}.plain.data"));
        perfz_ok(&[
            "decompress",
            input.to_str().unwrap(),
            "-o",
            plain.to_str().unwrap(),
        ]);
        for codec in ["lz4", "snappy", "zstd:19,long"] {
            let packed = dir.join(format!("{name}.{codec}.data"));
            let back = dir.join(format!("{name}.{codec}.plain.data"));
            perfz_ok(&[
                "recompress",
                "--codec",
                codec,
                input.to_str().unwrap(),
                "-o",
                packed.to_str().unwrap(),
            ]);
            perfz_ok(&[
                "decompress",
                packed.to_str().unwrap(),
                "-o",
                back.to_str().unwrap(),
            ]);
            assert!(
                std::fs::read(&plain).unwrap() == std::fs::read(&back).unwrap(),
                "{name} via {codec}: not byte-identical after decompress"
            );
            assert_eq!(samples(&packed), samples(&input), "{name} via {codec}");
        }
    }
}

#[test]
fn linux_perf_data_reads_our_output() {
    let dir = tempdir("oracle");
    for name in [
        "z1-cmd",
        "z3-wrap-cmd",
        "zthreads-cmd",
        "z-2events-cmd",
        "plain-sysw",
    ] {
        let input = fixture(name);
        let n = samples(&input).len();
        for (label, args) in [
            ("plain", vec!["decompress"]),
            ("zstd3", vec!["recompress", "--codec", "zstd:3"]),
        ] {
            let out = dir.join(format!("{name}.{label}.data"));
            let mut a = args.clone();
            a.extend([input.to_str().unwrap(), "-o", out.to_str().unwrap()]);
            perfz_ok(&a);
            assert_eq!(oracle_samples(&out), n, "{name} {label}");
        }
    }
}

#[test]
fn pipe_output_to_stdout_is_read_by_perf() {
    let dir = tempdir("stdout");
    let input = fixture("z1-cmd");
    let out = perfz_ok(&[
        "recompress",
        "--codec",
        "zstd:3",
        input.to_str().unwrap(),
        "-o",
        "-",
    ]);
    let file = dir.join("z1.pipe.data");
    std::fs::write(&file, &out.stdout).unwrap();
    assert_eq!(&out.stdout[..8], b"PERFILE2");
    assert_eq!(
        u64::from_le_bytes(out.stdout[8..16].try_into().unwrap()),
        16,
        "pipe header"
    );
    for (which, perf) in perfs() {
        assert_eq!(script(&perf, &file), script(&perf, &input), "{which}");
    }
}

/// Whether `pid` has started a child named `comm` (it is recording).
fn has_child(pid: u32, comm: &str) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|t| {
        let kids = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
        kids.split_whitespace().any(|c| {
            std::fs::read_to_string(format!("/proc/{c}/comm")).is_ok_and(|n| n.trim() == comm)
        })
    })
}

#[test]
fn a_system_wide_recording_leaves_a_perf_record_beside_it_whole() {
    // The kernel leaks the MMAP2 build-id flag of CPU-wide events into
    // other recorders' MMAP2 records; perf 6.1 then aborted on them.
    require_recording();
    let dir = tempdir("beside-a");
    let mut wide = std::process::Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args(["record", "-q", "-a", "-e", "dummy", "-o"])
        .arg(dir.join("wide.data"))
        // Until the test closes its input, after the three perf runs (a
        // `sleep 3` could end before them on a busy machine).
        .args(["--", "sh", "-c", "read x || true"])
        .stdin(std::process::Stdio::piped())
        .spawn_owned()
        .expect("perfz starts");
    while !has_child(wide.id(), "sh") {
        assert!(
            wide.try_wait().unwrap().is_none(),
            "perfz record -a ended early"
        );
        std::thread::yield_now();
    }
    for i in 0..3 {
        let out = dir.join(format!("perf{i}.data"));
        let o = std::process::Command::new(perf())
            .args(["record", "-N", "-q", "-e", "cpu-clock", "-o"])
            .arg(&out)
            .arg("--")
            .arg(workload())
            .arg("0.2")
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "perf record beside perfz record -a: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    drop(wide.stdin.take());
    assert!(wide.wait_within("perfz record -a").success());
}
