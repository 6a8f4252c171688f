//! One recording: open the events, write the side band, run the poll loop
//! that drains the rings through the push path, and finalize the file.

mod output;
pub mod signals;
mod summary;

use std::io;
use std::path::PathBuf;
use std::time::Instant;

use perfz_codecs::{Codec, CodecSpec, CodecVisitor};

use crate::event::events::{AttrOptions, CallGraph, EventSpec, Sampling};
use crate::event::open::{EventSet, OpenError};
use crate::event::target::{threads_of, Target, Workload};
use crate::event::{cpus, ring, sys};
use crate::format::attr::sample_type as st;
use crate::format::compress::DECLARED_MMAP_LEN;
use crate::format::sample::id_trailer_size;
use crate::format::writer::{empty_record, FileWriter, PipeWriter, RecordSink};
use crate::format::{CompressedInfo, FeatureSet, FormatError, RecordType};
use crate::push::scan::{scan, RecordCounts};
use crate::push::{
    AsyncSink, Backend, CopyMeter, Meter, NoMeter, Pusher, SerialSink, Sink, ThreadBackend,
    UringBackend,
};
use crate::synth;

pub use summary::Summary;

/// Everything `perfz record` was asked to do.
#[derive(Clone, Debug)]
pub struct RecordOptions {
    pub events: Vec<EventSpec>,
    pub sampling: Sampling,
    pub call_graph: CallGraph,
    pub target: Target,
    pub output: PathBuf,
    /// Data pages per ring; `None` = perf's default.
    pub pages: Option<usize>,
    /// Don't drain a ring holding fewer bytes than this (except at the end).
    pub mmap_flush: usize,
    pub codec: CodecSpec,
    pub switch_events: bool,
    pub inherit: bool,
    /// With -a / -C / -p / -t: a command that only times the recording (it
    /// runs after the events are enabled; the recording ends when it exits).
    pub timing_command: Vec<String>,
    /// The command line, for HEADER_CMDLINE.
    pub argv: Vec<String>,
    /// `--aio[=N]`: N async buffers; `None` = serial writes.
    pub aio: Option<usize>,
    pub aio_backend: AioBackend,
    /// Count bytes moved on the push path (`-v`, `--stats-json`).
    pub copy_meter: bool,
    /// Make the file perf-readable this often while recording (file mode),
    /// so a `kill -9` or a full disk loses at most this much; `None` = never.
    pub checkpoint: Option<std::time::Duration>,
}

/// Which async backend `--aio` uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AioBackend {
    /// io_uring, or the pwrite thread where io_uring is unavailable.
    Auto,
    Uring,
    Thread,
}

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error("{what}: {err}")]
    Io { what: String, err: io::Error },
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Codec(#[from] perfz_codecs::Error),
    #[error("writing {path} failed: {err}; {}", match .kept {
        Some(Kept::Everything(n)) => format!("the file was finalized with every record written before the failure ({n} bytes) and opens in perf report"),
        Some(Kept::Checkpoint(n)) => format!("kept the recording up to the last checkpoint ({n} bytes), which perf report opens"),
        None => "nothing could be kept".to_string(),
    })]
    WriteFailed {
        path: String,
        err: io::Error,
        kept: Option<Kept>,
    },
}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> RecordError {
    let what = what.into();
    move |err| RecordError::Io { what, err }
}

/// Runs a recording to the end and returns what it did.
pub fn record(o: &RecordOptions) -> Result<Summary, RecordError> {
    if let Sampling::Frequency(0) | Sampling::Period(0) = o.sampling {
        return Err(RecordError::Usage(
            "the sampling frequency/period must be at least 1 (-F/-c)".into(),
        ));
    }
    o.codec.check_built()?;
    signals::install();
    let online = cpus::online().map_err(io_err("cannot read the online CPUs"))?;
    let mut workload = None;
    let (cpus, pids, tgids): (Vec<u32>, Vec<i32>, Vec<i32>) = match &o.target {
        Target::Workload(argv) => {
            let w =
                Workload::prepare(argv).map_err(io_err(format!("cannot start {:?}", argv[0])))?;
            let pid = w.pid;
            workload = Some(w);
            (online, vec![pid], vec![pid])
        }
        Target::Pids(list) => {
            let mut tids = Vec::new();
            for &p in list {
                tids.extend(threads_of(p).map_err(io_err(format!("cannot attach to pid {p}")))?);
            }
            (online, tids, list.clone())
        }
        Target::Tids(list) => {
            for &t in list {
                if !std::path::Path::new(&format!("/proc/{t}")).exists() {
                    return Err(RecordError::Usage(format!("no thread with tid {t}")));
                }
            }
            (online, list.clone(), list.clone())
        }
        Target::Cpus(list) => {
            if let Some(bad) = list.iter().find(|c| !online.contains(c)) {
                return Err(RecordError::Usage(format!(
                    "cpu {bad} is not online (online: {})",
                    cpus::format_list(&online)
                )));
            }
            (list.clone(), vec![-1], Vec::new())
        }
    };
    if !o.timing_command.is_empty() {
        let w = Workload::prepare(&o.timing_command)
            .map_err(io_err(format!("cannot start {:?}", o.timing_command[0])))?;
        workload = Some(w);
    }
    let system_wide = o.target.is_system_wide();
    let attr_opts = AttrOptions {
        sampling: o.sampling,
        call_graph: o.call_graph,
        with_id: o.events.len() > 1,
        with_cpu: system_wide,
        inherit: o.inherit && !system_wide,
        enable_on_exec: matches!(o.target, Target::Workload(_)),
        switch_events: o.switch_events,
        build_id: true,
    };
    let pages = o.pages.unwrap_or_else(ring::default_pages);
    let set = match EventSet::open(&o.events, &attr_opts, &cpus, &pids, pages) {
        Ok(s) => s,
        Err(e) => {
            if let Some(w) = workload {
                w.abort();
            }
            return Err(e.into());
        }
    };
    let session = Session {
        o,
        set,
        workload,
        tgids,
        system_wide,
    };
    o.codec.visit(session)?
}

struct Session<'a> {
    o: &'a RecordOptions,
    set: EventSet,
    workload: Option<Workload>,
    tgids: Vec<i32>,
    system_wide: bool,
}

impl CodecVisitor for Session<'_> {
    type Output = Result<Summary, RecordError>;
    fn visit<C: Codec + Send + 'static>(self, codec: C) -> Self::Output {
        let features = synth::features::session_features(&self.set.attrs, &self.o.argv);
        if output::is_stdout(&self.o.output) {
            let mut f = features.clone();
            if C::ID != perfz_codecs::CodecId::NONE {
                // Pipe mode must announce the codec before the first COMPRESSED
                // record; the ratio is unknown until the end (perf writes 0).
                f.set_compressed(CompressedInfo {
                    version: 0,
                    codec: C::ID.0,
                    level: self.o.codec.level() as u32,
                    ratio: 0,
                    mmap_len: DECLARED_MMAP_LEN,
                });
            }
            let w = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout());
            let writer = match PipeWriter::new(w, &self.set.attrs, &f) {
                Ok(w) => w,
                Err(e) => {
                    self.abort();
                    return Err(e.into());
                }
            };
            let mut notes = Vec::new();
            if self.o.aio.is_some() {
                notes.push("--aio needs a file output (it writes at file offsets); writing the pipe serially".into());
            }
            self.run_metered(codec, SerialSink::new(writer), features, notes)
        } else {
            let file = match output::create(&self.o.output) {
                Ok(f) => f,
                Err(e) => {
                    self.abort();
                    return Err(RecordError::Usage(e.to_string()));
                }
            };
            let writer = match FileWriter::new(file, &self.set.attrs) {
                Ok(w) => w,
                Err(e) => {
                    let _ = std::fs::remove_file(&self.o.output);
                    self.abort();
                    return Err(e.into());
                }
            };
            let Some(n) = self.o.aio else {
                return self.run_metered(codec, SerialSink::new(writer), features, Vec::new());
            };
            // The one choice of backend; from here the loop is monomorphized.
            let ring_size = self
                .set
                .rings
                .iter()
                .map(|(_, r)| r.data_size())
                .max()
                .unwrap_or(1 << 19);
            let uring = match self.o.aio_backend {
                AioBackend::Thread => Err(io::Error::other("--aio-backend thread")),
                _ => UringBackend::new(writer.get_ref()),
            };
            match uring {
                Ok(b) => self.run_metered(
                    codec,
                    AsyncSink::new(writer, b, n, ring_size),
                    features,
                    Vec::new(),
                ),
                Err(e) if self.o.aio_backend == AioBackend::Uring => {
                    let _ = std::fs::remove_file(&self.o.output);
                    self.abort();
                    Err(RecordError::Usage(format!(
                        "io_uring is not available here: {e}"
                    )))
                }
                Err(e) => {
                    let notes = if self.o.aio_backend == AioBackend::Auto {
                        vec![format!("io_uring is not available ({e}); async writes go through a pwrite thread")]
                    } else {
                        Vec::new()
                    };
                    let b = ThreadBackend::new(writer.get_ref())
                        .map_err(io_err("starting the writer thread"))?;
                    self.run_metered(
                        codec,
                        AsyncSink::new(writer, b, n, ring_size),
                        features,
                        notes,
                    )
                }
            }
        }
    }
}

/// What a failed recording kept (file size in bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    Everything(u64),
    Checkpoint(u64),
}

/// A sink the session can finish: everything written, features, header.
trait SessionSink: Sink + Sized {
    /// After a failed write: finalize with what was fully written, if this
    /// sink knows exactly what that is (the serial one does; an async one
    /// cannot tell which buffers landed, and falls back to the checkpoint).
    fn salvage(self, features: &FeatureSet) -> Result<(), RecordError>;
    fn finish(self, features: &FeatureSet) -> Result<(), RecordError>;
    /// Makes what was written so far perf-readable (see `FileWriter::checkpoint`).
    /// Returns the bytes it used, `None` where the output cannot (a pipe).
    fn checkpoint(&mut self, features: &FeatureSet) -> io::Result<Option<u64>>;
    /// The file offset where the last checkpoint block ends.
    fn checkpoint_end(&self) -> Option<u64>;
    /// How writes are done, for the summary.
    fn describe(&self) -> String;
}

impl<W: Finish> SessionSink for SerialSink<W> {
    fn salvage(self, features: &FeatureSet) -> Result<(), RecordError> {
        // Records are written whole or counted as not written; the file
        // position of a half-done write does not matter (finish seeks).
        self.finish(features)
    }
    fn finish(self, features: &FeatureSet) -> Result<(), RecordError> {
        Ok(self.into_inner().finish(features)?)
    }
    fn checkpoint(&mut self, features: &FeatureSet) -> io::Result<Option<u64>> {
        self.out.checkpoint(features)
    }
    fn checkpoint_end(&self) -> Option<u64> {
        self.out.checkpoint_end()
    }
    fn describe(&self) -> String {
        "serial".into()
    }
}

impl<B: Backend> SessionSink for AsyncSink<B> {
    fn salvage(self, _: &FeatureSet) -> Result<(), RecordError> {
        Err(RecordError::Usage(
            "an async sink cannot tell which writes landed".into(),
        ))
    }
    fn finish(self, features: &FeatureSet) -> Result<(), RecordError> {
        let w = self.into_inner().map_err(io_err("writing"))?;
        Ok(Finish::finish(w, features)?)
    }
    fn checkpoint(&mut self, features: &FeatureSet) -> io::Result<Option<u64>> {
        AsyncSink::checkpoint(self, features)
    }
    fn checkpoint_end(&self) -> Option<u64> {
        AsyncSink::checkpoint_end(self)
    }
    fn describe(&self) -> String {
        format!("async ({})", self.backend_name())
    }
}

/// What the output writer must do at the end, beyond the records.
trait Finish: RecordSink + Sized {
    fn finish(self, features: &FeatureSet) -> Result<(), FormatError>;
    fn checkpoint(&mut self, features: &FeatureSet) -> io::Result<Option<u64>>;
    fn checkpoint_end(&self) -> Option<u64>;
}

impl Finish for FileWriter<std::fs::File> {
    fn finish(self, features: &FeatureSet) -> Result<(), FormatError> {
        let f = FileWriter::finish(self, features)?;
        f.sync_all()?;
        Ok(())
    }
    fn checkpoint(&mut self, features: &FeatureSet) -> io::Result<Option<u64>> {
        FileWriter::checkpoint(self, features)
    }
    fn checkpoint_end(&self) -> Option<u64> {
        FileWriter::checkpoint_end(self)
    }
}

impl<W: std::io::Write> Finish for PipeWriter<W> {
    fn finish(self, _: &FeatureSet) -> Result<(), FormatError> {
        PipeWriter::finish(self)?;
        Ok(())
    }
    fn checkpoint(&mut self, _: &FeatureSet) -> io::Result<Option<u64>> {
        Ok(None) // a pipe is read as it comes: nothing to patch
    }
    fn checkpoint_end(&self) -> Option<u64> {
        None
    }
}

impl Session<'_> {
    /// After a failed write (a full disk, a file size limit): cut the file
    /// back to the last checkpoint, which the header already describes, so
    /// what it holds opens in perf.
    fn rolled_back(&self, err: io::Error, kept: Option<u64>) -> RecordError {
        let path = self.o.output.display().to_string();
        let kept = kept.and_then(|end| {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(&self.o.output)
                .ok()?;
            f.set_len(end).ok()?;
            f.sync_all().ok()?;
            Some(Kept::Checkpoint(end))
        });
        RecordError::WriteFailed { path, err, kept }
    }

    fn abort(self) {
        if let Some(w) = self.workload {
            w.abort();
        }
    }

    fn trailer_size(&self) -> usize {
        let a = &self.set.attrs[0].attr;
        if a.sample_id_all() {
            id_trailer_size(a.sample_type())
        } else {
            0
        }
    }

    /// The side band: kernel map and what /proc says about existing processes.
    fn synthesize<C: Codec, S: Sink, M: Meter>(
        &self,
        p: &mut Pusher<C, S, M>,
        notes: &mut Vec<String>,
    ) -> io::Result<()> {
        let trailer = self.trailer_size();
        let data_mmaps = matches!(self.o.call_graph, CallGraph::Dwarf(_));
        match synth::kernel::synthesize(trailer) {
            Ok(rec) => p.write_plain(&rec)?,
            Err(why) => notes.push(why),
        }
        if self.system_wide {
            for pid in synth::proc::all_pids() {
                for rec in synth::proc::process_records(pid, true, data_mmaps, trailer) {
                    p.write_plain(&rec)?;
                }
            }
        } else if matches!(self.o.target, Target::Workload(_)) {
            let pid = self.tgids[0];
            let comm = synth::proc::comm_of(pid, pid).unwrap_or_else(|| "perfz-exec".into());
            p.write_plain(&synth::proc::comm_record(pid, pid, &comm, trailer))?;
        } else {
            for &pid in &self.tgids {
                for rec in synth::proc::process_records(pid, false, data_mmaps, trailer) {
                    p.write_plain(&rec)?;
                }
            }
        }
        p.write_plain(&empty_record(RecordType::FINISHED_INIT))
    }

    /// Picks the meter (a type: no cost when off) and runs.
    fn run_metered<C: Codec, S: SessionSink>(
        self,
        codec: C,
        sink: S,
        features: FeatureSet,
        notes: Vec<String>,
    ) -> Result<Summary, RecordError> {
        if self.o.copy_meter {
            self.run::<C, S, CopyMeter>(codec, sink, features, notes)
        } else {
            self.run::<C, S, NoMeter>(codec, sink, features, notes)
        }
    }

    fn run<C: Codec, S: SessionSink, M: Meter>(
        mut self,
        codec: C,
        sink: S,
        mut features: FeatureSet,
        extra_notes: Vec<String>,
    ) -> Result<Summary, RecordError> {
        let started = Instant::now();
        let mut notes = std::mem::take(&mut self.set.notes);
        notes.extend(extra_notes);
        let sink_name = sink.describe();
        let mut pusher = Pusher::<C, S, M>::new(codec, sink);
        self.synthesize(&mut pusher, &mut notes)
            .map_err(io_err("writing the side band"))?;
        let side_band = pusher.sink().bytes_written();

        // A forked workload enables its events itself, on exec; anything else
        // is enabled now (and a timing command starts after that).
        if !matches!(self.o.target, Target::Workload(_)) {
            self.set
                .enable()
                .map_err(io_err("cannot enable the events"))?;
        }
        let mut child = match self.workload.take() {
            Some(w) => match w.start() {
                Ok(c) => Some(c),
                Err(e) => {
                    // Nothing was recorded: leave no file behind.
                    if !output::is_stdout(&self.o.output) {
                        let _ = std::fs::remove_file(&self.o.output);
                    }
                    let cmd = match &self.o.target {
                        Target::Workload(argv) => argv[0].clone(),
                        _ => self.o.timing_command[0].clone(),
                    };
                    return Err(io_err(format!("cannot run {cmd}"))(e));
                }
            },
            None => None,
        };

        let flush = self.o.mmap_flush.max(1) as u64;
        let mut counts = RecordCounts::default();
        let mut wakeups = 0u64;
        let mut final_pass = false;
        let mut stop_signal = None;
        let mut exit_status = None;
        // Every event fd polls its ring (redirected fds report the ring they
        // write into) and reports POLLHUP when its task is gone.
        let mut pfds: Vec<libc::pollfd> = {
            use std::os::fd::AsRawFd;
            self.set
                .fds
                .iter()
                .map(|f| libc::pollfd {
                    fd: f.fd.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect()
        };
        let level = self.o.codec.level();
        let mut write_error: Option<io::Error> = None;
        let mut cp = CheckpointStats::default();
        // A first checkpoint right after the side band: from here on, a crash
        // never leaves a file perf cannot open.
        if self.o.checkpoint.is_some() {
            if let Err(e) = take_checkpoint(&mut pusher, &features, level, &mut cp) {
                write_error = Some(e);
            }
        }
        let mut last_cp = Instant::now();
        while write_error.is_none() {
            let mut wrote = false;
            for (_, ring) in self.set.rings.iter_mut() {
                let head = ring.head();
                let pending = head.wrapping_sub(ring.tail());
                if pending == 0 || (pending < flush && !final_pass) {
                    continue;
                }
                let region = ring.region(head);
                scan(region, &mut counts);
                if let Err(e) = pusher.push(region) {
                    write_error = Some(e);
                    break;
                }
                ring.consume(head);
                wrote = true;
            }
            if write_error.is_some() {
                break;
            }
            if wrote {
                if let Err(e) = pusher.write_plain(&empty_record(RecordType::FINISHED_ROUND)) {
                    write_error = Some(e);
                    break;
                }
            }
            if final_pass {
                break;
            }
            if let Some(every) = self.o.checkpoint {
                if last_cp.elapsed() >= every {
                    if let Err(e) = take_checkpoint(&mut pusher, &features, level, &mut cp) {
                        write_error = Some(e);
                        break;
                    }
                    last_cp = Instant::now();
                }
            }
            if stop_signal.is_none() {
                stop_signal = signals::stop_requested();
            }
            if let Some(c) = child.as_mut() {
                if exit_status.is_none() {
                    exit_status = c.try_wait().map_err(io_err("waiting for the workload"))?;
                }
            }
            if stop_signal.is_some() || exit_status.is_some() {
                let _ = self.set.disable();
                final_pass = true;
                continue;
            }
            if !wrote {
                // SAFETY: pfds is a valid array of pollfd for its length.
                let n = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, 100) };
                if n > 0 {
                    wakeups += 1;
                    // A hung-up fd (its task is gone) stays readable forever:
                    // drop it from the set, and stop when none is left.
                    for p in pfds
                        .iter_mut()
                        .filter(|p| p.revents & (libc::POLLHUP | libc::POLLERR) != 0)
                    {
                        p.fd = -1;
                    }
                    if pfds.iter().all(|p| p.fd < 0) {
                        let _ = self.set.disable();
                        final_pass = true;
                    }
                }
            }
        }
        if write_error.is_some() {
            let _ = self.set.disable();
        }
        if let Some(mut c) = child {
            if exit_status.is_none() {
                // Stopped by a signal (or a failed write) while the workload
                // still runs: end it, as perf does.
                // SAFETY: kill has no memory effects; the pid is our own child.
                unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
                exit_status = c.wait().ok();
            }
        }
        if let Some(err) = write_error {
            let kept = pusher.sink().checkpoint_end();
            let mut f = features.clone();
            if let Some(info) = pusher.compressed_info(level) {
                f.set_compressed(info);
            }
            if !output::is_stdout(&self.o.output) && pusher.into_sink().salvage(&f).is_ok() {
                let n = std::fs::metadata(&self.o.output)
                    .map(|m| m.len())
                    .unwrap_or(0);
                let path = self.o.output.display().to_string();
                return Err(RecordError::WriteFailed {
                    path,
                    err,
                    kept: Some(Kept::Everything(n)),
                });
            }
            return Err(self.rolled_back(err, kept));
        }

        // LOST_SAMPLES per event fd whose PERF_FORMAT_LOST count is non-zero.
        let mut lost_samples = 0u64;
        let a0 = self.set.attrs[0].attr.sample_type();
        for f in &self.set.fds {
            if let Ok((_, id, lost)) = sys::read_counts(&f.fd) {
                if lost > 0 {
                    lost_samples += lost;
                    let rec = lost_samples_record(lost, id, a0, self.trailer_size());
                    if let Err(e) = pusher.write_plain(&rec) {
                        let kept = pusher.sink().checkpoint_end();
                        drop(pusher);
                        return Err(self.rolled_back(e, kept));
                    }
                }
            }
        }
        let ring_bytes = pusher.stats.ring_bytes;
        let compressed_bytes = pusher.compressed_bytes();
        if let Some(info) = pusher.compressed_info(self.o.codec.level()) {
            features.set_compressed(info);
        }
        let copies = pusher.meter.copies();
        let codec_state_bytes = pusher.codec_state_size();
        let kept = pusher.sink().checkpoint_end();
        let sink = pusher.into_sink();
        let bytes_written = sink.bytes_written();
        if let Err(e) = sink.finish(&features) {
            let err = match e {
                RecordError::Format(FormatError::Io(e)) | RecordError::Io { err: e, .. } => e,
                other => io::Error::other(other.to_string()),
            };
            return Err(self.rolled_back(err, kept));
        }
        Ok(Summary {
            output: self.o.output.display().to_string(),
            codec: self.o.codec.to_string(),
            wakeups,
            samples: counts.samples,
            records: counts.records,
            lost_events: counts.lost_events,
            lost_samples,
            ring_bytes,
            side_band_bytes: side_band,
            bytes_written,
            compressed_bytes,
            pages: self.set.pages,
            rings: self.set.rings.len(),
            seconds: started.elapsed().as_secs_f64(),
            stop_signal,
            workload_exit: exit_status.and_then(|s| s.code()),
            sink: sink_name,
            checkpoints: cp.count,
            checkpoint_bytes: cp.bytes,
            checkpoint_seconds: cp.seconds,
            copies,
            codec_state_bytes,
            notes,
        })
    }
}

#[derive(Default)]
struct CheckpointStats {
    count: u64,
    bytes: u64,
    seconds: f64,
}

/// Writes a checkpoint with the features as they stand (COMPRESSED with the
/// ratio so far) and counts its cost.
fn take_checkpoint<C: Codec, S: SessionSink, M: Meter>(
    p: &mut Pusher<C, S, M>,
    features: &FeatureSet,
    level: i32,
    cp: &mut CheckpointStats,
) -> io::Result<()> {
    let t = Instant::now();
    let mut f = features.clone();
    if let Some(info) = p.compressed_info(level) {
        f.set_compressed(info);
    }
    if let Some(n) = p.sink_mut().checkpoint(&f)? {
        cp.count += 1;
        cp.bytes += n;
    }
    cp.seconds += t.elapsed().as_secs_f64();
    Ok(())
}

/// LOST_SAMPLES: `u64 lost` + a trailer carrying the event's id.
fn lost_samples_record(lost: u64, id: u64, sample_type: u64, trailer: usize) -> Vec<u8> {
    let mut rec = synth::record(13, 0, &lost.to_le_bytes(), trailer);
    if sample_type & st::ID != 0 && trailer > 0 {
        let at = 16
            + 8 * [st::TID, st::TIME]
                .iter()
                .filter(|&&b| sample_type & b != 0)
                .count();
        rec[at..at + 8].copy_from_slice(&id.to_le_bytes());
    }
    rec
}
