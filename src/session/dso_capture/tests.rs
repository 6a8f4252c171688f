//! The capture against files that are not what they were when checked
//! (issue 48): grown between the check and the copy, a source not
//! readable by everyone.

use std::fs::File;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::copy::{keep, Budget, Checked};
use super::{MAX_FILE, MAX_TOTAL};
use crate::synth::build_id;

/// Two small ELF files with build ids of their own.
const ELVES: [&str; 2] = ["/usr/bin/true", "/usr/bin/false"];

/// A copy of `elf` at `to` with mode `mode`; its build id.
fn put_elf(elf: &str, to: &Path, mode: u32) -> Vec<u8> {
    std::fs::copy(elf, to).unwrap();
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(mode)).unwrap();
    build_id::of_file(to).unwrap_or_else(|| panic!("{elf} has no build id"))
}

/// `path` opened and checked, as the capture opens and checks it.
fn checked(path: &Path) -> Checked {
    Checked::new(File::open(path).unwrap()).unwrap()
}

/// The regular files under `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let md = std::fs::symlink_metadata(&p).unwrap();
        if md.is_dir() {
            out.extend(files_under(&p));
        } else if md.is_file() {
            out.push(p);
        }
    }
    out
}

/// A file grown after its size was checked (a writer racing the capture,
/// here made to win: the growth happens between the check and the copy) is
/// never copied past the checked size, and is dropped; the recording's
/// bytes never pass their limit and are given back.
#[test]
fn a_file_grown_after_its_check_is_never_copied_past_it() {
    let d = tempfile::tempdir().unwrap();
    let app = d.path().join("app");
    put_elf(ELVES[0], &app, 0o755);
    let size = std::fs::metadata(&app).unwrap().len();
    let grow = || {
        let f = std::fs::OpenOptions::new().write(true).open(&app).unwrap();
        let now = f.metadata().unwrap().len();
        f.set_len(now + (64 << 20)).unwrap(); // sparse: costs the writer nothing
    };
    let src = checked(&app);
    assert_eq!(src.refusal(size), None);
    grow();
    let mut out = tempfile::tempfile().unwrap();
    assert!(src.copy_to(&mut out).is_err(), "a changed file is dropped");
    let copied = out.metadata().unwrap().len();
    assert!(copied <= size, "{copied} bytes copied of {size} checked");
    // Through the cache: nothing kept, the bytes reserved given back.
    let cache = tempfile::tempdir().unwrap();
    let budget = Budget::new(size + 1);
    let src = checked(&app);
    grow();
    let got = keep(cache.path(), "/x/app", &src, None, &budget, MAX_FILE);
    assert!(got.is_err(), "kept a file that changed: {got:?}");
    assert_eq!(files_under(cache.path()), Vec::<PathBuf>::new());
    assert_eq!(budget.used(), 0);
}

/// Reservations side by side never pass the limit.
#[test]
fn the_recordings_bytes_are_reserved_within_the_limit() {
    let budget = Budget::new(1000);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                (0..1000).for_each(|_| {
                    let _ = budget.reserve(7);
                })
            });
        }
    });
    assert_eq!(budget.used(), 994);
    assert!(!budget.reserve(7));
    budget.release(994);
    assert!(budget.reserve(1000) && !budget.reserve(1));
}

/// The copy of a file not readable by everyone is readable by its owner
/// (the recorder) alone; one readable by everyone is readable as perf's
/// entries are.
#[test]
fn a_copy_is_never_readable_by_more_than_its_original() {
    let d = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let budget = Budget::new(MAX_TOTAL);
    for (mode, want) in [
        (0o600, 0o600),
        (0o640, 0o600),
        (0o604, 0o600),
        (0o700, 0o600),
        (0o644, 0o644),
        (0o755, 0o644),
    ] {
        let name = format!("app-{mode:o}");
        let id = put_elf(ELVES[0], &d.path().join(&name), mode);
        let path = format!("/x/{name}");
        let got = keep(
            cache.path(),
            &path,
            &checked(&d.path().join(&name)),
            None,
            &budget,
            MAX_FILE,
        );
        assert_eq!(got, Ok(id.clone()), "{mode:o}");
        let elf = cache
            .path()
            .join("x")
            .join(&name)
            .join(build_id::hex(&id))
            .join("elf");
        let md = std::fs::metadata(&elf).unwrap();
        assert_eq!(md.mode() & 0o7777, want, "a copy of a {mode:o} file");
    }
}
