//! perf 6.16's COMPRESSED2 records (type 83), in files made by rewriting
//! `-z` files' COMPRESSED records (common::compressed2): every perfz
//! command gives on them what it gives on type 81, and `perfz recover`
//! repairs the u16 size wrap of perf 6.16's first writer so that perf
//! before 6.16 reads every sample.

use std::path::Path;

use crate::common;

use common::*;

/// perfz stat's lines, sorted, without what differs by record type and
/// size (the file's size, the measured ratio, the type's name and place).
fn stat_text(file: &Path) -> Vec<String> {
    let o = perfz_ok(&["stat", file.to_str().unwrap()]);
    let mut v: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| !l.starts_with("file ") && !l.starts_with("compressed "))
        .map(|l| l.replace("COMPRESSED2 events", " COMPRESSED events"))
        .collect();
    v.sort();
    v
}

fn convert(cmd: &str, input: &Path, out: &Path) -> Vec<u8> {
    let mut a = vec![cmd];
    if cmd == "recompress" {
        a.extend(["--codec", "zstd:3"]);
    }
    a.extend([input.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    perfz_ok(&a);
    std::fs::read(out).unwrap()
}

#[test]
fn every_command_reads_type_83_as_type_81() {
    let dir = tempdir("compressed2");
    for name in ["z1-cmd", "z3-wrap-cmd", "z-2events-cmd", "z-sysw-switch"] {
        let z = fixture(name);
        let z2 = dir.join(format!("{name}.83.data"));
        let (n, _) = compressed2::rewrite(&z, &z2, false);
        assert!(n > 0, "{name}");
        assert_same_samples(
            &samples(&z2),
            &samples(&z),
            &format!("{name}: perfz's reader"),
        );
        assert_eq!(stat_text(&z2), stat_text(&z), "{name}: perfz stat");
        let stat = perfz_ok(&["stat", z2.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&stat.stdout);
        assert!(
            text.contains(&format!("COMPRESSED2 events: {n:>10}")),
            "{name}: {text}"
        );
        for cmd in ["decompress", "recompress"] {
            let a = convert(cmd, &z, &dir.join(format!("{name}.81.{cmd}")));
            let b = convert(cmd, &z2, &dir.join(format!("{name}.83.{cmd}")));
            assert!(a == b, "{name}: perfz {cmd} writes other bytes for 83");
        }
        let export = |f: &Path| perfz_ok(&["export", f.to_str().unwrap()]).stdout;
        assert_eq!(export(&z2), export(&z), "{name}: perfz export");
        // recover rewrites 83 as 81, which perf before 6.16 reads.
        perfz_ok(&["recover", z2.to_str().unwrap()]);
        for (which, perf) in perfs() {
            assert_same_samples(
                &perf_script_samples(&perf, &z2),
                &perf_script_samples(&perf, &z),
                &format!("{name}: {which} after recover"),
            );
        }
    }
}

#[test]
fn recover_repairs_the_u16_size_wrap_of_perf_6_16() {
    require_recording();
    let new = perf_new();
    let dir = tempdir("compressed2-wrap");
    // A -z recording of perf's with full COMPRESSED records: dwarf stacks.
    // Under a loaded CI the workload gets a share of a CPU: a recording
    // that gave no full record is made again, longer (up to 4 s).
    let z = dir.join("z.data");
    let wrapped = dir.join("wrapped.data");
    let mut did = false;
    for secs in ["1", "2", "4"] {
        let o = std::process::Command::new(&new)
            .env("PERF_BUILDID_DIR", dir.join("cache"))
            // Pushes of 2 MiB at least fill COMPRESSED records to their limit.
            .args([
                "record",
                "-q",
                "-z",
                "--mmap-flush=2M",
                "-m",
                "16M",
                "-F",
                "10000",
            ])
            .args(["--call-graph", "dwarf", "-o"])
            .arg(&z)
            .arg("--")
            .arg(workload())
            .arg(secs)
            .output_within();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        did = compressed2::rewrite(&z, &wrapped, true).1;
        if did {
            break;
        }
    }
    assert!(did, "the recording has a COMPRESSED record of 65515+ bytes");
    let want = perf_script_samples(&new, &z);
    assert!(want.len() > 100, "{} samples", want.len());
    // perfz reads the wrapped file as it is...
    assert_same_samples(&samples(&wrapped), &samples(&z), "perfz's reader");
    // ...and recover makes it one perf 6.12 reads whole.
    let o = perfz_ok(&["recover", wrapped.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("COMPRESSED2 records"), "{err}");
    assert_same_samples(&perf_script_samples(&new, &wrapped), &want, "perf 6.12");
    assert_eq!(perf_sample_count(&new, &wrapped), want.len() as u64);
}
