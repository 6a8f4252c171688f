//! Fallback backend: a writer thread doing `pwrite`, buffers passed by value
//! through channels (no copy).

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;

use super::Done;

type WriteJob = (Box<[u8]>, usize, u64);

/// Writes on one `perfz-writer` thread with `pwrite`, in submission order.
pub struct ThreadBackend {
    jobs: Option<Sender<WriteJob>>,
    done: Receiver<Done>,
    in_flight: usize,
    /// Buffers whose job could not be sent, given back as failed writes.
    unsent: Vec<Done>,
    thread: Option<JoinHandle<()>>,
}

impl ThreadBackend {
    /// Starts the writer thread on a clone of `file`'s descriptor.
    pub fn new(file: &File) -> io::Result<Self> {
        let file = file.try_clone()?;
        let (jobs, rx) = channel::<WriteJob>();
        let (tx, done) = channel::<Done>();
        let thread = std::thread::Builder::new()
            .name("perfz-writer".into())
            .spawn(move || {
                for (buf, len, offset) in rx {
                    let result = file.write_all_at(&buf[..len], offset);
                    if tx
                        .send(Done {
                            buf,
                            offset,
                            len,
                            result,
                        })
                        .is_err()
                    {
                        break;
                    }
                }
            })?;
        Ok(ThreadBackend {
            jobs: Some(jobs),
            done,
            in_flight: 0,
            unsent: Vec::new(),
            thread: Some(thread),
        })
    }
}

fn gone() -> io::Error {
    io::Error::other("the writer thread is gone")
}

impl ThreadBackend {
    pub(super) fn submit(&mut self, buf: Box<[u8]>, len: usize, offset: u64) -> io::Result<()> {
        if let Err(e) = self.jobs.as_ref().expect("open").send((buf, len, offset)) {
            let (buf, len, offset) = e.0;
            self.unsent.push(Done {
                buf,
                offset,
                len,
                result: Err(gone()),
            });
            return Err(gone());
        }
        self.in_flight += 1;
        Ok(())
    }

    pub(super) fn reclaim(&mut self, wait: bool) -> io::Result<Option<Done>> {
        if let Some(d) = self.unsent.pop() {
            return Ok(Some(d));
        }
        if self.in_flight == 0 {
            return Ok(None);
        }
        let d = if wait {
            self.done.recv().map_err(|_| gone())?
        } else {
            match self.done.try_recv() {
                Ok(d) => d,
                Err(_) => return Ok(None),
            }
        };
        self.in_flight -= 1;
        Ok(Some(d))
    }

    pub(super) fn drain(&mut self, done: &mut Vec<Done>) -> io::Result<()> {
        done.append(&mut self.unsent);
        while self.in_flight > 0 {
            done.push(self.done.recv().map_err(|_| gone())?);
            self.in_flight -= 1;
        }
        Ok(())
    }

    pub(super) fn retarget(&mut self, file: &File) -> io::Result<()> {
        // A writer thread for the new file; the old one ends with its channel.
        let next = ThreadBackend::new(file)?;
        drop(std::mem::replace(self, next));
        Ok(())
    }

    pub(super) fn name(&self) -> &'static str {
        "pwrite thread"
    }
}

impl Drop for ThreadBackend {
    fn drop(&mut self) {
        let mut sink = Vec::new();
        let _ = self.drain(&mut sink);
        self.jobs.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
