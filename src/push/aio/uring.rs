//! io_uring backend: one `IORING_OP_WRITE` per buffer at its file offset;
//! a short write is resubmitted for the rest.
//!
//! No wait is unbounded: when writes are in flight and none completes for
//! [`STALL`] (an io-wq worker that never runs them has been seen on CI), they
//! are cancelled, written with `pwrite` instead, and every later write of this
//! backend is a `pwrite` too, with one message on stderr saying so. A write
//! that a cancel cannot reach (blocked in the filesystem) is given up after
//! [`GIVE_UP`] stalls: its buffer is leaked to the kernel and the write fails,
//! so the recording ends with what landed instead of hanging.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

use io_uring::{opcode, types, IoUring};

use super::Done;

/// How long writes may be in flight with none completing before they are
/// cancelled and written with `pwrite`.
pub const STALL: Duration = Duration::from_secs(10);

/// How many stall periods a cancelled write may still take before it is
/// given up.
pub const GIVE_UP: u32 = 6;

/// Marks the user data of a cancel request (a write's is its slot index).
const CANCEL: u64 = 1 << 63;

struct Slot {
    buf: Box<[u8]>,
    len: usize,
    offset: u64,
    /// Bytes already written (short writes are resubmitted).
    done: usize,
}

/// Writes through io_uring, one `IORING_OP_WRITE` per buffer; after a stall (`STALL`),
/// with `pwrite` for good.
pub struct UringBackend {
    ring: IoUring,
    fd: i32,
    slots: Vec<Option<Slot>>,
    ready: Vec<Done>,
    stall: Duration,
    /// When the ring stalled: what it held was cancelled then, and every
    /// write from then on is a `pwrite`.
    stalled: Option<Instant>,
    /// Keeps the fd open as long as writes may be in flight; the `pwrite`s
    /// after a stall go to it.
    file: File,
    /// Tests: the next write is a poll of this pipe's read end instead, a
    /// request that never completes, as a stuck worker's write.
    #[cfg(test)]
    hold: Option<Hold>,
}

impl UringBackend {
    /// Sets up a ring; fails where io_uring is not available (old kernel,
    /// seccomp, io_uring_disabled sysctl) or cannot bound a wait (before
    /// Linux 5.11: no IORING_FEAT_EXT_ARG).
    pub fn new(file: &File) -> io::Result<Self> {
        let ring = IoUring::new(2 * super::MAX_BUFFERS as u32)?;
        if !ring.params().is_feature_ext_arg() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "this kernel's io_uring cannot time out a wait (IORING_FEAT_EXT_ARG, Linux 5.11)",
            ));
        }
        let file = file.try_clone()?;
        Ok(UringBackend {
            ring,
            fd: file.as_raw_fd(),
            slots: Vec::new(),
            ready: Vec::new(),
            stall: STALL,
            stalled: None,
            file,
            #[cfg(test)]
            hold: None,
        })
    }

    /// Tests: the next write never completes (and with `cancellable` false,
    /// no cancel is sent for it), and a stall is declared after `stall`.
    #[cfg(test)]
    pub(super) fn hold_next_write(&mut self, stall: Duration, cancellable: bool) {
        use std::os::fd::FromRawFd;
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two fds into the array it is given.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: both fds were just opened and are owned by nothing else.
        let (r, w) = unsafe {
            (
                std::os::fd::OwnedFd::from_raw_fd(fds[0]),
                std::os::fd::OwnedFd::from_raw_fd(fds[1]),
            )
        };
        self.hold = Some(Hold {
            _w: w,
            r,
            armed: true,
            slot: None,
            cancellable,
        });
        self.stall = stall;
    }

    /// Whether a stall switched this backend to `pwrite`.
    pub fn stalled(&self) -> bool {
        self.stalled.is_some()
    }

    fn entry(&mut self, idx: usize) -> io_uring::squeue::Entry {
        #[cfg(test)]
        if let Some(h) = self.hold.as_mut().filter(|h| h.armed) {
            h.armed = false;
            h.slot = Some(idx);
            return opcode::PollAdd::new(types::Fd(h.r.as_raw_fd()), libc::POLLIN as u32)
                .build()
                .user_data(idx as u64);
        }
        let s = self.slots[idx].as_ref().expect("queued slot");
        let rest = s.len - s.done;
        opcode::Write::new(types::Fd(self.fd), s.buf[s.done..].as_ptr(), rest as u32)
            .offset(s.offset + s.done as u64)
            .build()
            .user_data(idx as u64)
    }

    fn queue(&mut self, idx: usize) -> io::Result<()> {
        let entry = self.entry(idx);
        // SAFETY: the entry points into the slot's buffer, a heap buffer owned
        // by `self.slots` until its completion is reaped in `reap`; the slot
        // is not touched or dropped before then (Drop drains the ring first).
        unsafe { self.push(&entry)? };
        self.ring.submit()?;
        Ok(())
    }

    /// # Safety
    /// Whatever `entry` points to outlives the request.
    unsafe fn push(&mut self, entry: &io_uring::squeue::Entry) -> io::Result<()> {
        // SAFETY: the caller's promise.
        unsafe {
            self.ring
                .submission()
                .push(entry)
                .map_err(|_| io::Error::other("io_uring submission queue full"))
        }
    }

    /// Waits for a completion, at most `stall`; when none came, the writes in
    /// flight are cancelled (once) so that they come back to be written with
    /// `pwrite`.
    fn wait(&mut self) -> io::Result<()> {
        let ts = types::Timespec::from(self.stall);
        let args = types::SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(1, &args) {
            Ok(_) => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => self.cancel_all(),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn cancel_all(&mut self) -> io::Result<()> {
        if let Some(since) = self.stalled {
            // Cancelled already: what is still out runs in the kernel
            // (blocked in the filesystem), which a pwrite would wait for too.
            if since.elapsed() >= self.stall * GIVE_UP {
                self.give_up(since.elapsed());
            }
            return Ok(());
        }
        self.stalled = Some(Instant::now());
        let out: Vec<usize> = (0..self.slots.len())
            .filter(|&i| self.slots[i].is_some())
            .collect();
        // The one message of a backend that otherwise says nothing: the
        // recording goes on, but no longer asynchronously.
        say!(
            "perfz: {} io_uring write(s) did not complete in {:.1} s; cancelled, written with pwrite, and so is every later write of this output (--aio-backend thread avoids io_uring)",
            out.len(),
            self.stall.as_secs_f64()
        );
        for idx in out {
            #[cfg(test)]
            if self
                .hold
                .as_ref()
                .is_some_and(|h| !h.cancellable && h.slot == Some(idx))
            {
                continue;
            }
            let entry = opcode::AsyncCancel::new(idx as u64)
                .build()
                .user_data(CANCEL | idx as u64);
            // SAFETY: a cancel request points to nothing.
            unsafe { self.push(&entry)? };
        }
        self.ring.submit()?;
        Ok(())
    }

    /// The writes still out after the cancels fail: their buffers are leaked
    /// (the kernel may still read them) and replaced, and a late completion
    /// finds no slot.
    fn give_up(&mut self, waited: Duration) {
        for idx in 0..self.slots.len() {
            let Some(s) = self.slots[idx].take() else {
                continue;
            };
            let cap = s.buf.len();
            Box::leak(s.buf);
            self.ready.push(Done {
                buf: vec![0u8; cap].into_boxed_slice(),
                offset: s.offset,
                len: s.len,
                result: Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "an io_uring write at offset {} was stuck in the kernel for {:.1} s and given up",
                        s.offset,
                        waited.as_secs_f64()
                    ),
                )),
            });
        }
    }

    /// Writes what is left of a slot with `pwrite` and settles it.
    fn write_rest(&mut self, idx: usize) {
        let s = self.slots[idx].as_ref().expect("slot to write");
        let r = self
            .file
            .write_all_at(&s.buf[s.done..s.len], s.offset + s.done as u64);
        self.settle(idx, r);
    }

    /// A slot's write is done: its buffer goes to `ready` with `result`.
    fn settle(&mut self, idx: usize, result: io::Result<()>) {
        let s = self.slots[idx].take().expect("settled slot");
        self.ready.push(Done {
            buf: s.buf,
            offset: s.offset,
            len: s.len,
            result,
        });
    }

    /// Moves completed writes to `ready`; resubmits short ones.
    fn reap(&mut self) {
        // Collected first (no allocation: at most one entry per slot, and
        // there are at most 2 * MAX_BUFFERS slots) because resubmitting needs
        // the ring while the completion queue borrows it.
        let mut done = [(0u64, 0i32); 2 * super::MAX_BUFFERS];
        let mut n = 0;
        for c in self.ring.completion() {
            done[n] = (c.user_data(), c.result());
            n += 1;
            if n == done.len() {
                break;
            }
        }
        // Every reaped completion is settled, even after an error: a slot
        // left pending would have drain() wait forever.
        for &(data, res) in &done[..n] {
            if data & CANCEL != 0 {
                // A cancel's own answer; the write it names answers for itself.
                continue;
            }
            let idx = data as usize;
            if self.slots.get(idx).is_none_or(Option::is_none) {
                // A write given up on, completing after all.
                continue;
            }
            if self.stalled.is_some() && (res == -libc::ECANCELED || res == -libc::EINTR) {
                self.write_rest(idx);
                continue;
            }
            if res <= 0 {
                // The write failed (EFBIG, ENOSPC, ...): the buffer comes back
                // all the same, so nothing waits for it any more.
                let e = if res == 0 {
                    io::ErrorKind::WriteZero.into()
                } else {
                    io::Error::from_raw_os_error(-res)
                };
                self.settle(idx, Err(e));
                continue;
            }
            let slot = self.slots[idx].as_mut().expect("completed slot");
            slot.done += res as usize;
            if slot.done == slot.len {
                self.settle(idx, Ok(()));
            } else if self.stalled.is_some() {
                self.write_rest(idx);
            } else if let Err(e) = self.queue(idx) {
                self.settle(idx, Err(e));
            }
        }
    }

    fn pending(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }
}

/// Tests: a request in place of a write that never completes.
#[cfg(test)]
struct Hold {
    r: std::os::fd::OwnedFd,
    _w: std::os::fd::OwnedFd,
    /// The next write is held.
    armed: bool,
    /// The slot held.
    slot: Option<usize>,
    cancellable: bool,
}

impl UringBackend {
    pub(super) fn submit(&mut self, buf: Box<[u8]>, len: usize, offset: u64) -> io::Result<()> {
        let idx = match self.slots.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                self.slots.push(None);
                self.slots.len() - 1
            }
        };
        self.slots[idx] = Some(Slot {
            buf,
            len,
            offset,
            done: 0,
        });
        if self.stalled.is_some() {
            self.write_rest(idx);
            return Ok(());
        }
        if let Err(e) = self.queue(idx) {
            let why = io::Error::new(e.kind(), format!("not submitted: {e}"));
            self.settle(idx, Err(why));
            return Err(e);
        }
        Ok(())
    }

    pub(super) fn reclaim(&mut self, wait: bool) -> io::Result<Option<Done>> {
        self.reap();
        while wait && self.ready.is_empty() && self.pending() > 0 {
            self.wait()?;
            self.reap();
        }
        Ok(self.ready.pop())
    }

    pub(super) fn drain(&mut self, done: &mut Vec<Done>) -> io::Result<()> {
        // Waits for every write even after one failed: the kernel may still be
        // reading the other buffers, which must outlive that.
        let mut first_err = None;
        while self.pending() > 0 {
            if let Err(e) = self.wait() {
                first_err.get_or_insert(e);
                break; // the ring itself is broken; nothing completes any more
            }
            self.reap();
        }
        done.append(&mut self.ready);
        first_err.map_or(Ok(()), Err)
    }

    pub(super) fn retarget(&mut self, file: &File) -> io::Result<()> {
        self.file = file.try_clone()?;
        self.fd = self.file.as_raw_fd();
        Ok(())
    }

    pub(super) fn name(&self) -> &'static str {
        "io_uring"
    }
}

impl Drop for UringBackend {
    fn drop(&mut self) {
        // Buffers must outlive the kernel's use of them.
        let mut sink = Vec::new();
        let _ = self.drain(&mut sink);
    }
}
