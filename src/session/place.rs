//! Where a recording goes, and the promise that a failed start touches no
//! existing file.
//!
//! `-` is pipe mode on stdout, and so is a character device (`-o
//! /dev/null`, [`stream`]). Any other path is file mode: the recording is first
//! written to a hidden temporary file beside the path (mode 0600); only when
//! the recording has really started (the workload exec'd, the events are
//! enabled) does [`Place::commit`] move an existing file to `FILE.old` and
//! rename the new one into place, as perf's rotation does. Before that, any
//! failure just drops the temporary file.
//!
//! The commit comes after the events are enabled, so it must be quick: a
//! replaced `FILE.old` is held open ([`Displaced`]), not freed, while the
//! recording runs (freeing a large file's blocks takes the filesystem
//! milliseconds to seconds, and a 512 KiB ring holds under a millisecond of
//! a dwarf stream). Its blocks go back when the [`Place`] is dropped,
//! after the recording (`--switch-max-files` frees what it removes on a
//! thread of its own).
//!
//! Hostile surroundings (see the crate docs): the temporary file is created
//! exclusively under a random name and renamed in, so a symlink planted at
//! any name is never written through; an existing `FILE.old` directory is
//! replaced only when it is a perf recording (`is_perf_dir`), and a device
//! or FIFO at the path is never moved aside.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use tempfile::{TempDir, TempPath};

use super::error::Kept;

mod stream;
pub use stream::{is_device, is_stream};

pub enum Place {
    /// Pipe mode on stdout.
    Pipe,
    /// Pipe mode into a character device (`-o /dev/null`).
    Device { path: PathBuf },
    /// File mode; `pending` holds the temporary file until the commit.
    File {
        path: PathBuf,
        pending: Option<TempPath>,
        displaced: Displaced,
    },
    /// `--flight-recorder`: nothing on disk until a snapshot.
    Memory { path: PathBuf },
    /// `--threads`: a directory of `data` and `data.N` files; `pending`
    /// holds the temporary directory until the commit.
    Dir {
        path: PathBuf,
        pending: Option<TempDir>,
        displaced: Displaced,
    },
}

/// The files a commit replaced (an older `FILE.old` and, for directories,
/// its files), unlinked but held open: the kernel frees their blocks only
/// when this is dropped, after the recording, not in the commit.
#[derive(Debug, Default)]
pub struct Displaced(Vec<File>);

impl Displaced {
    /// Unlinks the regular file at `path`, holding it open first where it
    /// can be opened (if not, it is freed now, as before).
    pub fn remove_file(&mut self, path: &Path) -> io::Result<()> {
        self.hold(path);
        std::fs::remove_file(path)
    }

    /// Opens `path` if it is a regular file, to be freed when dropped.
    /// Non-blocking: a FIFO put there is never waited on (and not held).
    fn hold(&mut self, path: &Path) {
        use std::os::unix::fs::OpenOptionsExt;
        if !std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
            return;
        }
        if let Ok(f) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
            .open(path)
        {
            self.0.push(f);
        }
    }

    /// Removes the directory `path`: its files held open, then unlinked.
    pub fn remove_dir(&mut self, path: &Path) -> io::Result<()> {
        for e in std::fs::read_dir(path)?.flatten() {
            if e.file_type().is_ok_and(|t| t.is_file()) {
                self.remove_file(&e.path())?;
            }
        }
        std::fs::remove_dir_all(path)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Frees the held files on a thread of their own, so the drain does
    /// not wait for the filesystem (mid-recording: `--switch-max-files`).
    pub fn free_in_background(self) {
        if self.is_empty() {
            return;
        }
        // If the thread cannot start, the closure (and the files) is
        // dropped here: freed now, as before.
        let _ = std::thread::Builder::new()
            .name("perfz-free".into())
            .spawn(move || drop(self));
    }
}

/// Whether `path` means stdout.
pub fn is_stdout(path: &Path) -> bool {
    path == Path::new("-")
}

/// `FILE.old`, where an existing output is moved.
pub fn old_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(".old");
    PathBuf::from(s)
}

pub fn dir_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Checks, without creating or touching anything, that `path` can be an
/// output: its directory exists and it is not itself a directory.
pub fn check(path: &Path) -> io::Result<()> {
    if is_stream(path) {
        return Ok(());
    }
    let dir = dir_of(path);
    let meta = std::fs::metadata(dir).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot write {}: {}: {e}", path.display(), dir.display()),
        )
    })?;
    if !meta.is_dir() {
        return Err(io::Error::other(format!(
            "cannot write {}: {} is not a directory",
            path.display(),
            dir.display()
        )));
    }
    // A block device, FIFO or socket is never moved aside and replaced
    // (a character device is a stream: above).
    if let Ok(m) = std::fs::metadata(path) {
        if !m.is_file() && !m.is_dir() {
            return Err(io::Error::other(format!(
                "cannot record into {}: it is not a regular file or a character device (perfz \
                 writes a new file and moves the old one aside); to write a stream there, use \
                 -o - and redirect: -o - > {}",
                path.display(),
                path.display()
            )));
        }
    }
    let old = old_path(path);
    if std::fs::symlink_metadata(path).is_ok()
        && std::fs::symlink_metadata(&old).is_ok_and(|m| m.is_dir())
        && !is_perf_dir(&old)
    {
        return Err(io::Error::other(format!(
            "cannot move {} aside: {} is a directory that is not a perf recording \
             (perfz replaces only a perf.data file or a --threads directory there); \
             move it away or choose another -o",
            path.display(),
            old.display()
        )));
    }
    if path.is_dir() && !is_perf_dir(path) {
        return Err(io::Error::other(format!(
            "cannot write {}: it is a directory{}",
            path.display(),
            if path.join("data").exists() {
                ""
            } else {
                " (and not a --threads recording, which perfz would move to .old)"
            }
        )));
    }
    Ok(())
}

/// Whether `path` is a directory perf's (or perfz's) `--threads` wrote: one
/// a new recording may move aside to `.old`, as perf does.
pub fn is_perf_dir(path: &Path) -> bool {
    path.join("data").is_file()
        && std::fs::read_dir(path).is_ok_and(|d| {
            d.filter_map(|e| e.ok()).all(|e| {
                let n = e.file_name();
                let n = n.to_string_lossy();
                n == "data"
                    || n.strip_prefix("data.")
                        .is_some_and(|k| k.parse::<u32>().is_ok())
            })
        })
}

/// Creates `name` in `dir`, new, mode 0600.
pub fn create_in(dir: &Path, name: &str) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let p = dir.join(name);
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&p)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot create {}: {e}", p.display())))
}

/// Moves an existing `path` (file or directory) to `path.old`, replacing an
/// older `.old`, as perf does. What is replaced goes to `displaced`.
fn move_aside(path: &Path, displaced: &mut Displaced) -> io::Result<()> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(());
    }
    let old = old_path(path);
    if let Ok(m) = std::fs::symlink_metadata(&old) {
        if m.is_dir() {
            // Only a recording perf or perfz wrote (checked before the
            // recording started, again here).
            if !is_perf_dir(&old) {
                return Err(io::Error::other(format!(
                    "{} is a directory that is not a perf recording; not replaced",
                    old.display()
                )));
            }
            displaced.remove_dir(&old)?;
        } else if std::fs::metadata(path)?.is_dir() {
            displaced.remove_file(&old)?;
        } else {
            // The rename below replaces it.
            displaced.hold(&old);
        }
    }
    std::fs::rename(path, old)
}

/// A hidden temporary file or directory beside `path`, named after it.
fn temp_beside<T>(
    path: &Path,
    make: impl FnOnce(&tempfile::Builder<'_, '_>, &Path) -> io::Result<T>,
) -> io::Result<T> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "perf.data".into());
    let prefix = format!(".{name}.");
    let mut b = tempfile::Builder::new();
    b.prefix(&prefix).suffix(".perfz-new");
    make(&b, dir_of(path))
        .map_err(|e| io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display())))
}

impl Place {
    /// Opens the output: stdout (a duplicate of fd 1, unbuffered, so records
    /// go out without a copy into a buffer of ours) or a new temporary file
    /// beside `path`.
    pub fn open(path: &Path) -> io::Result<(Place, File)> {
        if is_stdout(path) {
            let fd: OwnedFd = io::stdout().as_fd().try_clone_to_owned()?;
            return Ok((Place::Pipe, File::from(fd)));
        }
        if is_device(path) {
            return stream::open_device(path);
        }
        check(path)?;
        // tempfile creates with O_EXCL and mode 0600 at an unpredictable name.
        let tmp = temp_beside(path, |b, dir| b.tempfile_in(dir))?;
        let (file, pending) = tmp.into_parts();
        Ok((
            Place::File {
                path: path.to_path_buf(),
                pending: Some(pending),
                displaced: Displaced::default(),
            },
            file,
        ))
    }

    /// Opens a `--threads` output: a new temporary directory (mode 0700)
    /// beside `path`, where the caller creates `data` and `data.N`.
    pub fn open_dir(path: &Path) -> io::Result<Place> {
        if is_stream(path) {
            return Err(io::Error::other(
                "--threads writes a directory of files and cannot write a pipe or a device: give -o DIR",
            ));
        }
        check(path)?;
        let tmp = temp_beside(path, |b, dir| b.tempdir_in(dir))?;
        Ok(Place::Dir {
            path: path.to_path_buf(),
            pending: Some(tmp),
            displaced: Displaced::default(),
        })
    }

    pub fn is_pipe(&self) -> bool {
        matches!(self, Place::Pipe | Place::Device { .. })
    }

    /// The recording has started: move an existing file to `FILE.old` and put
    /// the new one in its place. Idempotent.
    pub fn commit(&mut self) -> io::Result<()> {
        match self {
            Place::Pipe | Place::Device { .. } | Place::Memory { .. } => Ok(()),
            Place::File {
                path,
                pending,
                displaced,
            } => match pending.take() {
                None => Ok(()),
                Some(tmp) => move_aside(path, displaced)
                    .and_then(|()| tmp.persist(&*path).map_err(|e| e.error)),
            },
            Place::Dir {
                path,
                pending,
                displaced,
            } => match pending.take() {
                None => Ok(()),
                Some(tmp) => move_aside(path, displaced).and_then(|()| {
                    let from = tmp.keep();
                    std::fs::rename(&from, &*path).inspect_err(|_| {
                        let _ = std::fs::remove_dir_all(&from);
                    })
                }),
            },
        }
    }

    /// Where the file (or directory) is now (the temporary name until the
    /// commit).
    pub fn current_path(&self) -> Option<&Path> {
        match self {
            Place::Pipe | Place::Device { .. } | Place::Memory { .. } => None,
            Place::File {
                pending: Some(t), ..
            } => Some(t),
            Place::Dir {
                pending: Some(t), ..
            } => Some(t.path()),
            Place::File { path, .. } | Place::Dir { path, .. } => Some(path),
        }
    }

    /// What the user asked for, for messages.
    pub fn display(&self) -> String {
        match self {
            Place::Pipe => "-".into(),
            Place::File { path, .. }
            | Place::Dir { path, .. }
            | Place::Memory { path }
            | Place::Device { path } => path.display().to_string(),
        }
    }

    /// Bytes in the file (or the directory's files) now.
    pub fn size(&self) -> u64 {
        self.current_path().map_or(0, crate::format::size_on_disk)
    }
}

/// Cuts the file at `path` back to `end` (its last checkpoint) after a
/// failed write whose extent is unknown.
pub fn cut_back(path: &Path, end: Option<u64>) -> Option<Kept> {
    let end = end?;
    let f = std::fs::OpenOptions::new().write(true).open(path).ok()?;
    f.set_len(end).ok()?;
    f.sync_all().ok()?;
    Some(Kept::Checkpoint(end))
}

#[cfg(test)]
mod tests;
