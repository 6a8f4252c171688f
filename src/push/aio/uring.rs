//! io_uring backend: one `IORING_OP_WRITE` per buffer at its file offset.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

use io_uring::{opcode, types, IoUring};

use super::{Backend, Done};

struct Slot {
    buf: Box<[u8]>,
    len: usize,
    offset: u64,
    /// Bytes already written (short writes are resubmitted).
    done: usize,
}

pub struct UringBackend {
    ring: IoUring,
    fd: i32,
    slots: Vec<Option<Slot>>,
    ready: Vec<Done>,
    /// Keeps the fd open as long as writes may be in flight.
    _file: File,
}

impl UringBackend {
    /// Sets up a ring; fails where io_uring is not available (old kernel,
    /// seccomp, io_uring_disabled sysctl).
    pub fn new(file: &File) -> io::Result<Self> {
        let ring = IoUring::new(2 * super::MAX_BUFFERS as u32)?;
        let file = file.try_clone()?;
        Ok(UringBackend {
            ring,
            fd: file.as_raw_fd(),
            slots: Vec::new(),
            ready: Vec::new(),
            _file: file,
        })
    }

    fn queue(&mut self, idx: usize) -> io::Result<()> {
        let s = self.slots[idx].as_ref().expect("queued slot");
        let rest = s.len - s.done;
        let entry = opcode::Write::new(types::Fd(self.fd), s.buf[s.done..].as_ptr(), rest as u32)
            .offset(s.offset + s.done as u64)
            .build()
            .user_data(idx as u64);
        // SAFETY: the entry points into `s.buf`, a heap buffer owned by
        // `self.slots` until its completion is reaped in `reap`; the slot is
        // not touched or dropped before then (Drop drains the ring first).
        unsafe {
            self.ring
                .submission()
                .push(&entry)
                .map_err(|_| io::Error::other("io_uring submission queue full"))?;
        }
        self.ring.submit()?;
        Ok(())
    }

    /// A slot's write is done: its buffer goes to `ready` with `result`.
    fn settle(&mut self, idx: usize, result: io::Result<()>) {
        let s = self.slots[idx].take().expect("settled slot");
        self.ready.push(Done {
            buf: s.buf,
            offset: s.offset,
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
        for &(idx, res) in &done[..n] {
            let idx = idx as usize;
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
            if slot.done < slot.len {
                if let Err(e) = self.queue(idx) {
                    self.settle(idx, Err(e));
                }
            } else {
                self.settle(idx, Ok(()));
            }
        }
    }

    fn pending(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }
}

impl Backend for UringBackend {
    fn submit(&mut self, buf: Box<[u8]>, len: usize, offset: u64) -> io::Result<()> {
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
        if let Err(e) = self.queue(idx) {
            let why = io::Error::new(e.kind(), format!("not submitted: {e}"));
            self.settle(idx, Err(why));
            return Err(e);
        }
        Ok(())
    }

    fn reclaim(&mut self, wait: bool) -> io::Result<Option<Done>> {
        self.reap();
        while wait && self.ready.is_empty() && self.pending() > 0 {
            self.ring.submit_and_wait(1)?;
            self.reap();
        }
        Ok(self.ready.pop())
    }

    fn drain(&mut self, done: &mut Vec<Done>) -> io::Result<()> {
        // Waits for every write even after one failed: the kernel may still be
        // reading the other buffers, which must outlive that.
        let mut first_err = None;
        while self.pending() > 0 {
            if let Err(e) = self.ring.submit_and_wait(1) {
                if e.kind() != io::ErrorKind::Interrupted {
                    first_err.get_or_insert(e);
                    break; // the ring itself is broken; nothing completes any more
                }
            }
            self.reap();
        }
        done.append(&mut self.ready);
        first_err.map_or(Ok(()), Err)
    }

    fn retarget(&mut self, file: &File) -> io::Result<()> {
        self._file = file.try_clone()?;
        self.fd = self._file.as_raw_fd();
        Ok(())
    }

    fn name(&self) -> &'static str {
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
