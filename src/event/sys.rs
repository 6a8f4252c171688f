//! Thin, checked wrappers over perf_event_open(2) and its ioctls.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use perf_event_open_sys as sys;

use crate::format::Attr;

/// Opens one event. `attr` is our 128-byte attr; the kernel is told its size,
/// so what is opened is byte for byte what the file will say.
pub fn open(attr: &Attr, pid: i32, cpu: i32, group_fd: RawFd) -> io::Result<OwnedFd> {
    open_with(attr, pid, cpu, group_fd, 0)
}

/// Opens one event counted only in the cgroup whose directory is open as
/// `cgroup` (PERF_FLAG_PID_CGROUP; `cpu` must be one CPU).
pub fn open_cgroup(attr: &Attr, cgroup: RawFd, cpu: i32, group_fd: RawFd) -> io::Result<OwnedFd> {
    open_with(
        attr,
        cgroup,
        cpu,
        group_fd,
        sys::bindings::PERF_FLAG_PID_CGROUP as u64,
    )
}

fn open_with(attr: &Attr, pid: i32, cpu: i32, group_fd: RawFd, flags: u64) -> io::Result<OwnedFd> {
    // SAFETY: perf_event_attr is plain old data (integers and unions of
    // integers); all-zero is a valid value.
    let mut kattr: sys::bindings::perf_event_attr = unsafe { std::mem::zeroed() };
    let n = attr.raw.len().min(std::mem::size_of_val(&kattr));
    // SAFETY: copies n ≤ size_of(kattr) bytes from a live Vec into the local
    // struct; the regions do not overlap.
    unsafe {
        std::ptr::copy_nonoverlapping(attr.raw.as_ptr(), &mut kattr as *mut _ as *mut u8, n);
    }
    // SAFETY: kattr is a valid, initialised attr whose size field says how much
    // of it the kernel may read; the call has no other memory effects.
    let fd = unsafe {
        sys::perf_event_open(
            &mut kattr,
            pid,
            cpu,
            group_fd,
            (sys::bindings::PERF_FLAG_FD_CLOEXEC as u64 | flags) as _,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel returned a new fd that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn check(r: i32) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Redirects `fd`'s records into the ring buffer mapped for `target`.
pub fn set_output(fd: &OwnedFd, target: &OwnedFd) -> io::Result<()> {
    // SAFETY: both are perf event fds we own; the ioctl takes an fd by value.
    check(unsafe { sys::ioctls::SET_OUTPUT(fd.as_raw_fd(), target.as_raw_fd()) })
}

/// The kernel's id of the event (what samples carry with PERF_SAMPLE_ID).
pub fn id(fd: &OwnedFd) -> io::Result<u64> {
    let mut id = 0u64;
    // SAFETY: the ioctl writes one u64 through the pointer, which is valid.
    check(unsafe { sys::ioctls::ID(fd.as_raw_fd(), &mut id) })?;
    Ok(id)
}

/// Starts the event counting (`PERF_EVENT_IOC_ENABLE`).
pub fn enable(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: a perf event fd we own; the argument is unused (0 = this event).
    check(unsafe { sys::ioctls::ENABLE(fd.as_raw_fd(), 0) })
}

/// Stops the event counting (`PERF_EVENT_IOC_DISABLE`).
pub fn disable(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: as for enable.
    check(unsafe { sys::ioctls::DISABLE(fd.as_raw_fd(), 0) })
}

/// The PERF_FORMAT_LOST count of event `id` from `read()` of its fd, opened
/// with read_format ID|LOST, or ID|LOST|GROUP (then the read returns every
/// member of the group: `nr`, then `(value, id, lost)` each).
pub fn read_lost(fd: &OwnedFd, id: u64) -> io::Result<u64> {
    let mut buf = [0u64; 1 + 3 * 64];
    // SAFETY: reads at most size_of_val(buf) bytes into buf.
    let n = unsafe {
        libc::read(
            fd.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            std::mem::size_of_val(&buf),
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let words = &buf[..n as usize / 8];
    let entries = match words.len() {
        3 => words,
        w if w >= 4 && (w - 1) % 3 == 0 => &words[1..],
        _ => {
            return Err(io::Error::other(format!(
                "unexpected read of event counts: {n} bytes"
            )))
        }
    };
    entries
        .chunks(3)
        .find(|e| e[1] == id)
        .map(|e| e[2])
        .ok_or_else(|| io::Error::other(format!("event {id} is not in its own read")))
}

/// Attaches a BPF_PROG_TYPE_PERF_EVENT program to a sampling event
/// (`PERF_EVENT_IOC_SET_BPF`): the kernel runs it at each overflow, and
/// writes the sample only where it returns non-zero.
pub fn set_bpf(
    fd: std::os::fd::BorrowedFd<'_>,
    prog: std::os::fd::BorrowedFd<'_>,
) -> io::Result<()> {
    // SAFETY: a perf event fd and a BPF program fd, both open while
    // borrowed; the ioctl takes the program fd by value.
    check(unsafe { sys::ioctls::SET_BPF(fd.as_raw_fd(), prog.as_raw_fd() as u32) })
}

/// Sets an ftrace filter on a tracepoint event (`--filter`).
pub fn set_filter(fd: &OwnedFd, filter: &str) -> io::Result<()> {
    let c = std::ffi::CString::new(filter)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the filter"))?;
    // SAFETY: a perf event fd we own; the kernel reads a NUL-terminated string.
    check(unsafe { sys::ioctls::SET_FILTER(fd.as_raw_fd(), c.as_ptr() as *mut _) })
}
