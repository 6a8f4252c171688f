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
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::drain::{Drain, DrainReport};
use super::error::{io_err, Kept};
use super::glue::{Glue, Writer};
use super::layout::{layout, Group, SysTopology, ThreadSpec};
use super::output::{create_in, cut_back, Output};
use super::run::{self, Control, Drained, LoopOptions, Next, SessionControl};
use super::setup::Prepared;
use super::{io_err_context, RecordError, RecordOptions, Summary};
use crate::event::cpus;
use crate::event::ring::Ring;
use crate::format::data_stream::DataStreamWriter;
use crate::format::writer::{FileWriter, RecordSink};
use crate::format::{feat, CompressedInfo, FeatureSet, FormatError};
use crate::push::scan::RecordCounts;
use crate::push::Copies;
use crate::synth;

/// What one drain thread did, for the summary and `--stats-json`.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadSummary {
    /// Its data file, `data.N`.
    pub file: String,
    /// The CPUs whose rings it drained (empty for per-thread rings).
    pub cpus: Vec<u32>,
    pub rings: usize,
    /// The CPUs it was pinned to (empty: not pinned).
    pub affinity: Vec<u32>,
    pub wakeups: u64,
    pub samples: u64,
    pub records: u64,
    pub lost_events: u64,
    pub ring_bytes: u64,
    pub bytes_written: u64,
    pub compressed_bytes: u64,
    /// CPU time the thread used (user + system).
    pub cpu_seconds: f64,
    pub max_ring_fill: f64,
    pub near_full_pushes: u64,
    pub checkpoints: u64,
    /// Its write error, if it had one, and what it kept.
    pub error: Option<String>,
}

/// What a drain thread hands back.
struct ThreadEnd {
    drained: Drained,
    report: DrainReport,
    /// What the build-id pass needs from this thread's rings.
    hits: Option<crate::push::scan::Hits>,
    /// After a failed write: what the thread kept of its data file.
    kept: Option<Kept>,
    /// Finishing its data file failed.
    finish_error: Option<io::Error>,
    cpu_seconds: f64,
}

/// What the main thread and the drain threads share.
struct Shared {
    stop: AtomicBool,
    /// Written once to wake every drain thread's poll at the stop.
    wake: OwnedFd,
    /// Drain threads that have ended, and an eventfd the main thread waits
    /// on for them.
    ended: AtomicUsize,
    ended_fd: OwnedFd,
    /// Bytes each thread has written to its data.N (`--max-size`).
    bytes: Vec<AtomicU64>,
    /// `--max-size` less what `data` holds: the thread whose pass crosses
    /// it wakes the main thread at once (not at its next 100 ms check), so
    /// the files pass the limit by at most about one ring per thread.
    max_streams: Option<u64>,
}

fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: eventfd has no memory effects; the fd is checked and ours.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a new descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn signal(fd: &OwnedFd) {
    let one = 1u64.to_ne_bytes();
    // SAFETY: writes 8 bytes from a live buffer to our eventfd.
    unsafe { libc::write(fd.as_raw_fd(), one.as_ptr().cast(), 8) };
}

/// A drain thread's control: stop when the main thread says so.
struct ThreadControl(Arc<Shared>, usize);

impl Control for ThreadControl {
    fn stop(&mut self, drain: &dyn Drain, _: &RecordCounts) -> Next {
        // For --max-size, summed by the main thread (a count, no ordering).
        self.0.bytes[self.1].store(drain.bytes_written(), Ordering::Relaxed);
        if let Some(max) = self.0.max_streams {
            let total: u64 = self.0.bytes.iter().map(|b| b.load(Ordering::Relaxed)).sum();
            if total >= max {
                signal(&self.0.ended_fd);
            }
        }
        // Acquire pairs with the main thread's release store: the events
        // were disabled before, so the final pass sees everything.
        if self.0.stop.load(Ordering::Acquire) {
            Next::Stop
        } else {
            Next::Go
        }
    }
    fn hung_up(&mut self) {}
    fn wake_fd(&self) -> Option<RawFd> {
        Some(self.0.wake.as_raw_fd())
    }
}

fn pin(cpus: &[u32]) -> io::Result<()> {
    if cpus.is_empty() {
        return Ok(());
    }
    // SAFETY: cpu_set_t is plain data; zeroed is an empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        // SAFETY: CPU_SET writes a bit inside `set` (it checks the bound).
        unsafe { libc::CPU_SET(c as usize, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed; 0 = this thread.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// Everything a drain thread owns.
struct Job {
    drain: Box<dyn Drain + Send>,
    rings: Vec<(u32, Ring)>,
    fds: Vec<RawFd>,
    affinity: Vec<u32>,
    path: PathBuf,
    min_bytes: u64,
    min_push: u64,
    checkpoint: Option<Duration>,
}

impl Job {
    fn run(mut self, shared: Arc<Shared>, index: usize) -> ThreadEnd {
        // A CPU that went offline only costs the pinning; say nothing.
        let _ = pin(&self.affinity);
        let features = FeatureSet::default();
        let drained = run::drain_loop(
            self.drain.as_mut(),
            &mut self.rings,
            &self.fds,
            &mut ThreadControl(shared.clone(), index),
            &LoopOptions {
                min_bytes: self.min_bytes,
                min_push: self.min_push,
                checkpoint: self.checkpoint,
                features: &features,
            },
        );
        let report = self.drain.report();
        let hits = self.drain.take_hits();
        let (mut kept, mut finish_error) = (None, None);
        if drained.write_error.is_some() {
            let end = self.drain.checkpoint_end();
            kept = match self.drain.salvage(&features) {
                Ok(()) => Some(Kept::Everything(file_len(&self.path))),
                Err(_) => cut_back(&self.path, end),
            };
        } else if let Err(e) = self.drain.finish(&features) {
            finish_error = Some(match e {
                FormatError::Io(e) => e,
                other => io::Error::other(other),
            });
        }
        let cpu_seconds = thread_cpu_seconds();
        // Release: everything above happens before the main thread sees
        // the count (it then joins, which orders the rest).
        shared.ended.fetch_add(1, Ordering::Release);
        signal(&shared.ended_fd);
        ThreadEnd {
            drained,
            report,
            hits,
            kept,
            finish_error,
            cpu_seconds,
        }
    }
}

fn file_len(p: &std::path::Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}

/// HEADER_COMPRESSED for `data`, from every thread's stream: the same codec
/// and level, the largest mmap_len, the ratio over all of them.
fn combined_compressed(reports: &[DrainReport]) -> Option<CompressedInfo> {
    let mut info = reports.iter().find_map(|r| r.compressed)?;
    let raw: u64 = reports.iter().map(|r| r.ring_bytes).sum();
    let comp: u64 = reports.iter().map(|r| r.compressed_bytes).sum();
    info.mmap_len = reports
        .iter()
        .filter_map(|r| r.compressed.map(|c| c.mmap_len))
        .max()
        .unwrap_or(info.mmap_len);
    info.ratio = if comp == 0 {
        0
    } else {
        (raw as f64 / comp as f64 + 0.5) as u32
    };
    Some(info)
}

fn dir_features(features: &FeatureSet, compressed: Option<CompressedInfo>) -> FeatureSet {
    let mut f = features.clone();
    f.set(feat::DIR_FORMAT, 1u64.to_le_bytes().to_vec());
    if let Some(c) = compressed {
        f.set_compressed(c);
    }
    f
}

fn add_copies(a: Option<Copies>, b: Option<Copies>) -> Option<Copies> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Copies {
            ring_bytes: a.ring_bytes + b.ring_bytes,
            memcpy_bytes: a.memcpy_bytes + b.memcpy_bytes,
            codec_in_bytes: a.codec_in_bytes + b.codec_in_bytes,
            written_bytes: a.written_bytes + b.written_bytes,
        }),
        (a, b) => a.or(b),
    }
}

/// Runs a `--threads` recording to the end.
pub fn record(
    o: &RecordOptions,
    spec: &ThreadSpec,
    mut prepared: Prepared,
    mut notes: Vec<String>,
    started: Instant,
    channel: Option<super::control::Channel>,
) -> Result<Summary, RecordError> {
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
    let stack_tail = prepared.stack_tail(o.keep_stack_padding, &mut notes);

    // The directory, `data` with the side band, and one data.N per thread.
    let mut out = Output::open_dir(&o.output).map_err(RecordError::Output)?;
    let dir = out.current_path().expect("a directory").to_path_buf();
    let mut features = synth::features::session_features(&prepared.set.attrs, &o.argv);
    synth::features::event_features(&mut features, &o.events)
        .map_err(io_err("describing the events (tracefs)"))?;
    let codec_info = super::pipe_features(&features, o)
        .compressed()
        .ok()
        .flatten();
    let mut main = FileWriter::new(
        create_in(&dir, "data").map_err(RecordError::Output)?,
        &prepared.set.attrs,
    )?;
    let side_band = super::side_band(o, &prepared, &mut notes);
    main.write_records(&side_band)
        .map_err(|e| RecordError::Output(io_err_context(e, "writing the side band")))?;
    let side_band_bytes = main.data_size();
    let sb_hits = super::side_band_hits(&side_band);
    // data is whole from here: a crash leaves a directory perf opens.
    main.checkpoint(&dir_features(&features, codec_info))
        .map_err(|e| RecordError::Output(io_err_context(e, "writing data")))?;

    let mut slots: Vec<Option<(u32, Ring)>> = std::mem::take(&mut prepared.set.rings)
        .into_iter()
        .map(Some)
        .collect();
    let mut jobs = Vec::with_capacity(groups.len());
    for (i, g) in groups.iter().enumerate() {
        let name = format!("data.{i}");
        let file = create_in(&dir, &name).map_err(RecordError::Output)?;
        let (drain, glue_notes) = o.codec.visit(Glue {
            writer: Writer::Stream(DataStreamWriter::new(file)),
            aio: o.aio,
            aio_backend: o.aio_backend,
            copy_meter: o.copy_meter,
            ring_size,
            stack_tail: stack_tail.clone(),
            rounds: false,
            hits: o.build_ids.table,
        })??;
        if i == 0 {
            notes.extend(glue_notes);
        }
        let fds = prepared
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

    let child = super::start(o, &mut prepared, &mut out)?;
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
    let mut ctl = SessionControl::new(&prepared.set, child, None, super::switching(o, channel));
    ctl.limits = super::limits(o);
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
    let _ = prepared.set.disable();
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
        o,
        &out,
        main,
        &prepared,
        &ring_cpus,
        features,
        ends,
        ended,
        notes,
        (side_band_bytes, sb_hits),
        started,
    )
}

/// After the threads: LOST_SAMPLES and the features into `data`, the summary.
#[allow(clippy::too_many_arguments)]
fn finish(
    o: &RecordOptions,
    out: &Output,
    mut main: FileWriter<std::fs::File>,
    prepared: &Prepared,
    ring_cpus: &[u32],
    features: FeatureSet,
    ends: Vec<(Group, PathBuf, ThreadEnd)>,
    ended: run::Ended,
    mut notes: Vec<String>,
    (side_band_bytes, sb_hits): (u64, crate::push::scan::Hits),
    started: Instant,
) -> Result<Summary, RecordError> {
    let (lost_recs, lost_samples) = super::lost_samples(prepared);
    let reports: Vec<DrainReport> = ends.iter().map(|(_, _, e)| e.report.clone()).collect();
    let dir_f = dir_features(&features, combined_compressed(&reports));
    let mut dir_f = dir_f;
    if o.build_ids.table {
        let mut hits = sb_hits;
        for (_, _, e) in &ends {
            if let Some(h) = &e.hits {
                hits.merge(h.clone());
            }
        }
        super::build_ids::add(&mut dir_f, &hits, &o.build_ids, &mut notes);
    }
    let main_kept = main.checkpoint_end();
    let main_done = main
        .write_records(&lost_recs)
        .map_err(FormatError::Io)
        .and_then(|()| main.finish(&dir_f))
        .and_then(|f| f.sync_all().map_err(FormatError::Io));
    // The first write error of a thread, and what the threads that failed
    // kept (None as soon as one kept nothing).
    let mut failure: Option<io::Error> = None;
    let mut kept_all = Some(Kept::Everything(0));
    let mut threads = Vec::new();
    let mut c = RecordCounts::default();
    let mut wakeups = 0;
    let mut copies = None;
    for (g, path, e) in &ends {
        let d = &e.drained;
        let error = match (&d.write_error, &e.finish_error) {
            (Some(err), _) => {
                failure.get_or_insert(io::Error::new(
                    err.kind(),
                    format!("{}: {err}", path.display()),
                ));
                kept_all = match (kept_all, e.kept) {
                    (Some(Kept::Everything(_)), Some(k)) => Some(k),
                    (k, Some(_)) => k,
                    (_, None) => None,
                };
                Some(format!("{err}; kept: {:?}", e.kept))
            }
            (None, Some(err)) => {
                failure.get_or_insert(io::Error::new(
                    err.kind(),
                    format!("{}: {err}", path.display()),
                ));
                kept_all = None;
                Some(err.to_string())
            }
            (None, None) => None,
        };
        c.samples += d.counts.samples;
        c.records += d.counts.records;
        c.lost_events += d.counts.lost_events;
        wakeups += d.wakeups;
        copies = add_copies(copies, e.report.copies);
        threads.push(ThreadSummary {
            file: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            cpus: g
                .rings
                .iter()
                .map(|&r| ring_cpus[r])
                .filter(|&c| c != crate::event::open::ANY_CPU)
                .collect(),
            rings: g.rings.len(),
            affinity: g.affinity.clone(),
            wakeups: d.wakeups,
            samples: d.counts.samples,
            records: d.counts.records,
            lost_events: d.counts.lost_events,
            ring_bytes: e.report.ring_bytes,
            bytes_written: e.report.bytes_written,
            compressed_bytes: e.report.compressed_bytes,
            cpu_seconds: e.cpu_seconds,
            max_ring_fill: e.report.max_fill,
            near_full_pushes: e.report.near_full_pushes,
            checkpoints: d.checkpoints.count,
            error,
        });
    }
    if let Err(e) = main_done {
        let err = match e {
            FormatError::Io(e) => e,
            other => io::Error::other(other),
        };
        // data keeps its checkpoint from the start: the directory opens.
        let data = out.current_path().map(|d| d.join("data"));
        return Err(RecordError::WriteFailed {
            path: out.display(),
            err,
            kept: data.and_then(|p| cut_back(&p, main_kept)),
        });
    }
    if let Some(err) = failure {
        let size = out.size();
        return Err(RecordError::WriteFailed {
            path: out.display(),
            err,
            kept: kept_all.map(|k| match k {
                Kept::Everything(_) => Kept::Everything(size),
                Kept::Checkpoint(_) => Kept::Checkpoint(size),
            }),
        });
    }
    if let Some(e) = &ended.wait_error {
        notes.push(format!(
            "waiting for the workload failed ({e}); the recording ended there"
        ));
    }
    notes.extend(ended.notes.iter().cloned());
    let sum = |f: fn(&DrainReport) -> u64| reports.iter().map(f).sum::<u64>();
    Ok(Summary {
        output: out.display(),
        codec: o.codec.to_string(),
        wakeups,
        samples: c.samples,
        records: c.records,
        lost_events: c.lost_events,
        lost_samples,
        ring_bytes: sum(|r| r.ring_bytes),
        side_band_bytes,
        bytes_written: side_band_bytes + sum(|r| r.bytes_written),
        compressed_bytes: sum(|r| r.compressed_bytes),
        pages: prepared.set.pages,
        rings: ring_cpus.len(),
        seconds: started.elapsed().as_secs_f64(),
        stop_signal: ended.stop_signal,
        workload_exit: ended.exit_status.and_then(|s| s.code()),
        sink: format!(
            "{} ({} threads)",
            reports.first().map_or("serial".into(), |r| r.sink.clone()),
            reports.len()
        ),
        checkpoints: ends
            .iter()
            .map(|(_, _, e)| e.drained.checkpoints.count)
            .sum(),
        checkpoint_bytes: ends
            .iter()
            .map(|(_, _, e)| e.drained.checkpoints.bytes)
            .sum(),
        checkpoint_seconds: ends
            .iter()
            .map(|(_, _, e)| e.drained.checkpoints.seconds)
            .sum(),
        copies,
        codec_copies_input: reports.first().is_some_and(|r| r.codec_copies_input),
        codec_state_bytes: reports.iter().map(|r| r.codec_state_bytes).sum(),
        stack_bytes_cleared: sum(|r| r.stack_bytes_cleared),
        stack_samples_uncut: sum(|r| r.stack_samples_uncut),
        max_ring_fill: reports.iter().map(|r| r.max_fill).fold(0.0, f64::max),
        near_full_pushes: sum(|r| r.near_full_pushes),
        threads,
        outputs: Vec::new(),
        notes,
    })
}
