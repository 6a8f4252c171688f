//! The capture against files that are not what they were when checked
//! (issue 48): grown between the check and the copy, a container's
//! absolute symlink to a host file, a source not readable by everyone.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::copy::{keep, Budget, Checked};
use super::{capture, source, Mapped, MAX_FILE, MAX_TOTAL};
use crate::synth::build_id;

/// Two small ELF files with build ids of their own.
const ELVES: [&str; 2] = ["/usr/bin/true", "/usr/bin/false"];

/// Another user's uid (nobody's): the cache copies that user's files.
const OTHER_USER: u32 = 65534;

/// A copy of `elf` at `to` with mode `mode`, owned by another user (the
/// cache copies it rather than linking it); its build id.
fn put_elf(elf: &str, to: &Path, mode: u32) -> Vec<u8> {
    put_elf_of(elf, to, mode, OTHER_USER)
}

/// A copy of `elf` at `to` with mode `mode`, owned by `uid`; its build id.
fn put_elf_of(elf: &str, to: &Path, mode: u32, uid: u32) -> Vec<u8> {
    std::fs::copy(elf, to).unwrap();
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(mode)).unwrap();
    std::os::unix::fs::chown(to, Some(uid), Some(uid))
        .unwrap_or_else(|e| panic!("chown {}: {e} (these tests run as root)", to.display()));
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

/// A process whose root is a directory (as a container's is), killed and
/// reaped when dropped, pass or fail.
struct Chrooted {
    pid: libc::pid_t,
}

impl Chrooted {
    /// Forks a child that enters `root` and waits there; returns once it
    /// is in.
    fn new(root: &Path) -> Chrooted {
        let dir = std::ffi::CString::new(root.as_os_str().as_encoded_bytes()).unwrap();
        let mut fds = [0; 2];
        // SAFETY: pipe2 fills the two descriptors of `fds` (close-on-exec:
        // other tests' children never hold them).
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: the child calls only async-signal-safe functions (chroot,
        // write, pause, _exit) on memory made before the fork.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: as above; the child never returns into the harness.
            unsafe {
                let ok = libc::chroot(dir.as_ptr()) == 0;
                libc::write(fds[1], [ok as u8].as_ptr().cast(), 1);
                if !ok {
                    libc::_exit(1);
                }
                loop {
                    libc::pause();
                }
            }
        }
        assert!(pid > 0, "fork: {}", std::io::Error::last_os_error());
        let child = Chrooted { pid };
        // SAFETY: our ends of the pipe, closed or owned here once each.
        let mut from = unsafe {
            libc::close(fds[1]);
            <File as std::os::fd::FromRawFd>::from_raw_fd(fds[0])
        };
        let mut said = [0u8];
        from.read_exact(&mut said).unwrap();
        assert_eq!(
            said,
            [1],
            "the child could not chroot into {}: run the tests as root",
            root.display()
        );
        child
    }
}

impl Drop for Chrooted {
    fn drop(&mut self) {
        // SAFETY: signals and reaps our own child.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
            libc::waitpid(self.pid, std::ptr::null_mut(), 0);
        }
    }
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

/// A container's absolute symlink `/lib/evil.so -> /tmp/.../secret.so`, a
/// root-only ELF file of the host's the container cannot see: resolved in
/// the container's root it names nothing, so nothing is kept; once the
/// container has a file of its own at that path, that file is kept.
#[test]
fn a_containers_absolute_symlink_resolves_in_its_root_not_the_hosts() {
    let host = tempfile::tempdir().unwrap();
    let secret = host.path().join("secret.so");
    let secret_id = put_elf(ELVES[0], &secret, 0o600);
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("lib")).unwrap();
    std::os::unix::fs::symlink(&secret, root.path().join("lib/evil.so")).unwrap();
    let child = Chrooted::new(root.path());
    let cache = tempfile::tempdir().unwrap();
    let budget = Budget::new(MAX_TOTAL);
    let map = Mapped {
        pid: child.pid as u32,
        start: 0x1000, // no such mapping: the path is what is looked up
        end: 0x2000,
        path: "/lib/evil.so",
        build_id: None,
    };
    let got = capture(cache.path(), &map, &budget);
    assert_eq!(got, Ok(None), "the host's file was reached");
    assert_eq!(files_under(cache.path()), Vec::<PathBuf>::new());
    // A FIFO there is not opened (nor waited on).
    let fifo = std::ffi::CString::new(
        root.path()
            .join("lib/fifo.so")
            .into_os_string()
            .into_encoded_bytes(),
    )
    .unwrap();
    // SAFETY: mkfifo reads the NUL-terminated name.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let fifo_map = Mapped {
        path: "/lib/fifo.so",
        ..map
    };
    assert!(source::open_mapped(fifo_map.pid, 0x1000, 0x2000, fifo_map.path).is_err());
    assert_eq!(capture(cache.path(), &fifo_map, &budget), Ok(None));
    // `..` does not lead out either.
    let up = format!("/lib/../../../..{}", secret.display());
    let proc_root = File::open(format!("/proc/{}/root", child.pid)).unwrap();
    assert!(source::open_in_root(&proc_root, &up).is_err());
    // The container's own file at the link's target is the one kept.
    let own = root.path().join(secret.strip_prefix("/").unwrap());
    std::fs::create_dir_all(own.parent().unwrap()).unwrap();
    let own_id = put_elf(ELVES[1], &own, 0o644);
    assert_ne!(own_id, secret_id);
    assert_eq!(
        capture(cache.path(), &map, &budget),
        Ok(Some(own_id.clone()))
    );
    let elf = cache
        .path()
        .join("lib/evil.so")
        .join(build_id::hex(&own_id))
        .join("elf");
    assert_eq!(
        std::fs::read(elf).unwrap(),
        std::fs::read(ELVES[1]).unwrap()
    );
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

/// A mapping still there is found through `/proc/PID/map_files` even
/// where its path names nothing: the mapped file itself.
#[test]
fn a_mapping_is_opened_through_map_files() {
    let exe = std::fs::read_link("/proc/self/exe").unwrap();
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let line = maps
        .lines()
        .find(|l| l.contains(" r-xp ") && l.ends_with(exe.to_str().unwrap()))
        .unwrap_or_else(|| panic!("no executable mapping of {}: {maps}", exe.display()));
    let (start, end) = line.split(' ').next().unwrap().split_once('-').unwrap();
    let [start, end] = [start, end].map(|x| u64::from_str_radix(x, 16).unwrap());
    let f = source::open_mapped(std::process::id(), start, end, "/no/such/file")
        .expect("map_files needs CAP_SYS_ADMIN: run the tests as root");
    let (got, want) = (f.metadata().unwrap(), std::fs::metadata(&exe).unwrap());
    assert_eq!((got.dev(), got.ino()), (want.dev(), want.ino()), "{line}");
}

/// The entry of `path`'s file with build id `id` in the cache at `cache`.
fn entry(cache: &Path, path: &str, id: &[u8]) -> PathBuf {
    let rel = path.trim_start_matches('/');
    cache.join(rel).join(build_id::hex(id)).join("elf")
}

/// perf links a DSO into its cache; perfz does so only for a file nobody
/// but root or the recorder can change (a link to anyone else's file lets
/// them change the entry after the check), and copies the rest.
#[test]
fn only_a_file_of_roots_that_nobody_else_can_write_is_linked() {
    let d = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let budget = Budget::new(MAX_TOTAL);
    for (name, mode, uid, linked) in [
        ("roots", 0o755, 0, true),
        ("group-writable", 0o775, 0, false),
        ("others", 0o755, OTHER_USER, false),
    ] {
        let file = d.path().join(name);
        let id = put_elf_of(ELVES[0], &file, mode, uid);
        let path = format!("/x/{name}");
        let got = keep(
            cache.path(),
            &path,
            &checked(&file),
            None,
            &budget,
            MAX_FILE,
        );
        assert_eq!(got, Ok(id.clone()), "{name}");
        let (src, kept) = (
            std::fs::metadata(&file).unwrap(),
            std::fs::metadata(entry(cache.path(), &path, &id)).unwrap(),
        );
        let same = (src.dev(), src.ino()) == (kept.dev(), kept.ino());
        assert_eq!(same, linked, "{name}: linked");
        if !linked {
            assert_eq!(kept.uid(), 0, "{name}: a copy is the recorder's");
        }
    }
}

/// The end-of-recording pass opens the recorded path once and keeps what
/// it checked there: the build id recorded, never a FIFO put at the path
/// (it would block), never through a symlink put at it, another user's
/// file as a copy.
#[test]
fn the_end_of_a_recording_keeps_the_file_it_checked() {
    let d = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let app = d.path().join("app");
    let id = put_elf(ELVES[0], &app, 0o755);
    let path = app.to_str().unwrap();
    let other = build_id::of_file(Path::new(ELVES[1])).unwrap();
    assert!(super::keep_named(cache.path(), path, &other).is_err());
    assert_eq!(files_under(cache.path()), Vec::<PathBuf>::new());
    super::keep_named(cache.path(), path, &id).unwrap();
    let kept = std::fs::metadata(entry(cache.path(), path, &id)).unwrap();
    assert_ne!(kept.ino(), std::fs::metadata(&app).unwrap().ino());
    // A FIFO at the path: refused at once, never waited on.
    let fifo = d.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path, alive for the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let got = super::keep_named(cache.path(), fifo.to_str().unwrap(), &id);
    assert_eq!(got, Err("not a regular file".into()));
    // A symlink at the path is not followed.
    let link = d.path().join("link");
    std::os::unix::fs::symlink(&app, &link).unwrap();
    assert!(super::keep_named(cache.path(), link.to_str().unwrap(), &id).is_err());
}
