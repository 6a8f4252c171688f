//! `--switch-output-event EVENT`: an event whose every sample switches the
//! output as SIGUSR2 does (perf's side-band evlist and thread). It is
//! opened on the recording's tasks and CPUs (following children where
//! the recording does), each CPU's samples in a ring of its own, which a
//! thread waits on; a sample there sends perfz SIGUSR2, so the switch
//! takes the signal's one path.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::event::attr_build::{build_attr, AttrOptions};
use crate::event::{sys, EventSpec, Ring};

/// How long the thread waits for a sample before it looks whether the
/// recording ended.
const POLL_MS: i32 = 100;

/// The switch events, open, and the thread that watches them.
pub struct SwitchEvents {
    fds: Vec<OwnedFd>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl SwitchEvents {
    /// Opens `events` (every sample of each: period 1, a wake-up each) for
    /// `pids` on `cpus` as the recording's events are (`opts`, less their
    /// side band), and starts watching them.
    pub fn open(
        events: &[EventSpec],
        opts: &AttrOptions,
        cpus: &[u32],
        pids: &[i32],
    ) -> std::io::Result<SwitchEvents> {
        let mut o = *opts;
        o.sampling = crate::event::Sampling::Period(1);
        o.sampling_explicit = true;
        o.call_graph = crate::event::CallGraph::None;
        o.extra = Default::default();
        o.extra.wakeup_events = 1;
        let (mut fds, mut rings) = (Vec::new(), Vec::new());
        for &cpu in cpus {
            let mut leader: Option<usize> = None;
            for ev in events {
                let attr = build_attr(ev, &o, false);
                for &pid in pids {
                    let fd = sys::open(&attr, pid, cpu as i32, -1)?;
                    match leader {
                        None => {
                            rings.push(Ring::map(&fd, 1)?);
                            leader = Some(fds.len());
                        }
                        Some(l) => sys::set_output(&fd, &fds[l])?,
                    }
                    fds.push(fd);
                }
            }
        }
        let polled: Vec<OwnedFd> = rings_fds(&fds, cpus.len(), fds.len() / cpus.len().max(1))?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = Arc::clone(&stop);
            std::thread::Builder::new()
                .name("perfz-switch-event".into())
                .spawn(move || watch(polled, rings, &stop))?
        };
        Ok(SwitchEvents {
            fds,
            stop,
            thread: Some(thread),
        })
    }

    /// Enables the events (with the recording's, where they do not wait
    /// for an exec).
    pub fn enable(&self) -> std::io::Result<()> {
        self.fds.iter().try_for_each(sys::enable)
    }
}

impl Drop for SwitchEvents {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Copies of each ring's first fd (`per_ring` fds per CPU, in order), for
/// the watching thread to poll.
fn rings_fds(fds: &[OwnedFd], rings: usize, per_ring: usize) -> std::io::Result<Vec<OwnedFd>> {
    (0..rings)
        .map(|r| fds[r * per_ring].as_fd().try_clone_to_owned())
        .collect()
}

/// Waits on `fds` (one per ring of `rings`) until `stop`; each time a
/// ring holds a sample, gives it back and sends this process SIGUSR2.
fn watch(fds: Vec<OwnedFd>, mut rings: Vec<Ring>, stop: &AtomicBool) {
    let mut polls: Vec<libc::pollfd> = fds
        .iter()
        .map(|f| libc::pollfd {
            fd: f.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    while !stop.load(Ordering::Acquire) {
        // SAFETY: `polls` is a live array of `polls.len()` pollfds whose
        // fds stay open (owned by `fds`) for the call.
        let n = unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as _, POLL_MS) };
        if n <= 0 {
            continue;
        }
        let mut fired = false;
        for r in &mut rings {
            let head = r.head();
            fired |= head != r.tail();
            r.consume(head);
        }
        if fired {
            // SAFETY: kill has no memory effects; it signals this process,
            // whose SIGUSR2 handler sets the switch flag.
            unsafe { libc::kill(libc::getpid(), libc::SIGUSR2) };
        }
    }
}
