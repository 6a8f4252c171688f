//! Opening the output: `-` is pipe mode on stdout; a path is file mode, created
//! with mode 0600 after an existing file is moved to `FILE.old`, as perf does.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

pub fn is_stdout(path: &Path) -> bool {
    path == Path::new("-")
}

/// Creates the output file. The old file is renamed only once the new one can
/// be created, so a bad path loses nothing.
pub fn create(path: &Path) -> io::Result<File> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
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
    // Probe writability without touching an existing file.
    let probe = old_path(path).with_extension("perfz-probe");
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&probe)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display())))?;
    let _ = std::fs::remove_file(&probe);
    if path.exists() {
        std::fs::rename(path, old_path(path))?;
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display())))
}

pub fn old_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(".old");
    PathBuf::from(s)
}
