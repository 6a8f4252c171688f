//! Hostile surroundings (issue 19): symlinks planted where perfz writes,
//! directories that are not recordings where it rotates. Whatever is
//! planted, no file it points to changes, and nothing already there is lost.

mod common;

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use perfz::synth::build_id;

/// Victim files with known contents.
fn victims(dir: &Path, n: usize) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let p = dir.join(format!("victim{i}"));
            std::fs::write(&p, format!("precious {i}\n")).unwrap();
            p
        })
        .collect()
}

fn unchanged(v: &[PathBuf]) {
    for (i, p) in v.iter().enumerate() {
        assert_eq!(
            std::fs::read_to_string(p).unwrap(),
            format!("precious {i}\n"),
            "{} was written through a symlink",
            p.display()
        );
    }
}

/// The pids the next processes will likely get (for the names an older
/// perfz built from its pid).
fn next_pids() -> std::ops::Range<u32> {
    let last: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1);
    last..last + 400
}

#[test]
fn symlinks_planted_in_the_build_id_cache_write_through_to_nothing() {
    require_recording();
    let dir = tempdir("hostile-cache");
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let v = victims(&dir, 4);
    // The workload as a binary of its own, so its cache entry is ours.
    let wl = dir.join("wl");
    std::fs::copy(workload(), &wl).unwrap();
    let id = build_id::hex(&build_id::of_file(&wl).expect("the workload has a build id"));
    let cache = home.join(".debug");
    let entry = cache.join(wl.strip_prefix("/").unwrap()).join(&id);
    std::fs::create_dir_all(&entry).unwrap();
    // The entry's binary planted; its probes (and the kernel's kallsyms)
    // left for perfz to create, beside planted temporary names.
    let planted = vec![(entry.join("elf"), &v[0])];
    let kentry = build_id::of_kernel().map(|k| {
        let e = cache.join("[kernel.kallsyms]").join(build_id::hex(&k));
        std::fs::create_dir_all(&e).unwrap();
        e
    });
    // Temporary names an older perfz made from its pid.
    let mut tmps = Vec::new();
    for pid in next_pids() {
        for e in [Some(&entry), kentry.as_ref()].into_iter().flatten() {
            for (f, victim) in [("elf", &v[1]), ("probes", &v[2]), ("kallsyms", &v[3])] {
                tmps.push((e.join(format!("{f}.perfz-{pid}.tmp")), victim));
            }
        }
    }
    for (at, to) in planted.iter().chain(&tmps) {
        symlink(to, at).unwrap();
    }
    let out = dir.join("c.data");
    let o = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .env("HOME", &home)
        .env_remove("PERF_BUILDID_DIR")
        .args(["record", "-a", "-g", "-o", out.to_str().unwrap(), "--"])
        .arg(&wl)
        .arg("0.3")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    unchanged(&v);
    // What was planted stays a symlink; what perfz made is a file of its own.
    for (at, _) in &planted {
        assert!(std::fs::symlink_metadata(at)
            .unwrap()
            .file_type()
            .is_symlink());
    }
    let made = [
        Some(entry.join("probes")),
        kentry.map(|e| e.join("kallsyms")),
    ];
    for m in made.iter().flatten() {
        let meta = std::fs::symlink_metadata(m)
            .unwrap_or_else(|e| panic!("{} was not made: {e}", m.display()));
        assert!(
            meta.file_type().is_file(),
            "{} is not a plain file",
            m.display()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_old_directory_that_is_not_a_recording_is_kept_and_the_run_refused() {
    let dir = tempdir("hostile-old");
    // A file output whose .old is somebody's directory.
    let out = dir.join("perf.data");
    std::fs::write(&out, "mine").unwrap();
    let old = dir.join("perf.data.old");
    std::fs::create_dir_all(old.join("sub")).unwrap();
    std::fs::write(old.join("sub/precious.txt"), "keep").unwrap();
    let o = perfz(&["record", "-o", out.to_str().unwrap(), "--", "true"]);
    assert_eq!(o.status.code(), Some(1), "refused");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("not a perf recording"), "{err}");
    assert_eq!(
        std::fs::read_to_string(old.join("sub/precious.txt")).unwrap(),
        "keep"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "mine");
    // A --threads directory whose .old holds somebody's files.
    let tdir = dir.join("t.data");
    std::fs::create_dir_all(&tdir).unwrap();
    std::fs::write(tdir.join("data"), "").unwrap();
    let told = dir.join("t.data.old");
    std::fs::create_dir_all(told.join("keep")).unwrap();
    std::fs::write(told.join("keep/file"), "keep").unwrap();
    let o = perfz(&[
        "record",
        "--threads",
        "-o",
        tdir.to_str().unwrap(),
        "--",
        "true",
    ]);
    assert_eq!(o.status.code(), Some(1), "refused");
    assert_eq!(
        std::fs::read_to_string(told.join("keep/file")).unwrap(),
        "keep"
    );
    assert!(tdir.join("data").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--control fifo:X,X` (the acks come back as commands), 300 unknown
/// commands and a 20 MB line without a newline: perfz stays small, says
/// little, and still obeys `stop`.
#[test]
fn a_hostile_control_fifo_is_bounded() {
    require_recording();
    let dir = tempdir("hostile-ctl");
    let x = dir.join("x");
    mkfifo(&x);
    let out = dir.join("c.data");
    let err = dir.join("stderr");
    let mut child = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args(["record", "-o", out.to_str().unwrap()])
        .arg(format!("--control=fifo:{},{}", x.display(), x.display()))
        .arg("--")
        .arg(workload())
        .arg("60")
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    // perfz holds the fifo open read-write: this open does not wait.
    let mut w = std::fs::OpenOptions::new().write(true).open(&x).unwrap();
    use std::io::Write;
    w.write_all(b"ping\nping\n").unwrap();
    for i in 0..300 {
        w.write_all(format!("bogus{i}\n").as_bytes()).unwrap();
    }
    let chunk = vec![b'a'; 1 << 20];
    for _ in 0..20 {
        w.write_all(&chunk).unwrap();
    }
    w.write_all(b"\nstop\n").unwrap();
    let mut status = 0;
    // SAFETY: rusage is plain data, filled by wait4 for our own child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our child; status and ru are ours.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(r, pid);
    // Reaped above: this only marks the handle as done.
    let _ = child.try_wait();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "status {status}"
    );
    let said = std::fs::read_to_string(&err).unwrap();
    assert!(said.len() < 1 << 20, "{} bytes of stderr", said.len());
    assert!(said.contains("longer than 256 bytes"), "{said}");
    assert!(
        said.contains("further unknown commands are not reported"),
        "{said}"
    );
    assert!(ru.ru_maxrss < 60 * 1024, "peak RSS {} KiB", ru.ru_maxrss);
    assert!(our_sample_count(&out) > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sizes the machine cannot hold and options perf refuses together: exit
/// 1 with what to do, and nothing written.
#[test]
fn impossible_sizes_and_conflicts_are_refused() {
    let dir = tempdir("hostile-sizes");
    let out = dir.join("s.data");
    let o = out.to_str().unwrap();
    for (args, says) in [
        (
            vec!["--flight-recorder", "1000G"],
            "available: choose a smaller size",
        ),
        (
            vec!["--flight-recorder", "200G"],
            "available: choose a smaller size",
        ),
        (vec!["--threads", "--per-thread"], "mutually exclusive"),
        (vec!["--threads=0/0:4095/4095", "-a"], "is not online"),
    ] {
        let mut a = vec!["record", "-o", o];
        a.extend(args.iter().copied());
        a.extend(["--", "true"]);
        let r = perfz(&a);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
