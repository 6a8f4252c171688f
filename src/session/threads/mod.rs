//! `--threads`: parallel drain threads, each owning a group of rings with its
//! own codec instance (monomorphized, as the serial unit: the same
//! [`glue`](super::glue) builds it) and its own `data.N` file, written as
//! perf 6.1's directory format: `DIR/data` holds the header, attrs, features
//! (HEADER_DIR_FORMAT = 1) and the synthesized records; `DIR/data.N` are bare
//! record streams with no FINISHED_ROUND (perf's reader merges them by time).
//!
//! ```text
//! main: prepare ─ Output::open_dir ─ data (FileWriter: side band, checkpoint)
//!       ─ per group: glue ─▶ Box<dyn Drain + Send> over data.N ─ spawn
//!       ─ start ─ wait (signals, workload, threads) ─ stop ─ join
//!       ─ LOST_SAMPLES + features into data
//! drain thread i: pin ─ run::drain_loop(its rings) ─ finish data.i
//! ```
//!
//! Unlike perf, `--threads` works with `--aio`: each thread has its own
//! async buffers and io_uring (or pwrite thread).

use std::io;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::error::io_err;
use super::glue::Writer;
use super::layout::{layout, Group, SysTopology, ThreadSpec};
use super::output::{create_in, Output};
use super::recording::{io_err_context, side_band_hits, Recording};
use super::run::{Drained, SessionControl};
use super::{RecordError, Summary};
use crate::event::cpus;
use crate::event::ring::Ring;
use crate::format::data_stream::DataStreamWriter;
use crate::format::writer::{FileWriter, RecordSink};
use finish::{dir_features, finish};
use job::{eventfd, signal, Job, Shared, ThreadEnd};

mod finish;
mod job;

pub use finish::ThreadSummary;

/// Runs a `--threads` recording to the end.
pub fn record(
    mut rec: Recording<'_>,
    spec: &ThreadSpec,
    mut notes: Vec<String>,
) -> Result<Summary, RecordError> {
    let o = rec.o;
    let prepared = &mut rec.prepared;
    let ring_cpus: Vec<u32> = prepared.set.rings.iter().map(|(c, _)| *c).collect();
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
    let groups: Vec<Group> =
        layout(spec, &ring_cpus, online, &SysTopology).map_err(RecordError::Usage)?;
    let ring_size = prepared.ring_size();

    // The directory, `data` with the side band, and one data.N per thread.
    let mut out = Output::open_dir(&o.output).map_err(RecordError::Output)?;
    let dir = out.current_path().expect("a directory").to_path_buf();
    let mut main = FileWriter::new(
        create_in(&dir, "data").map_err(RecordError::Output)?,
        &rec.prepared.set.attrs,
    )?;
    let side_band = rec.side_band(&mut notes);
    main.write_records(&side_band)
        .map_err(|e| RecordError::Output(io_err_context(e, "writing the side band")))?;
    let side_band_bytes = main.data_size();
    let sb_hits = side_band_hits(&side_band);
    // data is whole from here: a crash leaves a directory perf opens.
    main.checkpoint(&dir_features(&rec.features, rec.announced_codec()))
        .map_err(|e| RecordError::Output(io_err_context(e, "writing data")))?;

    let mut slots: Vec<Option<(u32, Ring)>> = std::mem::take(&mut rec.prepared.set.rings)
        .into_iter()
        .map(Some)
        .collect();
    let mut jobs = Vec::with_capacity(groups.len());
    for (i, g) in groups.iter().enumerate() {
        let name = format!("data.{i}");
        let file = create_in(&dir, &name).map_err(RecordError::Output)?;
        let (drain, glue_notes) = rec.drain_unit(
            Writer::Stream(DataStreamWriter::new(file)),
            false,
            o.build_ids.table,
        )?;
        if i == 0 {
            notes.extend(glue_notes);
        }
        let fds = rec
            .prepared
            .set
            .fds
            .iter()
            .filter(|f| g.rings.contains(&f.ring))
            .map(|f| f.fd.as_raw_fd())
            .collect();
        jobs.push(Job {
            drain,
            rings: g
                .rings
                .iter()
                .map(|&r| slots[r].take().expect("one owner"))
                .collect(),
            fds,
            affinity: g.affinity.clone(),
            path: PathBuf::from(&name),
            min_bytes: o.mmap_flush.max(1) as u64,
            min_push: (ring_size / 16) as u64,
            checkpoint: o.checkpoint,
        });
    }
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        wake: eventfd().map_err(io_err("creating an eventfd"))?,
        ended: AtomicUsize::new(0),
        ended_fd: eventfd().map_err(io_err("creating an eventfd"))?,
        bytes: (0..jobs.len()).map(|_| AtomicU64::new(0)).collect(),
        max_streams: o.max_size.map(|m| m.saturating_sub(side_band_bytes)),
    });

    let child = rec.start(&mut out)?;
    // Committed: the files now live under the final name.
    let final_dir = out.current_path().expect("a directory").to_path_buf();
    let mut handles: Vec<(Group, PathBuf, JoinHandle<ThreadEnd>)> = Vec::new();
    for (i, (mut job, g)) in jobs.into_iter().zip(groups).enumerate() {
        job.path = final_dir.join(&job.path);
        let path = job.path.clone();
        let sh = shared.clone();
        let h = std::thread::Builder::new()
            .name(format!("perfz-drain-{i}"))
            .spawn(move || job.run(sh, i))
            .map_err(io_err("starting a drain thread"))?;
        handles.push((g, path, h));
    }

    // Wait for a stop signal, the workload's end, or every drain thread's
    // end (their tasks all gone).
    let channel = rec.channel.take();
    let mut ctl = rec.control(channel, child, false);
    let n = handles.len();
    let over_max = |ctl: &mut SessionControl<'_>| {
        let Some(max) = o.max_size else {
            return false;
        };
        let total = side_band_bytes
            + shared
                .bytes
                .iter()
                .map(|b| b.load(Ordering::Relaxed))
                .sum::<u64>();
        if total < max {
            return false;
        }
        ctl.limits.reason = Some(format!("--max-size reached ({total} bytes written)"));
        true
    };
    while shared.ended.load(Ordering::Acquire) < n && !ctl.poll_ends() && !over_max(&mut ctl) {
        let mut p: Vec<libc::pollfd> = std::iter::once(shared.ended_fd.as_raw_fd())
            .chain(ctl.channel_fd())
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: a valid array of pollfd for its length.
        unsafe {
            libc::poll(
                p.as_mut_ptr(),
                p.len() as libc::nfds_t,
                ctl.poll_timeout_ms(),
            )
        };
    }
    // Disable first, then tell the threads: their final pass sees all.
    let _ = rec.prepared.set.disable();
    shared.stop.store(true, Ordering::Release);
    signal(&shared.wake);
    let mut ends = Vec::with_capacity(n);
    for (g, path, h) in handles {
        let end = h.join().map_err(|_| RecordError::Io {
            what: format!("the drain thread of {}", path.display()),
            err: io::Error::other("it panicked"),
        })?;
        ends.push((g, path, end));
    }
    let ended = ctl.end(Drained::default());
    finish(
        &rec,
        &out,
        main,
        &ring_cpus,
        ends,
        ended,
        notes,
        (side_band_bytes, sb_hits),
    )
}
