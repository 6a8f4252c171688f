//! Where a recording goes, and the promise that a failed start touches no
//! existing file.
//!
//! `-` is pipe mode on stdout. A path is file mode: the recording is first
//! written to a hidden temporary file beside the path (mode 0600); only when
//! the recording has really started (the workload exec'd, the events are
//! enabled) does [`Output::commit`] move an existing file to `FILE.old` and
//! rename the new one into place, as perf's rotation does. Before that, any
//! failure just drops the temporary file.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use tempfile::TempPath;

use super::error::Kept;

pub enum Output {
    /// Pipe mode on stdout.
    Pipe,
    /// File mode; `pending` holds the temporary file until the commit.
    File {
        path: PathBuf,
        pending: Option<TempPath>,
    },
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

fn dir_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Checks, without creating or touching anything, that `path` can be an
/// output: its directory exists and it is not itself a directory.
pub fn check(path: &Path) -> io::Result<()> {
    if is_stdout(path) {
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
    if path.is_dir() {
        return Err(io::Error::other(format!(
            "cannot write {}: it is a directory",
            path.display()
        )));
    }
    Ok(())
}

impl Output {
    /// Opens the output: stdout (a duplicate of fd 1, unbuffered, so records
    /// go out without a copy into a buffer of ours) or a new temporary file
    /// beside `path`.
    pub fn open(path: &Path) -> io::Result<(Output, File)> {
        if is_stdout(path) {
            let fd: OwnedFd = io::stdout().as_fd().try_clone_to_owned()?;
            return Ok((Output::Pipe, File::from(fd)));
        }
        check(path)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "perf.data".into());
        // tempfile creates with O_EXCL and mode 0600 at an unpredictable name.
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".perfz-new")
            .tempfile_in(dir_of(path))
            .map_err(|e| {
                io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display()))
            })?;
        let (file, pending) = tmp.into_parts();
        Ok((
            Output::File {
                path: path.to_path_buf(),
                pending: Some(pending),
            },
            file,
        ))
    }

    pub fn is_pipe(&self) -> bool {
        matches!(self, Output::Pipe)
    }

    /// The recording has started: move an existing file to `FILE.old` and put
    /// the new one in its place. Idempotent.
    pub fn commit(&mut self) -> io::Result<()> {
        let Output::File { path, pending } = self else {
            return Ok(());
        };
        let Some(tmp) = pending.take() else {
            return Ok(());
        };
        if path.exists() {
            std::fs::rename(&*path, old_path(path))?;
        }
        tmp.persist(&*path).map_err(|e| e.error)
    }

    /// Where the file is now (the temporary name until the commit).
    pub fn current_path(&self) -> Option<&Path> {
        match self {
            Output::Pipe => None,
            Output::File {
                pending: Some(t), ..
            } => Some(t),
            Output::File { path, .. } => Some(path),
        }
    }

    /// What the user asked for, for messages.
    pub fn display(&self) -> String {
        match self {
            Output::Pipe => "-".into(),
            Output::File { path, .. } => path.display().to_string(),
        }
    }

    /// Bytes in the file now.
    pub fn size(&self) -> u64 {
        self.current_path()
            .and_then(|p| std::fs::metadata(p).ok())
            .map_or(0, |m| m.len())
    }

    /// After a failed write: cut the file back to `end` (the last
    /// checkpoint, which its header already describes) so it opens in perf.
    pub fn roll_back(&self, end: Option<u64>) -> Option<Kept> {
        let end = end?;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(self.current_path()?)
            .ok()?;
        f.set_len(end).ok()?;
        f.sync_all().ok()?;
        Some(Kept::Checkpoint(end))
    }
}
