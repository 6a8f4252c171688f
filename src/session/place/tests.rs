//! The commit: what it moves aside, and what it holds to free later.

use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;

use super::*;

fn displaced(out: &Place) -> &Displaced {
    match out {
        Place::File { displaced, .. } | Place::Dir { displaced, .. } => displaced,
        _ => panic!("no files here"),
    }
}

/// What a held, unlinked file still reads.
fn held_contents(d: &Displaced) -> Vec<String> {
    d.0.iter()
        .map(|f| {
            assert_eq!(f.metadata().unwrap().nlink(), 0, "held but not unlinked");
            let mut s = String::new();
            (&*f).read_to_string(&mut s).unwrap();
            s
        })
        .collect()
}

/// Commits a new file over `path`, which holds "previous": checks that it
/// became FILE.old.
fn commit_over_previous(path: &Path) -> Place {
    let (mut out, _f) = Place::open(path).unwrap();
    out.commit().unwrap();
    assert_eq!(std::fs::read_to_string(old_path(path)).unwrap(), "previous");
    out
}

#[test]
fn commit_holds_the_replaced_old_file_until_the_output_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("perf.data");
    std::fs::write(&path, "previous").unwrap();
    std::fs::write(old_path(&path), "older").unwrap();
    let (mut out, mut f) = Place::open(&path).unwrap();
    f.write_all(b"new").unwrap();
    assert!(displaced(&out).is_empty());
    out.commit().unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    assert_eq!(
        std::fs::read_to_string(old_path(&path)).unwrap(),
        "previous"
    );
    // The older FILE.old is gone by name, its blocks not yet freed.
    assert_eq!(held_contents(displaced(&out)), ["older"]);
    // A second commit changes nothing.
    out.commit().unwrap();
    assert_eq!(displaced(&out).0.len(), 1);
}

#[test]
fn commit_without_an_old_file_holds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("perf.data");
    std::fs::write(&path, "previous").unwrap();
    let out = commit_over_previous(&path);
    assert!(displaced(&out).is_empty());
}

#[test]
fn a_replaced_old_directory_is_held_file_by_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("perf.data");
    let old = old_path(&path);
    std::fs::create_dir(&path).unwrap();
    std::fs::write(path.join("data"), "previous").unwrap();
    std::fs::create_dir(&old).unwrap();
    std::fs::write(old.join("data"), "older").unwrap();
    std::fs::write(old.join("data.1"), "older.1").unwrap();
    let mut out = Place::open_dir(&path).unwrap();
    out.commit().unwrap();
    assert!(is_perf_dir(&old));
    assert_eq!(
        std::fs::read_to_string(old.join("data")).unwrap(),
        "previous"
    );
    assert!(!old.join("data.1").exists());
    let mut held = held_contents(displaced(&out));
    held.sort();
    assert_eq!(held, ["older", "older.1"]);
}

#[test]
fn a_fifo_in_the_old_place_is_replaced_without_waiting_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("perf.data");
    std::fs::write(&path, "previous").unwrap();
    let fifo =
        std::ffi::CString::new(old_path(&path).into_os_string().into_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo has no other effect.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let out = commit_over_previous(&path);
    assert!(displaced(&out).is_empty());
}
