//! The files a recording names (its DSOs, their debug files), opened as
//! `perf report` would survive them: without blocking (a FIFO at a DSO's
//! path never hangs the export), regular files only, and mapped rather than
//! read, so only the pages parsed are read (a 10 GB sparse file costs what
//! its headers and sections cost).

use std::ops::Deref;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// A file's bytes: mapped, or owned (the vDSO, a fuzz input).
pub(crate) enum FileBytes {
    /// A regular file mapped read-only.
    Mapped(memmap2::Mmap),
    /// Bytes held in memory.
    Owned(Vec<u8>),
}

impl Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(m) => m,
            FileBytes::Owned(v) => v,
        }
    }
}

/// The regular file at `path`, mapped read-only; None for anything else
/// (missing, a FIFO, a device, a directory, empty).
pub(crate) fn map(path: &Path) -> Option<FileBytes> {
    let f = open(path)?;
    // SAFETY: a private read-only mapping of a regular file. Its bytes are
    // only parsed (bounds-checked, as untrusted input); a file truncated
    // while it is mapped would fault on the pages cut off, a risk perf's
    // own mapping of DSOs takes too.
    let m = unsafe { memmap2::Mmap::map(&f) }.ok()?;
    Some(FileBytes::Mapped(m))
}

/// The regular file at `path`, open for reading without blocking; None
/// for anything else (missing, a FIFO, a device, a directory, empty).
pub(crate) fn open(path: &Path) -> Option<std::fs::File> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    let meta = f.metadata().ok()?;
    (meta.is_file() && meta.len() > 0).then_some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fifo");
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(map(&p).is_none());
        assert!(map(dir.path()).is_none());
        assert!(map(Path::new("/dev/null")).is_none());
    }

    #[test]
    fn a_regular_file_is_mapped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"\x7fELF").unwrap();
        assert_eq!(&*map(&p).unwrap(), b"\x7fELF");
    }
}
