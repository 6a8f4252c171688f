//! The kernel text cache (`$XDG_CACHE_HOME/perfz/kernel-text`, issue 41):
//! whatever is planted there, a recording neither blocks, nor reads more
//! than a line, nor trusts a range the running kernel does not confirm.
//! Each test points the cache at its own directory (`XDG_CACHE_HOME`).

use crate::common;

use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::*;
use perfz::format::{PerfReader, RecordType};

/// This boot's id, as the cache is keyed.
fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .unwrap()
        .trim()
        .to_string()
}

/// `(_text, end)` of the running kernel from all of /proc/kallsyms.
fn kallsyms_range() -> (u64, u64) {
    let ks = std::fs::read("/proc/kallsyms").unwrap();
    perfz::kernel_text_range(&ks).expect("kernel addresses (run as root)")
}

/// A cache home of its own with its `perfz` directory (mode 0700, as
/// perfz makes it); the cache file's path.
fn cache_home(dir: &Path) -> (PathBuf, PathBuf) {
    let home = dir.join("cache");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(home.join("perfz"))
        .unwrap();
    let file = home.join("perfz").join("kernel-text");
    (home, file)
}

/// How a bounded run of perfz ended.
struct Run {
    /// The exit code; none where the deadline killed it (a hang).
    code: Option<i32>,
    /// Peak resident memory, MiB (of perfz and of `timeout` above it).
    peak_mib: i64,
    stderr: String,
}

/// `perfz ARGS` with the cache home `home`, killed after 60 s (a test
/// that hangs fails), under 3 GiB of address space (so that an unbounded
/// read fails here instead of taking the machine's memory); its peak RSS
/// from wait4.
fn run_bounded(home: &Path, args: &[&str]) -> Run {
    let err = home.with_extension("stderr");
    let (status, ru) = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 3145728 && exec timeout -s KILL 60 \"$@\" 2>\"$ERR\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_perfz"))
        .args(args)
        .env("XDG_CACHE_HOME", home)
        .env("ERR", &err)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn_owned()
        .unwrap()
        .wait4()
        .unwrap_or_else(|e| panic!("wait4: {e}"));
    Run {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        peak_mib: ru.ru_maxrss / 1024,
        stderr: std::fs::read_to_string(&err).unwrap_or_default(),
    }
}

/// `(start, len)` of the recording's kernel map (`[kernel.kallsyms]_text`).
fn kernel_map(data: &Path) -> Option<(u64, u64)> {
    let mut r = PerfReader::open(data).unwrap();
    while let Some((rec, _)) = r.next_record().unwrap() {
        let b = rec.bytes;
        // perf 6's MMAP, or perf 7's MMAP2 with the kernel's build id.
        let name_at = match rec.header.type_ {
            RecordType::MMAP => 40,
            RecordType::MMAP2 => 72,
            _ => continue,
        };
        if b.len() > name_at && b[name_at..].starts_with(b"[kernel.kallsyms]") {
            let u = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
            return Some((u(16), u(24)));
        }
    }
    None
}

/// The cache holds this boot's range again, as a plain file of ours.
fn rewritten(file: &Path) {
    let m = std::fs::symlink_metadata(file).unwrap();
    assert!(
        m.file_type().is_file() && m.len() < 256,
        "{}: {m:?}",
        file.display()
    );
    let (start, end) = kallsyms_range();
    assert_eq!(
        std::fs::read_to_string(file).unwrap(),
        format!("{} {start:x} {end:x}\n", boot_id())
    );
}

/// Records nothing (`-e dummy -- true`) with `plant` at the cache's place:
/// it must end at once, small, with the kernel's map, and leave the cache
/// rewritten.
fn records_past(name: &str, plant: impl FnOnce(&Path)) {
    require_recording();
    let dir = tempdir(name);
    let (home, file) = cache_home(&dir);
    plant(&file);
    let out = dir.join("out.data");
    let o = out.to_str().unwrap();
    let run = run_bounded(
        &home,
        &["record", "-q", "-e", "dummy", "-o", o, "--", "true"],
    );
    // `timeout -s KILL` kills itself with perfz (no exit code).
    let hung = run.code.is_none() || run.code == Some(124);
    assert!(!hung, "{name}: perfz hung on the cache (killed at 60 s)");
    assert_eq!(run.code, Some(0), "{name}: {}", run.stderr);
    assert!(
        run.peak_mib < 256,
        "{name}: perfz grew to {} MiB reading a one-line cache",
        run.peak_mib
    );
    let (start, end) = kallsyms_range();
    assert_eq!(kernel_map(&out), Some((start, end - start)), "{name}");
    rewritten(&file);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_huge_cache_file_is_not_read() {
    records_past("ktext-huge", |file| {
        // 1 GiB, sparse: a read of it whole costs a GiB or more of memory.
        std::fs::File::create(file)
            .unwrap()
            .set_len(1 << 30)
            .unwrap();
    });
}

#[test]
fn a_cache_linked_to_dev_zero_is_not_read() {
    records_past("ktext-zero", |file| {
        std::os::unix::fs::symlink("/dev/zero", file).unwrap();
    });
}

#[test]
fn a_fifo_at_the_cache_does_not_block_the_recording() {
    records_past("ktext-fifo", mkfifo);
}

/// The kernel samples of `dd` (cpu-clock) with the cache home `home`.
fn record_kernel(home: &Path, out: &Path) {
    let o = out.to_str().unwrap();
    let args = [
        "record",
        "-q",
        "-e",
        "cpu-clock",
        "-F",
        "2000",
        "-o",
        o,
        "--",
    ];
    let dd = [
        "dd",
        "if=/dev/zero",
        "of=/dev/null",
        "bs=64k",
        "count=40000",
    ];
    let run = run_bounded(home, &[&args[..], &dd[..]].concat());
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

/// `(named, unknown)`: the kernel lines (`[k]`) of perf 6.1's report by
/// dso and symbol, those in `[kernel.kallsyms]` with a name and the others
/// (dso `[unknown]`, symbol an address).
fn kernel_names(data: &Path) -> (usize, usize) {
    let args = [
        "report",
        "--stdio",
        "--no-children",
        "-g",
        "none",
        "--sort",
        "dso,sym",
        "-i",
    ];
    let text = run_perf(&perf(), &[&args[..], &[data.to_str().unwrap()]].concat());
    let (mut named, mut unknown) = (0, 0);
    for l in text.lines().filter(|l| l.contains("[k]")) {
        let w: Vec<&str> = l.split_whitespace().collect();
        match w[..] {
            [_, "[kernel.kallsyms]", "[k]", sym, ..] if !sym.starts_with("0x") => named += 1,
            _ => unknown += 1,
        }
    }
    (named, unknown)
}

#[test]
fn a_cached_end_the_kernel_does_not_confirm_is_not_trusted() {
    require_recording();
    let dir = tempdir("ktext-end");
    let range = kallsyms_range();
    // Without a cache: the map and the names the recording must have.
    let plain = dir.join("plain.data");
    record_kernel(&dir.join("empty"), &plain);
    let want = kernel_map(&plain);
    assert_eq!(want, Some((range.0, range.1 - range.0)));
    let (named, unknown) = kernel_names(&plain);
    assert!(
        named > 0 && unknown == 0,
        "{named} named, {unknown} unknown"
    );
    // This boot's cache, its `_text` right and its end in the boot code
    // (no frame in the map: perf then names none).
    let (home, file) = cache_home(&dir);
    let wrong = format!("{} {:x} {:x}\n", boot_id(), range.0, range.0 + 0x100);
    std::fs::write(&file, wrong).unwrap();
    assert_eq!(std::fs::metadata(&file).unwrap().mode() & 0o022, 0);
    let cached = dir.join("cached.data");
    record_kernel(&home, &cached);
    let (named, unknown) = kernel_names(&cached);
    assert!(
        named > 0 && unknown == 0,
        "with a wrong end cached: perf report names {named} kernel symbols, {unknown} not"
    );
    assert_eq!(kernel_map(&cached), want, "the map of a wrong cached end");
    rewritten(&file);
    std::fs::remove_dir_all(&dir).unwrap();
}
