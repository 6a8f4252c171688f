//! The directory and file that keep the kernel's text range between
//! recordings ([`kernel_range`](super::kernel_range)), read and written so
//! that nothing planted there is followed, blocks, or is read at length:
//! the directory is made mode 0700 and used only while it is ours and no
//! one else may write it (opened without following a link; every file is
//! then named relative to that open directory); a file is read only when
//! it is a regular file of ours, writable by no one else and a line long;
//! it is written to a fresh name (created exclusively, mode 0600, no link
//! followed) and renamed over the old.

use std::ffi::{CStr, CString, OsStr};
use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// The most a cache file may hold (its one line is about 70 bytes).
pub const MAX_BYTES: u64 = 256;

/// A cache directory perfz may trust, open.
pub struct CacheDir {
    dir: File,
}

/// The user perfz runs as.
fn euid() -> u32 {
    // SAFETY: geteuid takes nothing and cannot fail.
    unsafe { libc::geteuid() }
}

/// Why `m` (of `what`) may not be trusted: not ours, or writable by others.
fn not_ours(m: &std::fs::Metadata) -> Option<String> {
    if m.uid() != euid() {
        return Some(format!("owned by uid {}, not {}", m.uid(), euid()));
    }
    let mode = m.mode() & 0o7777;
    (mode & 0o022 != 0).then(|| format!("writable by others (mode {mode:o})"))
}

fn c_name(name: &OsStr) -> io::Result<CString> {
    if name.as_bytes().contains(&b'/') {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    CString::new(name.as_bytes()).map_err(io::Error::from)
}

impl CacheDir {
    /// The directory `path`, open; with `create`, made (mode 0700) where it
    /// is missing. `Ok(None)` where it is absent (or cannot be made);
    /// `Err` says why a directory that is there is not trusted.
    pub fn open(path: &Path, create: bool) -> Result<Option<CacheDir>, String> {
        if create {
            let mut mk = std::fs::DirBuilder::new();
            mk.mode(0o700);
            if mk
                .create(path)
                .is_err_and(|e| e.kind() == io::ErrorKind::NotFound)
            {
                if let Some(parent) = path.parent() {
                    let _ = std::fs::create_dir_all(parent);
                }
                let _ = mk.create(path);
            }
        }
        let untrusted = |why: &str| {
            format!(
                "the kernel text cache {} is not used: {why} (remove it; perfz makes its own)",
                path.display()
            )
        };
        let dir = match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
        {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
                return Err(untrusted("it is a symbolic link or not a directory"))
            }
            Err(e) => return Err(untrusted(&e.to_string())),
        };
        let m = dir.metadata().map_err(|e| untrusted(&e.to_string()))?;
        match not_ours(&m) {
            Some(why) => Err(untrusted(&why)),
            None => Ok(Some(CacheDir { dir })),
        }
    }

    /// `name` in this directory, opened with `flags` (and `mode` where it
    /// is created).
    fn open_at(&self, name: &CStr, flags: libc::c_int, mode: libc::mode_t) -> io::Result<File> {
        // SAFETY: the directory's descriptor is open while self lives and
        // `name` is a NUL-terminated string that outlives the call.
        let fd = unsafe {
            libc::openat(
                self.dir.as_raw_fd(),
                name.as_ptr(),
                flags | libc::O_CLOEXEC,
                libc::c_uint::from(mode),
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd was just opened and nothing else owns it.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// The text of the file `name`, where it is a regular file of ours
    /// that no one else may write, of at most [`MAX_BYTES`]. Nothing else
    /// is read, and nothing blocks: a link is not followed, and a FIFO or
    /// a device is opened without waiting and left unread.
    pub fn read(&self, name: &OsStr) -> Option<String> {
        String::from_utf8(self.read_bytes(name, MAX_BYTES)?).ok()
    }

    /// The bytes of the file `name`, as [`CacheDir::read`] reads it, of at
    /// most `max`.
    pub fn read_bytes(&self, name: &OsStr, max: u64) -> Option<Vec<u8>> {
        let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY;
        let f = self.open_at(&c_name(name).ok()?, flags, 0).ok()?;
        let m = f.metadata().ok()?;
        if !m.file_type().is_file() || not_ours(&m).is_some() || m.len() > max {
            return None;
        }
        let mut v = Vec::with_capacity(m.len() as usize);
        f.take(max + 1).read_to_end(&mut v).ok()?;
        (v.len() as u64 <= max).then_some(v)
    }

    /// Puts `text` in the file `name` whole (a reader sees the old file or
    /// the new): written to a fresh name, then renamed over `name`.
    pub fn replace(&self, name: &OsStr, text: &[u8]) -> io::Result<()> {
        let name = c_name(name)?;
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        for _ in 0..8 {
            let aside = CString::new(format!(
                "{}.{}.{:016x}",
                name.to_string_lossy(),
                std::process::id(),
                nonce()
            ))?;
            let mut f = match self.open_at(&aside, flags, 0o600) {
                Ok(f) => f,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            };
            let r = f
                .write_all(text)
                .and_then(|()| self.rename_at(&aside, &name));
            if r.is_err() {
                self.unlink_at(&aside);
            }
            return r;
        }
        Err(io::Error::from(io::ErrorKind::AlreadyExists))
    }

    fn rename_at(&self, from: &CStr, to: &CStr) -> io::Result<()> {
        let d = self.dir.as_raw_fd();
        // SAFETY: both names are NUL-terminated strings that outlive the
        // call; the directory's descriptor is open while self lives.
        match unsafe { libc::renameat(d, from.as_ptr(), d, to.as_ptr()) } {
            0 => Ok(()),
            _ => Err(io::Error::last_os_error()),
        }
    }

    fn unlink_at(&self, name: &CStr) {
        // SAFETY: as in rename_at.
        unsafe { libc::unlinkat(self.dir.as_raw_fd(), name.as_ptr(), 0) };
    }
}

/// 64 unpredictable bits (std's per-process random hash keys, advanced on
/// every call).
fn nonce() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("perfz-kcache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_directory_is_made_private_and_others_are_refused() {
        let d = scratch("dir");
        let own = d.join("a").join("perfz");
        let dir = CacheDir::open(&own, true).unwrap().expect("made");
        let m = std::fs::metadata(&own).unwrap();
        assert_eq!(m.mode() & 0o777, 0o700);
        dir.replace(OsStr::new("f"), b"line\n").unwrap();
        assert_eq!(dir.read(OsStr::new("f")).as_deref(), Some("line\n"));
        let mode = std::fs::metadata(own.join("f")).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // Only the file is left: nothing aside.
        assert_eq!(std::fs::read_dir(&own).unwrap().count(), 1);
        // A link to it, a directory others may write: not used, said why.
        let link = d.join("link");
        std::os::unix::fs::symlink(&own, &link).unwrap();
        let e = CacheDir::open(&link, true).err().expect("a link refused");
        assert!(e.contains("symbolic link"), "{e}");
        std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = CacheDir::open(&own, false).err().expect("mode 777 refused");
        assert!(e.contains("writable by others"), "{e}");
        assert!(CacheDir::open(&d.join("none"), false).unwrap().is_none());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn only_a_short_regular_file_of_ours_is_read() {
        let d = scratch("read");
        let dir = CacheDir::open(&d, false).unwrap().unwrap();
        std::fs::write(d.join("long"), [b'x'; MAX_BYTES as usize + 1]).unwrap();
        std::fs::write(d.join("shared"), "line\n").unwrap();
        let shared = std::fs::Permissions::from_mode(0o666);
        std::fs::set_permissions(d.join("shared"), shared).unwrap();
        std::fs::create_dir(d.join("dir")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", d.join("zero")).unwrap();
        for name in ["long", "shared", "dir", "zero", "absent", "a/b"] {
            assert_eq!(dir.read(OsStr::new(name)), None, "{name}");
        }
        std::fs::remove_dir_all(&d).unwrap();
    }
}
