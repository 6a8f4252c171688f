//! Fallback backend: a writer thread doing `pwrite`, buffers passed by value
//! through channels (no copy).

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;

use super::Backend;

type Job = (Box<[u8]>, usize, u64);
type Done = (Box<[u8]>, io::Result<()>);

pub struct ThreadBackend {
    jobs: Option<Sender<Job>>,
    done: Receiver<Done>,
    in_flight: usize,
    thread: Option<JoinHandle<()>>,
}

impl ThreadBackend {
    pub fn new(file: &File) -> io::Result<Self> {
        let file = file.try_clone()?;
        let (jobs, rx) = channel::<Job>();
        let (tx, done) = channel::<Done>();
        let thread = std::thread::Builder::new()
            .name("perfz-writer".into())
            .spawn(move || {
                for (buf, len, offset) in rx {
                    let res = file.write_all_at(&buf[..len], offset);
                    if tx.send((buf, res)).is_err() {
                        break;
                    }
                }
            })?;
        Ok(ThreadBackend {
            jobs: Some(jobs),
            done,
            in_flight: 0,
            thread: Some(thread),
        })
    }

    fn take(&mut self, d: Done) -> io::Result<Box<[u8]>> {
        self.in_flight -= 1;
        d.1?;
        Ok(d.0)
    }
}

impl Backend for ThreadBackend {
    fn submit(&mut self, buf: Box<[u8]>, len: usize, offset: u64) -> io::Result<()> {
        self.jobs
            .as_ref()
            .expect("open")
            .send((buf, len, offset))
            .map_err(|_| io::Error::other("the writer thread is gone"))?;
        self.in_flight += 1;
        Ok(())
    }

    fn reclaim(&mut self, wait: bool) -> io::Result<Option<Box<[u8]>>> {
        if self.in_flight == 0 {
            return Ok(None);
        }
        let d = if wait {
            self.done
                .recv()
                .map_err(|_| io::Error::other("the writer thread is gone"))?
        } else {
            match self.done.try_recv() {
                Ok(d) => d,
                Err(_) => return Ok(None),
            }
        };
        self.take(d).map(Some)
    }

    fn drain(&mut self, free: &mut Vec<Box<[u8]>>) -> io::Result<()> {
        while self.in_flight > 0 {
            let d = self
                .done
                .recv()
                .map_err(|_| io::Error::other("the writer thread is gone"))?;
            free.push(self.take(d)?);
        }
        Ok(())
    }

    fn retarget(&mut self, file: &File) -> io::Result<()> {
        // A writer thread for the new file; the old one ends with its channel.
        let next = ThreadBackend::new(file)?;
        drop(std::mem::replace(self, next));
        Ok(())
    }

    fn name(&self) -> &'static str {
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
