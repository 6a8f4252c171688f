//! `--threads`: parallel drain threads, each owning a group of rings with its
//! own unit (built by the same `unit_build` as the serial one: the codec a
//! type parameter, its own codec state and sink) and its own `data.N`, in
//! perf 6.1's directory format: `DIR/data` holds the header, attrs, features
//! (HEADER_DIR_FORMAT = 1) and the synthesized records; `DIR/data.N` are bare
//! record streams with no FINISHED_ROUND (perf's reader merges them by time).
//!
//! ```text
//! main: prepare ─ groups (layout) ─ Destination::begin_for_threads (a hidden
//!       directory, data: side band, checkpoint; or memory) ─ per group: a
//!       Unit over Destination::thread_output (data.N, or SIZE/threads of
//!       memory) ─ start (commit) ─ spawn ─ wait: next(bytes)
//!       Switch: Destination::switch (Pool::ask, mailboxes); Stop: disable,
//!       stop flag, wake, join ─ Destination::finish: LOST_SAMPLES + features
//!       into data (or a last snapshot)
//! drain thread i: pin ─ run::drain_all (ThreadSupervisor: the stop flag,
//!       its mailbox) ─ Unit::end: data.i handed back, for the
//!       end to finish (or salvage, cut back)
//! ```
//!
//! Checkpoints are per thread. A write error ends that thread alone; the
//! directory is finished at the end and the recording fails saying what was
//! kept. Unlike perf, `--threads` works with `--aio` (a sink and io_uring
//! per thread), `--switch-output` and `--flight-recorder`: the main thread
//! asks every thread to switch its data.N or hand over what it retains, and
//! writes each output as a directory (`destination/dir.rs`, `destination/flight.rs`).

use std::io;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;

use super::destination::Destination;
use super::error::io_err;
use super::error::RecordError;
use super::layout::{layout, DrainGroup, SysTopology, ThreadSpec};
use super::mailbox::{clear, eventfd, Mailbox};
use super::recording::Recording;
use super::run::{Drained, Next};
use super::summary::{Summary, ThreadSummary};
use crate::event::cpus;
use crate::event::ring::Ring;
use crate::notes::Notes;
use crate::push::HandedBack;
use job::{Job, Pool, Shared};

mod job;
mod line;

/// The rings' groups, one per drain thread, from `--threads`.
fn groups(spec: &ThreadSpec, ring_cpus: &[u32]) -> Result<Vec<DrainGroup>, RecordError> {
    let online_cpus = cpus::online().unwrap_or_default();
    if let ThreadSpec::Masks(masks) = spec {
        for (cpus_of, affinity) in masks {
            if let Some(c) = cpus_of
                .iter()
                .chain(affinity)
                .find(|c| !online_cpus.contains(c))
            {
                return Err(RecordError::Usage(format!(
                    "--threads: CPU {c} of a mask is not online (online: {}): name online CPUs only",
                    cpus::format_list(&online_cpus)
                )));
            }
        }
    }
    let online = online_cpus.len().max(1);
    layout(spec, ring_cpus, online, &SysTopology).map_err(RecordError::Usage)
}

/// Runs a `--threads` recording to the end.
pub fn record(
    mut rec: Recording<'_>,
    spec: &ThreadSpec,
    mut notes: Notes,
) -> Result<Summary, RecordError> {
    let o = rec.options();
    let ring_cpus = rec.ring_cpus();
    let groups = groups(spec, &ring_cpus)?;
    let n = groups.len();
    let mut dest = Destination::begin_for_threads(&rec, &mut notes)?;
    let jobs = jobs(&mut rec, &groups, &dest, &mut notes)?;
    let max_streams = o.max_size.map(|m| m.saturating_sub(dest.side_band_bytes()));
    let shared = shared(n, max_streams)?;
    let child = rec.start(dest.place_mut())?;
    // Committed: the files now live under the final name.
    let final_dir = dest.threads_dir();
    let (handles, mut pool) = spawn(jobs, &final_dir, &shared, o.realtime)?;

    // Wait for a stop signal, the workload's end, a limit, or every drain
    // thread's end (their tasks all gone); switch or snapshot on the way.
    let mut supervisor = rec.supervisor(child, false);
    let failed = wait(&rec, &mut supervisor, &mut dest, &mut pool, &mut notes).err();
    // Disable first, then tell the threads: their final pass sees all.
    let _ = rec.disable_events();
    shared.stop.store(true, Ordering::Release);
    for m in &shared.mailboxes {
        m.wake();
    }
    let mut ended = supervisor.end(Drained::default());
    let (mut threads, mut handed) = (Vec::new(), Vec::new());
    for (line, drained, h) in join(handles)? {
        ended.drained.add(drained);
        threads.push(line);
        handed.push(h);
    }
    let summary = dest.finish(&rec, handed, ended, notes).map(|s| Summary {
        writes: format!("{} ({n} threads)", s.writes),
        rings: ring_cpus.len(),
        threads,
        ..s
    });
    match (failed, summary) {
        (None, s) => s,
        // A switch failed (a full disk): the current output was finished
        // like a last one, and the error says so.
        (Some(RecordError::Io { what, err }), Ok(s)) => Err(RecordError::WriteFailed {
            path: s.path.clone(),
            err: io::Error::new(err.kind(), format!("{what}: {err}")),
            kept: Some(crate::session::Kept::Everything(s.bytes_written)),
        }),
        (Some(e), _) => Err(e),
    }
}

/// What the main thread and `n` drain threads share; `max_streams`: the
/// bytes the threads' files may hold together (`--max-size`).
fn shared(n: usize, max_streams: Option<u64>) -> Result<Arc<Shared>, RecordError> {
    Ok(Arc::new(Shared {
        stop: AtomicBool::new(false),
        mailboxes: (0..n)
            .map(|_| Mailbox::new())
            .collect::<io::Result<_>>()
            .map_err(io_err("creating an eventfd"))?,
        ended: AtomicUsize::new(0),
        ended_fd: eventfd().map_err(io_err("creating an eventfd"))?,
        bytes: (0..n).map(|_| AtomicU64::new(0)).collect(),
        max_streams,
    }))
}

/// One job a group: its drain unit over `data.i` (or its share of the
/// flight recorder's memory), its rings and their fds.
fn jobs(
    rec: &mut Recording<'_>,
    groups: &[DrainGroup],
    dest: &Destination,
    notes: &mut Notes,
) -> Result<Vec<Job>, RecordError> {
    let o = rec.options();
    let n = groups.len();
    let ring_cpus = rec.ring_cpus();
    let mut slots: Vec<Option<(u32, Ring)>> = rec.take_rings().0.into_iter().map(Some).collect();
    let mut jobs = Vec::with_capacity(n);
    for (i, g) in groups.iter().enumerate() {
        let name = format!("data.{i}");
        let writer = dest.thread_output(rec, i, n)?;
        // A data.N has no FINISHED_ROUND, as perf's.
        let hits = dest.wants_hits(rec);
        // Every unit is built alike: the first one's notes say it.
        let mut built_notes = Notes::new();
        let unit = rec.drain_unit(writer, false, hits, &mut built_notes)?;
        if i == 0 {
            notes.append(&mut built_notes);
        }
        let fds = rec.event_fds(&g.rings);
        let lo = rec.loop_options(rec.features(), o.checkpoint);
        jobs.push(Job {
            unit,
            rings: g
                .rings
                .iter()
                .map(|&r| slots[r].take().expect("one owner"))
                .collect(),
            fds,
            group: g.clone(),
            cpus: (g.rings.iter().map(|&r| ring_cpus[r]))
                .filter(|&c| c != crate::event::open::ANY_CPU)
                .collect(),
            path: PathBuf::from(&name),
            min_bytes: lo.min_bytes,
            min_push: lo.min_push,
            checkpoint: lo.checkpoint,
        });
    }
    Ok(jobs)
}

/// A drain thread, and the file it writes (to name it if it panics).
struct Handle {
    path: PathBuf,
    thread: JoinHandle<(ThreadSummary, Drained, HandedBack)>,
}

/// Starts a drain thread per job, its files under `final_dir`.
fn spawn(
    jobs: Vec<Job>,
    final_dir: &std::path::Path,
    shared: &Arc<Shared>,
    realtime: Option<i32>,
) -> Result<(Vec<Handle>, Pool), RecordError> {
    let (tx, replies) = mpsc::channel();
    let mut handles: Vec<Handle> = Vec::new();
    for (i, mut job) in jobs.into_iter().enumerate() {
        job.path = final_dir.join(&job.path);
        let path = job.path.clone();
        let (sh, tx) = (shared.clone(), tx.clone());
        let h = std::thread::Builder::new()
            .name(format!("perfz-drain-{i}"))
            .spawn(move || {
                // SCHED_RESET_ON_FORK gives a new thread the normal policy:
                // each drain takes -r's priority itself (the main thread's
                // call, which must succeed first, proved it can).
                if let Some(prio) = realtime {
                    let _ = super::recording::set_realtime(prio);
                }
                job.run(sh, i, tx)
            })
            .map_err(io_err("starting a drain thread"))?;
        handles.push(Handle { path, thread: h });
    }
    // Only the threads hold senders: a reply that cannot come is an error.
    drop(tx);
    let pool = Pool {
        shared: shared.clone(),
        replies,
    };
    Ok((handles, pool))
}

/// The main thread's wait: until a stop, a limit, or every drain thread's
/// end, gate or snapshotting on the way. A switch that fails ends it.
fn wait(
    rec: &Recording<'_>,
    supervisor: &mut super::supervisor::SessionSupervisor<'_>,
    dest: &mut Destination,
    pool: &mut Pool,
    notes: &mut Notes,
) -> Result<(), RecordError> {
    let shared = pool.shared.clone();
    while shared.ended.load(Ordering::Acquire) < pool.threads() {
        clear(&shared.ended_fd);
        let streams: u64 = shared.bytes.iter().map(|b| b.load(Ordering::Relaxed)).sum();
        match supervisor.next(dest.side_band_bytes() + streams) {
            Next::Stop => break,
            Next::Switch => {
                // The threads' sample times are theirs (counted at the end).
                dest.switch(rec, pool, Default::default(), notes)?;
                continue;
            }
            Next::Go => {}
        }
        let mut p: Vec<libc::pollfd> = std::iter::once(shared.ended_fd.as_raw_fd())
            .chain(supervisor.channel_fd())
            .map(super::run::pollin)
            .collect();
        // SAFETY: a valid array of pollfd for its length.
        unsafe {
            libc::poll(
                p.as_mut_ptr(),
                p.len() as libc::nfds_t,
                supervisor.poll_timeout_ms(),
            )
        };
    }
    Ok(())
}

/// Waits for every drain thread's end.
fn join(handles: Vec<Handle>) -> Result<Vec<(ThreadSummary, Drained, HandedBack)>, RecordError> {
    let mut ends = Vec::with_capacity(handles.len());
    for Handle { path, thread } in handles {
        let end = thread.join().map_err(|_| RecordError::Io {
            what: format!("the drain thread of {}", path.display()),
            err: io::Error::other("it panicked"),
        })?;
        ends.push(end);
    }
    Ok(ends)
}
