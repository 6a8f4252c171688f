//! The file a process maps, opened as that process sees it, never through
//! the host's view of its paths: a container's absolute symlink names a
//! file in the container's root, so it is resolved there, and a file of the
//! host's that the container cannot see is never reached.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::OpenOptionsExt;

/// How a mapped file is found: a handle on it, which opens nothing (a
/// device a container put at the path is not opened, so it does nothing).
const FIND: i32 = libc::O_PATH | libc::O_CLOEXEC;
/// How it is then opened, once known to be a regular file: read-only,
/// never blocking and never inherited by a child.
const READ: i32 = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY;

/// The file process `pid` maps at `start..end` from `path`, opened for
/// reading if it is a regular file: its `/proc/PID/map_files/START-END`
/// entry, which is the mapped file itself (no path is resolved), else, for
/// a mapping gone since, `path` resolved in the process's root as the
/// process resolves it ([`open_in_root`]).
pub fn open_mapped(pid: u32, start: u64, end: u64, path: &str) -> io::Result<File> {
    let mapped = format!("/proc/{pid}/map_files/{start:x}-{end:x}");
    let found = match open_flags(&mapped, FIND) {
        Ok(f) => f,
        Err(_) => open_in_root(&open_flags(&format!("/proc/{pid}/root"), FIND)?, path)?,
    };
    if !found.metadata()?.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    // The same file, reopened for reading through its handle.
    open_flags(&format!("/proc/self/fd/{}", found.as_raw_fd()), READ)
}

/// `path` opened with `flags`.
fn open_flags(path: &str, flags: i32) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
}

/// `path` resolved with the directory `root` as its root, the way a
/// process whose root it is resolves it (openat2's RESOLVE_IN_ROOT): `..`
/// and absolute symlinks stay inside `root`, and /proc's magic links, which
/// could lead out of it, are refused (RESOLVE_NO_MAGICLINKS). Symlinks
/// inside the root are followed, the last component's too: a container's
/// `libc.so.6` is a symlink to its own library. The result is a handle
/// (O_PATH): nothing is opened.
pub fn open_in_root(root: &File, path: &str) -> io::Result<File> {
    let bytes = crate::format::side_band::path_bytes(path);
    let name = std::ffi::CString::new(bytes).map_err(|_| io::ErrorKind::InvalidInput)?;
    // SAFETY: open_how is plain integers; all zero is its empty value, the
    // one openat2 documents for fields left unset.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = FIND as u64;
    how.resolve = libc::RESOLVE_IN_ROOT | libc::RESOLVE_NO_MAGICLINKS;
    // SAFETY: openat2 reads the NUL-terminated `name` and `how` (its size
    // passed), both alive for the call, and returns a new descriptor or -1.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            root.as_raw_fd(),
            name.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is the new descriptor openat2 returned; nothing else
    // owns it.
    Ok(unsafe { File::from_raw_fd(fd as i32) })
}
