//! One recording, shaped like ripgrep's searcher: plain setup code
//! ([`setup`], [`output`], [`side_band`]), one runtime choice of codec, sink
//! and meter ([`glue`]), one generic unit that drains rings ([`drain`]), and
//! a plain control loop ([`run`]) and finish around it.
//!
//! ```text
//! record ─ setup::prepare ─ Output::open ─ glue (CodecSpec::visit) ─▶ Box<dyn Drain>
//!        ─ side band ─ enable / start workload ─ Output::commit ─ run::run ─ finish
//! ```

mod build_ids;
mod control;
mod drain;
mod error;
mod flight;
mod glue;
mod layout;
mod memory;
mod output;
mod rotation;
mod run;
mod setup;
mod side_band;
pub mod signals;
mod sinks;
mod status;
mod summary;
mod threads;

use std::os::fd::{AsRawFd, RawFd};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::{Duration, Instant};

use crate::event::events::{CallGraph, EventSpec, Sampling};
use crate::event::sys;
use crate::event::target::Target;
use crate::format::attr::sample_type as st;
use crate::format::compress::DECLARED_MMAP_LEN;
use crate::format::record::RecordType;
use crate::format::sample::id_trailer_offset;
use crate::format::writer::{FileWriter, PipeWriter};
use crate::format::{CompressedInfo, FeatureSet};
use crate::synth;

pub use control::ControlSpec;
pub use drain::DrainReport;
pub use error::{Kept, RecordError};
pub use layout::ThreadSpec;
pub use summary::Summary;

use drain::Drain;
use error::io_err;
use glue::{Glue, Writer};
use output::Output;
use run::{Ended, LoopOptions, SessionControl};
use setup::Prepared;

/// Everything `perfz record` was asked to do.
#[derive(Clone, Debug)]
pub struct RecordOptions {
    pub events: Vec<EventSpec>,
    pub sampling: Sampling,
    /// -F or -c was given (it replaces tracepoints' default period 1).
    pub sampling_explicit: bool,
    pub call_graph: CallGraph,
    pub target: Target,
    pub output: PathBuf,
    /// Data pages per ring; `None` = perf's default.
    pub pages: Option<usize>,
    /// Don't drain a ring holding fewer bytes than this (except at the end).
    pub mmap_flush: usize,
    pub codec: perfz_codecs::CodecSpec,
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
    pub checkpoint: Option<Duration>,
    /// A live status line on stderr (the CLI sets it on a terminal).
    pub status: bool,
    /// Keep the stack bytes the kernel did not write in dwarf samples (as
    /// perf does) instead of zeroing them before compression.
    pub keep_stack_padding: bool,
    /// `--threads[=SPEC]`: parallel drain threads, directory output.
    pub threads: Option<ThreadSpec>,
    /// `--per-thread`: one ring per task instead of one per CPU.
    pub per_thread: bool,
    /// `-D MS`: enable the sampling events MS ms after the start;
    /// `Some(-1)`: only when `--control` says `enable`.
    pub delay_ms: Option<i64>,
    /// `--control=fifo:CTL[,ACK]` or `fd:CTL[,ACK]`.
    pub control: Option<ControlSpec>,
    /// The end-of-recording build-id pass (`-B`, `-N`, `--buildid-all`).
    pub build_ids: BuildIdOptions,
    /// `--duration`: stop after this long.
    pub duration: Option<Duration>,
    /// `--max-size`: stop when the output holds this many bytes.
    pub max_size: Option<u64>,
    /// `--switch-output`.
    pub switch_output: Option<SwitchOutput>,
    /// `--switch-max-files`: keep only the newest N outputs.
    pub switch_max_files: Option<usize>,
    /// `--flight-recorder SIZE`: keep the newest SIZE bytes of compressed
    /// trace in memory, written out on SIGUSR2, `snapshot`, or the end.
    pub flight_recorder: Option<u64>,
}

/// `--switch-output[=signal|SIZE|TIME]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchOutput {
    /// On SIGUSR2 (perf's default).
    Signal,
    /// When the output holds this many bytes.
    Size(u64),
    /// Every so often.
    Time(Duration),
}

impl FromStr for SwitchOutput {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!("--switch-output={s}: use signal, a size (10M, 1G) or a time (30s, 5m, 1h, 1d)")
        };
        if s.is_empty() || s == "signal" {
            return Ok(SwitchOutput::Signal);
        }
        let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
        let n: u64 = num.parse().map_err(|_| bad())?;
        if n == 0 {
            return Err(bad());
        }
        let k = |m: u64| n.checked_mul(m).ok_or_else(bad);
        Ok(match unit {
            "B" | "b" => SwitchOutput::Size(n),
            "K" | "k" => SwitchOutput::Size(k(1 << 10)?),
            "M" => SwitchOutput::Size(k(1 << 20)?),
            "G" | "g" => SwitchOutput::Size(k(1 << 30)?),
            "s" => SwitchOutput::Time(Duration::from_secs(n)),
            "m" => SwitchOutput::Time(Duration::from_secs(k(60)?)),
            "h" => SwitchOutput::Time(Duration::from_secs(k(3600)?)),
            "d" => SwitchOutput::Time(Duration::from_secs(k(86400)?)),
            _ => return Err(bad()),
        })
    }
}

/// What the build-id pass does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildIdOptions {
    /// Write HEADER_BUILD_ID (not with `-B/--no-buildid`).
    pub table: bool,
    /// Every mapped DSO, not only those samples hit (`--buildid-all`).
    pub all: bool,
    /// Add the DSOs to ~/.debug (not with `-N/--no-buildid-cache`).
    pub cache: bool,
}

impl Default for BuildIdOptions {
    fn default() -> Self {
        BuildIdOptions {
            table: true,
            all: false,
            cache: true,
        }
    }
}

/// Which async backend `--aio` uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AioBackend {
    /// io_uring, or the pwrite thread where io_uring is unavailable.
    Auto,
    Uring,
    Thread,
}

impl FromStr for AioBackend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(AioBackend::Auto),
            "uring" => Ok(AioBackend::Uring),
            "thread" => Ok(AioBackend::Thread),
            _ => Err(format!("{s:?}: use auto, uring or thread")),
        }
    }
}

/// Runs a recording to the end and returns what it did.
pub fn record(o: &RecordOptions) -> Result<Summary, RecordError> {
    if let Sampling::Frequency(0) | Sampling::Period(0) = o.sampling {
        return Err(RecordError::Usage(
            "the sampling frequency/period must be at least 1 (-F/-c)".into(),
        ));
    }
    o.codec.check_built()?;
    output::check(&o.output).map_err(RecordError::Output)?;
    signals::install().map_err(io_err("installing signal handlers"))?;
    let started = Instant::now();
    if o.flight_recorder.is_some()
        && (output::is_stdout(&o.output)
            || o.threads.is_some()
            || o.switch_output.is_some()
            || o.max_size.is_some())
    {
        return Err(RecordError::Usage(
            "--flight-recorder writes snapshot files (OUTPUT.<timestamp>) on SIGUSR2, `snapshot` or at the end: it takes -o FILE, and not --threads, --switch-output or --max-size".into(),
        ));
    }
    if o.flight_recorder.is_some_and(|c| c < 16 << 10) {
        return Err(RecordError::Usage(
            "--flight-recorder needs at least 16K of memory".into(),
        ));
    }
    memory::check(o)?;
    if o.threads.is_some() && o.per_thread {
        return Err(RecordError::Usage(
            "--per-thread option is mutually exclusive to parallel streaming mode (--threads), as in perf".into(),
        ));
    }
    if o.switch_output.is_some() && output::is_stdout(&o.output) {
        return Err(RecordError::Usage(
            "--switch-output writes a series of files and cannot write a pipe: give -o FILE".into(),
        ));
    }
    if o.switch_output.is_some() && o.threads.is_some() {
        return Err(RecordError::Usage(
            "--switch-output with --threads is not supported yet: use one of them".into(),
        ));
    }
    if o.threads.is_some() && output::is_stdout(&o.output) {
        return Err(RecordError::Usage(
            "--threads writes a directory of files and cannot write a pipe: give -o DIR".into(),
        ));
    }
    let channel = o
        .control
        .as_ref()
        .map(control::Channel::open)
        .transpose()
        .map_err(|e| RecordError::Usage(e.to_string()))?;
    let mut prepared = setup::prepare(o)?;
    let mut notes = std::mem::take(&mut prepared.set.notes);
    if let Some(spec) = &o.threads {
        return threads::record(o, spec, prepared, notes, started, channel);
    }
    if let Some(cap) = o.flight_recorder {
        return flight::record(o, cap, prepared, notes, started, channel);
    }

    // From here the output exists, under a temporary name until the
    // recording has started.
    let (mut out, file) = Output::open(&o.output).map_err(RecordError::Output)?;
    let mut features = synth::features::session_features(&prepared.set.attrs, &o.argv);
    synth::features::event_features(&mut features, &o.events)
        .map_err(io_err("describing the events (tracefs)"))?;
    let writer = if out.is_pipe() {
        Writer::Pipe(PipeWriter::new(
            file,
            &prepared.set.attrs,
            &pipe_features(&features, o),
        )?)
    } else {
        Writer::File(FileWriter::new(file, &prepared.set.attrs)?)
    };
    let ring_size = prepared.ring_size();
    let (mut drain, glue_notes) = o.codec.visit(Glue {
        writer,
        aio: o.aio,
        aio_backend: o.aio_backend,
        copy_meter: o.copy_meter,
        ring_size,
        stack_tail: prepared.stack_tail(o.keep_stack_padding, &mut notes),
        rounds: true,
        // Build ids need them; so do switched outputs (their side band).
        hits: (o.build_ids.table || o.switch_output.is_some()) && !out.is_pipe(),
    })??;
    notes.extend(glue_notes);

    let side_band = side_band(o, &prepared, &mut notes);
    drain
        .write_plain(&side_band)
        .map_err(|e| RecordError::Output(io_err_context(e, "writing the side band")))?;
    let side_band_bytes = drain.report().bytes_written;
    let child = start(o, &mut prepared, &mut out)?;

    let event_fds: Vec<RawFd> = prepared.set.fds.iter().map(|f| f.fd.as_raw_fd()).collect();
    let mut rings = std::mem::take(&mut prepared.set.rings);
    let mut ctl = SessionControl::new(
        &prepared.set,
        child,
        o.status.then(status::StatusLine::new),
        switching(o, channel),
    );
    ctl.limits = limits(o);
    let mut rotation = o
        .switch_output
        .map(|_| rotation::Rotation::new(&o.output, o.switch_max_files));
    // The side band of the output being written, for its build ids, and
    // every map record seen so far, for the side band of the next output.
    let mut file_hits = side_band_hits(&side_band);
    let mut map_history = crate::push::scan::Hits {
        maps: file_hits.maps.clone(),
        ..Default::default()
    };
    let loop_options = LoopOptions {
        min_bytes: o.mmap_flush.max(1) as u64,
        // A sixteenth of the ring: well under the kernel's wakeup
        // watermark (half the ring), so a woken drain always finds it.
        min_push: (ring_size / 16) as u64,
        checkpoint: o.checkpoint,
        features: &features,
    };
    let mut drained = run::Drained::default();
    let mut switch_failed = None;
    loop {
        let d = run::drain_loop(
            drain.as_mut(),
            &mut rings,
            &event_fds,
            &mut ctl,
            &loop_options,
        );
        drained.add(d);
        if !drained.switch || drained.write_error.is_some() {
            break;
        }
        drained.switch = false;
        let r = rotation.as_mut().map(|r| {
            switch_output(
                o,
                &prepared,
                drain.as_mut(),
                &features,
                r,
                (&mut file_hits, &mut map_history),
                &mut notes,
            )
        });
        if let Some(Err(e)) = r {
            switch_failed = Some(e);
            break;
        }
    }
    let ended = ctl.end(drained);
    if let Some(e) = switch_failed {
        return Err(e);
    }
    prepared.set.rings = rings;
    finish(
        o,
        &out,
        &prepared,
        drain,
        features,
        ended,
        notes,
        (side_band_bytes, file_hits),
        started,
        rotation,
    )
}

/// The side band of an output started after the recording's start (a
/// switched output, a flight-recorder snapshot): the processes as /proc
/// shows them now (a forked workload has exec'd since), plus every map and
/// comm record seen so far, before FINISHED_INIT — a process exiting (or
/// gone) by now has nothing left in /proc, but its samples are there.
fn later_side_band(
    o: &RecordOptions,
    prepared: &Prepared,
    map_history: &[u8],
    notes: &mut Vec<String>,
) -> Vec<u8> {
    let target = match &o.target {
        Target::Workload(_) => Target::Pids(prepared.tgids.clone()),
        t => t.clone(),
    };
    let mut sb = side_band::SideBand {
        target: &target,
        call_graph: o.call_graph,
        tgids: &prepared.tgids,
        trailer: prepared.trailer_size(),
    }
    .build(notes);
    let init = sb.split_off(sb.len() - 8);
    sb.extend_from_slice(map_history);
    sb.extend_from_slice(&init);
    sb
}

/// `--duration`, `--max-size`, `--switch-output` from now.
fn limits(o: &RecordOptions) -> run::Limits {
    let now = Instant::now();
    run::Limits {
        end_at: o.duration.map(|d| now + d),
        max_size: o.max_size,
        switch: o.switch_output,
        output_since: Some(now),
        reason: None,
    }
}

/// One `--switch-output`: the recording goes on in a new output (a hidden
/// temporary file beside OUTPUT, with a fresh side band and a new codec
/// stream); the current output is finished in place (with the build ids of
/// what it holds), and only then renamed `OUTPUT.<timestamp>`, and the new
/// one renamed OUTPUT — perf's order: no name ever shows an unfinished
/// file. If finishing fails, the current output is cut back to its own
/// last checkpoint (never another output's) and the error says what is kept.
fn switch_output(
    o: &RecordOptions,
    prepared: &Prepared,
    drain: &mut (dyn Drain + Send),
    features: &FeatureSet,
    rotation: &mut rotation::Rotation,
    hits: (&mut crate::push::scan::Hits, &mut crate::push::scan::Hits),
    notes: &mut Vec<String>,
) -> Result<(), RecordError> {
    let kept = drain.checkpoint_end();
    let tmp = tempfile::Builder::new()
        .prefix(".perfz-next-")
        .tempfile_in(output::dir_of(&o.output))
        .map_err(RecordError::Output)?;
    let failed = |err: std::io::Error| RecordError::WriteFailed {
        path: o.output.display().to_string(),
        err,
        kept: output::cut_back(&o.output, kept),
    };
    let next = tmp.as_file().try_clone().map_err(RecordError::Output)?;
    let file_hits = &mut *hits.0;
    let sb =
        switch_to(o, prepared, drain, features, next, hits.1, file_hits, notes).map_err(failed)?;
    // The current output is finished: from here a failure concerns only
    // the next one, whose temporary is removed.
    let sealed = rotation.seal().map_err(RecordError::Output)?;
    drain.write_plain(&sb).map_err(|err| RecordError::Io {
        what: format!(
            "--switch-output: starting the next output failed ({} is finished and opens in perf)",
            sealed.display()
        ),
        err,
    })?;
    *file_hits = side_band_hits(&sb);
    tmp.persist(&o.output)
        .map_err(|e| RecordError::Output(e.error))?;
    Ok(())
}

/// Finishes the current output and goes on in `next` (its header only);
/// returns the next output's side band, to write once the current one is
/// named.
#[allow(clippy::too_many_arguments)]
fn switch_to(
    o: &RecordOptions,
    prepared: &Prepared,
    drain: &mut (dyn Drain + Send),
    features: &FeatureSet,
    next: std::fs::File,
    map_history: &mut crate::push::scan::Hits,
    file_hits: &mut crate::push::scan::Hits,
    notes: &mut Vec<String>,
) -> std::io::Result<Vec<u8>> {
    let mut f = features.clone();
    if let Some(mut hits) = drain.take_hits() {
        // Bounded (Hits::merge trims the oldest).
        map_history.merge(crate::push::scan::Hits {
            maps: hits.maps.clone(),
            ..Default::default()
        });
        hits.merge(std::mem::take(file_hits));
        if o.build_ids.table {
            build_ids::add(&mut f, &hits, &o.build_ids, notes);
        }
    }
    let sb = later_side_band(o, prepared, &map_history.maps, notes);
    drain
        .switch_output(next, &prepared.set.attrs, &f)
        .map_err(|e| match e {
            crate::format::FormatError::Io(e) => e,
            other => std::io::Error::other(other),
        })?;
    Ok(sb)
}

/// The records perf synthesizes before the ring data.
fn side_band(o: &RecordOptions, prepared: &Prepared, notes: &mut Vec<String>) -> Vec<u8> {
    side_band::SideBand {
        target: &o.target,
        call_graph: o.call_graph,
        tgids: &prepared.tgids,
        trailer: prepared.trailer_size(),
    }
    .build(notes)
}

/// Starts the recording: enables the events (a forked workload enables its
/// own, on exec), starts the workload or timing command, and only then lets
/// the output replace an existing one.
fn start(
    o: &RecordOptions,
    prepared: &mut Prepared,
    out: &mut Output,
) -> Result<Option<std::process::Child>, RecordError> {
    if !matches!(o.target, Target::Workload(_)) {
        let set = &prepared.set;
        if o.delay_ms.is_some() {
            set.enable_tracking()
        } else {
            set.enable()
        }
        .map_err(io_err("cannot enable the events"))?;
    }
    let child = match prepared.workload.take() {
        Some(w) => {
            let cmd = match &o.target {
                Target::Workload(argv) => argv[0].clone(),
                _ => o.timing_command[0].clone(),
            };
            Some(w.start().map_err(|err| RecordError::Start { cmd, err })?)
        }
        None => None,
    };
    // Started: only now may an existing file become FILE.old.
    if let Err(e) = out.commit() {
        if let Some(mut c) = child {
            let _ = c.kill();
            let _ = c.wait();
        }
        return Err(RecordError::Output(e));
    }
    Ok(child)
}

/// The side band's maps for the build-id pass.
fn side_band_hits(side_band: &[u8]) -> crate::push::scan::Hits {
    let mut h = crate::push::scan::Hits::default();
    crate::push::scan::scan_hits(
        perfz_codecs::Input::one(side_band),
        &mut Default::default(),
        Some(&mut h),
    );
    h
}

/// `-D` and `--control`, from the moment the recording started.
fn switching(o: &RecordOptions, channel: Option<control::Channel>) -> run::Switching {
    run::Switching {
        enable_at: o
            .delay_ms
            .filter(|&d| d >= 0)
            .map(|d| Instant::now() + Duration::from_millis(d as u64)),
        channel,
        ..Default::default()
    }
}

/// LOST_SAMPLES records for every event fd whose PERF_FORMAT_LOST count is
/// non-zero, and the total.
fn lost_samples(prepared: &Prepared) -> (Vec<u8>, u64) {
    let (mut recs, mut total) = (Vec::new(), 0u64);
    let sample_type = prepared.set.attrs[0].attr.sample_type();
    for f in &prepared.set.fds {
        if let Ok(lost) = sys::read_lost(&f.fd, f.id) {
            if lost > 0 {
                total += lost;
                recs.extend(lost_samples_record(
                    lost,
                    f.id,
                    sample_type,
                    prepared.trailer_size(),
                ));
            }
        }
    }
    (recs, total)
}

fn io_err_context(e: std::io::Error, what: &str) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// Pipe mode must announce the codec before the first COMPRESSED record; the
/// ratio is unknown until the end (perf writes 0).
fn pipe_features(features: &FeatureSet, o: &RecordOptions) -> FeatureSet {
    let mut f = features.clone();
    let id = o.codec.id();
    if id != perfz_codecs::CodecId::NONE {
        f.set_compressed(CompressedInfo {
            version: 0,
            codec: id.0,
            level: o.codec.level() as u32,
            ratio: 0,
            mmap_len: DECLARED_MMAP_LEN,
        });
    }
    f
}

/// LOST_SAMPLES: `u64 lost` and a sample_id trailer carrying the event's id.
fn lost_samples_record(lost: u64, id: u64, sample_type: u64, trailer: usize) -> Vec<u8> {
    let mut rec = synth::record(RecordType::LOST_SAMPLES.0, 0, &lost.to_le_bytes(), trailer);
    if trailer > 0 {
        if let Some(off) = id_trailer_offset(sample_type, st::ID) {
            let at = rec.len() - trailer + off;
            rec[at..at + 8].copy_from_slice(&id.to_le_bytes());
        }
    }
    rec
}

/// After the loop: salvage or roll back a failed write, or write
/// LOST_SAMPLES, the features and the header.
#[allow(clippy::too_many_arguments)]
fn finish(
    o: &RecordOptions,
    out: &Output,
    prepared: &Prepared,
    mut drain: Box<dyn Drain + Send>,
    features: FeatureSet,
    mut ended: Ended,
    mut notes: Vec<String>,
    (side_band_bytes, sb_hits): (u64, crate::push::scan::Hits),
    started: Instant,
    mut rotation: Option<rotation::Rotation>,
) -> Result<Summary, RecordError> {
    let failed = |err, kept| RecordError::WriteFailed {
        path: out.display(),
        err,
        kept,
    };
    if let Some(err) = ended.drained.write_error {
        let kept = drain.checkpoint_end();
        if !out.is_pipe() && drain.salvage(&features).is_ok() {
            return Err(failed(err, Some(Kept::Everything(out.size()))));
        }
        return Err(failed(err, out.roll_back(kept)));
    }

    let (lost_recs, lost_samples) = lost_samples(prepared);
    let lost_written = if lost_recs.is_empty() {
        Ok(())
    } else {
        drain.write_plain(&lost_recs)
    };
    if let Err(e) = lost_written {
        let kept = drain.checkpoint_end();
        drop(drain);
        return Err(failed(e, out.roll_back(kept)));
    }
    let report = drain.report();
    let mut features = features;
    if let Some(mut hits) = drain.take_hits().filter(|_| o.build_ids.table) {
        hits.merge(sb_hits);
        build_ids::add(&mut features, &hits, &o.build_ids, &mut notes);
    }
    let kept = drain.checkpoint_end();
    if let Err(e) = drain.finish(&features) {
        let err = match e {
            crate::format::FormatError::Io(e) => e,
            other => std::io::Error::other(other),
        };
        return Err(failed(err, out.roll_back(kept)));
    }
    // The last output is sealed like the others (perf's "Dump" at the end).
    let mut outputs = Vec::new();
    if let Some(r) = rotation.as_mut() {
        if let Err(e) = r.seal() {
            notes.push(format!(
                "--switch-output: naming the last output failed: {e}"
            ));
        }
        if r.removed > 0 {
            notes.push(format!(
                "--switch-max-files: removed the {} oldest outputs",
                r.removed
            ));
        }
        outputs = std::mem::take(&mut r.written);
    }
    if let Some(e) = &ended.wait_error {
        notes.push(format!(
            "waiting for the workload failed ({e}); the recording ended there"
        ));
    }
    notes.extend(std::mem::take(&mut ended.notes));
    Ok(Summary {
        // Switched: the last output has its timestamped name by now.
        output: outputs.last().cloned().unwrap_or_else(|| out.display()),
        lost_samples,
        side_band_bytes,
        outputs,
        ..drain_summary(o, report, &ended, prepared, started, notes)
    })
}

/// A summary from one drain unit's report and how its loop ended (the
/// serial session and the flight recorder); the caller sets what differs.
fn drain_summary(
    o: &RecordOptions,
    report: DrainReport,
    ended: &Ended,
    prepared: &Prepared,
    started: Instant,
    notes: Vec<String>,
) -> Summary {
    let c = ended.drained.counts;
    Summary {
        output: o.output.display().to_string(),
        codec: o.codec.to_string(),
        wakeups: ended.drained.wakeups,
        samples: c.samples,
        records: c.records,
        lost_events: c.lost_events,
        lost_samples: 0,
        ring_bytes: report.ring_bytes,
        side_band_bytes: 0,
        bytes_written: report.bytes_written,
        compressed_bytes: report.compressed_bytes,
        pages: prepared.set.pages,
        rings: prepared.set.rings.len(),
        seconds: started.elapsed().as_secs_f64(),
        stop_signal: ended.stop_signal,
        workload_exit: ended.exit_status.and_then(|s| s.code()),
        sink: report.sink,
        checkpoints: ended.drained.checkpoints.count,
        checkpoint_bytes: ended.drained.checkpoints.bytes,
        checkpoint_seconds: ended.drained.checkpoints.seconds,
        copies: report.copies,
        codec_copies_input: report.codec_copies_input,
        codec_state_bytes: report.codec_state_bytes,
        stack_bytes_cleared: report.stack_bytes_cleared,
        stack_samples_uncut: report.stack_samples_uncut,
        max_ring_fill: report.max_fill,
        near_full_pushes: report.near_full_pushes,
        threads: Vec::new(),
        outputs: Vec::new(),
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_samples_carries_the_id_where_the_trailer_has_it() {
        let stype = st::TID | st::TIME | st::ID | st::CPU;
        let rec = lost_samples_record(5, 0xabcd, stype, 32);
        assert_eq!(rec.len(), 8 + 8 + 32);
        assert_eq!(u32::from_le_bytes(rec[0..4].try_into().unwrap()), 13);
        assert_eq!(u64::from_le_bytes(rec[8..16].try_into().unwrap()), 5);
        // tid (8) + time (8), then the id.
        assert_eq!(u64::from_le_bytes(rec[32..40].try_into().unwrap()), 0xabcd);
    }
}
