//! How the main thread reaches a drain unit running on a thread of its own
//! between two of its loops: a mailbox holding one [`Request`] (switch the
//! hand the output over, copy a snapshot) and an eventfd that wakes the unit's poll;
//! the unit answers with a [`Reply`]. The unit takes a request after a pass
//! that pushed everything waiting (`Next::Switch`). A thread that has ended
//! takes none (its mailbox is closed, and one that came meanwhile is
//! answered as gone), so the main thread never waits for an answer that
//! cannot come.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Mutex;

use crate::push::{HandedBack, Output};

/// A new non-blocking eventfd.
pub fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: eventfd has no memory effects; the fd is checked and ours.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a new descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Wakes whoever polls `fd`.
pub fn signal(fd: &OwnedFd) {
    let one = 1u64.to_ne_bytes();
    // SAFETY: writes 8 bytes from a live buffer to our eventfd.
    unsafe { libc::write(fd.as_raw_fd(), one.as_ptr().cast(), 8) };
}

/// Resets an eventfd that was signalled (non-blocking: nothing waits).
pub fn clear(fd: &OwnedFd) {
    let mut v = [0u8; 8];
    // SAFETY: reads at most 8 bytes into a live buffer from our eventfd.
    unsafe { libc::read(fd.as_raw_fd(), v.as_mut_ptr().cast(), 8) };
}

/// What the main thread asks of a drain thread between its passes.
pub enum Request {
    /// `--switch-output`: put everything waiting into the current data.N,
    /// hand it back, and go on in this output (a new codec stream).
    HandOver(Output),
    /// `--flight-recorder`: drain everything waiting and hand over the
    /// retained records.
    Snapshot,
}

/// A drain unit's answer to a [`Request`], one of its three cases.
pub enum Reply {
    /// [`Request::Snapshot`]'s: what unit `.0` retains, copied
    /// ([`HandedBack::retained`]; Err: the loan failed).
    Snapshot(usize, io::Result<HandedBack>),
    /// [`Request::HandOver`]'s: unit `.0`'s output, handed back.
    Handed(usize, HandedBack),
    /// The thread had ended before it saw the request.
    Gone,
}

impl Reply {
    /// Whether a write failed: the unit ends (its output is handed back).
    pub fn failed(&self) -> bool {
        match self {
            Reply::Snapshot(_, copy) => copy.is_err(),
            Reply::Handed(_, h) => h.error.is_some(),
            Reply::Gone => false,
        }
    }
}

/// A drain thread's wake-up fd and the request waiting for it.
pub struct Mailbox {
    fd: OwnedFd,
    /// The waiting request, and whether the thread has ended (it then
    /// takes none: the main thread must not wait for its reply).
    state: Mutex<(Option<Request>, bool)>,
}

impl Mailbox {
    pub fn new() -> io::Result<Mailbox> {
        Ok(Mailbox {
            fd: eventfd()?,
            state: Mutex::new((None, false)),
        })
    }

    /// Leaves `r` for the thread and wakes it; false if it has ended.
    pub fn post(&self, r: Request) -> bool {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.1 {
            return false;
        }
        st.0 = Some(r);
        signal(&self.fd);
        true
    }

    /// Wakes the thread (at the stop).
    pub fn wake(&self) {
        signal(&self.fd);
    }

    /// Resets the wake-up (the thread is awake now).
    pub fn clear(&self) {
        clear(&self.fd);
    }

    /// The fd the thread polls to be woken.
    pub fn wake_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Whether a request waits.
    pub fn pending(&self) -> bool {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .is_some()
    }

    /// The waiting request.
    pub fn take(&self) -> Option<Request> {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .take()
    }

    /// The thread ends: no request after this; one that came meanwhile
    /// is returned, to be answered as gone.
    pub fn close(&self) -> Option<Request> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.1 = true;
        st.0.take()
    }
}
