//! Everything `perfz record` is asked to do, with its defaults and the one
//! validation every caller (the record CLI, `perfz eval`) goes through.

use std::ffi::OsString;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use super::control::ControlSpec;
use super::error::RecordError;
use super::layout::ThreadSpec;
use crate::event::events::{CallGraph, EventSpec, Sampling};
use crate::event::target::Target;
use crate::quantity;

/// Everything `perfz record` was asked to do.
#[derive(Clone, Debug)]
pub struct RecordOptions {
    /// `-e`: the events to sample, as perf spells them.
    pub events: Vec<EventSpec>,
    /// `-F HZ` or `-c N`: how often the events sample.
    pub sampling: Sampling,
    /// -F or -c was given (it replaces tracepoints' default period 1).
    pub sampling_explicit: bool,
    /// `-g` / `--call-graph`: what call chains the samples carry.
    pub call_graph: CallGraph,
    /// What is recorded: a workload, `-p`, `-t`, or CPUs (`-a`, `-C`).
    pub target: Target,
    /// `-o`: the recording's path, where its place is (a perf.data file, a
    /// directory with `--threads`); `-` = pipe mode to stdout.
    pub path: PathBuf,
    /// Data pages per ring; `None` = perf's default (dwarf streams: sized
    /// for the stream, see setup).
    pub pages: Option<usize>,
    /// `-r/--realtime PRIO`: the drain runs at this SCHED_FIFO priority.
    pub realtime: Option<i32>,
    /// Don't drain a ring holding fewer bytes than this (except at the end).
    pub mmap_flush: usize,
    /// `--codec` / `-z`: how records are compressed (`none`: raw records).
    pub codec: perfz_codecs::CodecSpec,
    /// `--compressed-format`: the record type compressed bytes go in
    /// (COMPRESSED, which every perf reads, unless asked).
    pub compressed_format: crate::format::CompressedFormat,
    /// `--switch-events`: record context switches (PERF_RECORD_SWITCH).
    pub switch_events: bool,
    /// `--off-cpu-thresh`: off-CPU waits shorter than this are added up
    /// per (thread, stack) and written each second.
    pub off_cpu_thresh: std::time::Duration,
    /// `-k`: the clock samples are timed by.
    pub clockid: Option<i32>,
    /// Follow child processes and threads (off with `--no-inherit`).
    pub inherit: bool,
    /// With -a / -C / -p / -t: a command that only times the recording (it
    /// runs after the events are enabled; the recording ends when it exits).
    pub timing_command: Vec<OsString>,
    /// The command line, for HEADER_CMDLINE (bytes, as perf writes them).
    pub argv: Vec<OsString>,
    /// `--aio[=N]`: N async buffers; `None` = serial writes.
    pub aio: Option<usize>,
    /// `--aio-backend`: how the async writes are done.
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
    /// `--vmlinux`: the running kernel's vmlinux, the kernel's entry in
    /// the build-id table and cache.
    pub vmlinux: Option<PathBuf>,
    /// `--switch-output-event`: each sample of these switches the output.
    pub switch_output_events: Vec<EventSpec>,
    /// `--switch-max-files`: keep only the newest N outputs.
    pub switch_max_files: Option<usize>,
    /// `--flight-recorder SIZE`: keep the newest SIZE bytes of compressed
    /// trace in memory, written out on SIGUSR2, `snapshot`, or the end.
    pub flight_recorder: Option<u64>,
    /// What perf record's sample and attr options (`-d`, `-P`, `-R`, `-s`,
    /// `--all-user`, `--no-buffering`, ...) add to every event.
    pub attr_extra: crate::event::attr_build::ExtraAttr,
    /// `--synth`: the side band of existing tasks written at the start.
    pub synth: Synth,
    /// `--proc-map-timeout`: how long one task's /proc maps may take to read.
    pub proc_map_timeout: Duration,
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
        if !s.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(bad());
        }
        let what = if quantity::is_duration(s) {
            quantity::parse_duration(s).map(SwitchOutput::Time)
        } else {
            quantity::parse_size(s).map(SwitchOutput::Size)
        };
        match what {
            Ok(SwitchOutput::Size(0)) | Err(_) => Err(bad()),
            Ok(SwitchOutput::Time(t)) if t.is_zero() => Err(bad()),
            Ok(w) => Ok(w),
        }
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
    /// Build ids in MMAP2 records on every CPU too (`--buildid-mmap`).
    pub in_mmaps: bool,
}

/// `--synth`: which side band of the tasks that exist at the start perfz
/// writes (perf's `perf_synth_opts`): their names and forks (`task`), their
/// maps too (`mmap`), the cgroups (`cgroup`, with `--all-cgroups`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Synth {
    /// COMM (and FORK, NAMESPACES) of existing tasks.
    pub task: bool,
    /// MMAP2 of existing tasks.
    pub mmap: bool,
    /// CGROUP records of existing cgroups.
    pub cgroup: bool,
}

impl Default for Synth {
    fn default() -> Self {
        Synth {
            task: true,
            mmap: true,
            cgroup: true,
        }
    }
}

impl FromStr for Synth {
    type Err = String;
    /// A comma list of `no`, `all`, `task`, `mmap` (task too), `cgroup`.
    fn from_str(s: &str) -> Result<Self, String> {
        let mut out = Synth {
            task: false,
            mmap: false,
            cgroup: false,
        };
        for w in s.split(',') {
            match w {
                "no" => {}
                "all" => out = Synth::default(),
                "task" => out.task = true,
                "mmap" => (out.task, out.mmap) = (true, true),
                "cgroup" => out.cgroup = true,
                _ => {
                    return Err(format!(
                        "--synth {s}: use no, all, task, mmap or cgroup (a comma list)"
                    ))
                }
            }
        }
        Ok(out)
    }
}

impl Default for BuildIdOptions {
    fn default() -> Self {
        BuildIdOptions {
            table: true,
            all: false,
            cache: true,
            in_mmaps: false,
        }
    }
}

/// Which async backend `--aio` uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AioBackend {
    /// io_uring, or the pwrite thread where io_uring is unavailable.
    Auto,
    /// io_uring only; the recording fails where it is unavailable.
    Uring,
    /// A writer thread doing `pwrite`.
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

/// perf's default frequency (-F), where the kernel allows it.
pub const DEFAULT_FREQUENCY: u64 = 4000;

impl Default for RecordOptions {
    /// `perfz record -o perf.data` of nothing yet: cpu-clock at 4000 Hz,
    /// no call graph, zstd at the recorder's level, perf's build-id habits.
    fn default() -> Self {
        RecordOptions {
            events: vec![EventSpec::parse("cpu-clock").expect("a known event")],
            sampling: Sampling::Frequency(DEFAULT_FREQUENCY),
            sampling_explicit: false,
            call_graph: CallGraph::None,
            target: Target::Workload(Vec::new()),
            path: PathBuf::from("perf.data"),
            pages: None,
            realtime: None,
            mmap_flush: 1,
            codec: perfz_codecs::CodecSpec::default(),
            compressed_format: Default::default(),
            switch_events: false,
            off_cpu_thresh: std::time::Duration::from_millis(500),
            clockid: None,
            inherit: true,
            timing_command: Vec::new(),
            argv: Vec::new(),
            aio: None,
            aio_backend: AioBackend::Auto,
            copy_meter: false,
            checkpoint: None,
            status: false,
            keep_stack_padding: false,
            threads: None,
            per_thread: false,
            delay_ms: None,
            control: None,
            build_ids: BuildIdOptions::default(),
            duration: None,
            max_size: None,
            switch_output: None,
            switch_output_events: Vec::new(),
            vmlinux: None,
            switch_max_files: None,
            flight_recorder: None,
            attr_extra: Default::default(),
            synth: Synth::default(),
            proc_map_timeout: Duration::from_millis(500),
        }
    }
}

impl RecordOptions {
    /// The checks of options against each other and this machine, before
    /// anything is opened or written.
    pub fn validate(&self) -> Result<(), RecordError> {
        let usage = |m: &str| Err(RecordError::Usage(m.into()));
        if let Sampling::Frequency(0) | Sampling::Period(0) = self.sampling {
            return usage("the sampling frequency/period must be at least 1 (-F/-c)");
        }
        self.codec.check_built()?;
        super::place::check(&self.path).map_err(RecordError::Output)?;
        let stdout = super::place::is_stream(&self.path);
        if self.flight_recorder.is_some()
            && (stdout || self.switch_output.is_some() || self.max_size.is_some())
        {
            return usage(
                "--flight-recorder writes snapshots (OUTPUT.<timestamp>) on SIGUSR2, `snapshot` or at the end: it takes -o FILE, and not --switch-output or --max-size",
            );
        }
        if self.flight_recorder.is_some_and(|c| c < 16 << 10) {
            return usage("--flight-recorder needs at least 16K of memory");
        }
        super::memory_asks::check(&super::memory_asks::Asks {
            flight_recorder: self.flight_recorder,
            pages: self.pages,
            aio: self.aio,
        })?;
        if self.threads.is_some() && self.per_thread {
            return usage(
                "--per-thread option is mutually exclusive to parallel streaming mode (--threads), as in perf",
            );
        }
        if self.switch_output.is_some() && stdout {
            return usage(
                "--switch-output writes a series of files and cannot write a pipe or a device: give -o FILE",
            );
        }
        if self.threads.is_some() && stdout {
            return usage(
                "--threads writes a directory of files and cannot write a pipe or a device: give -o DIR",
            );
        }
        self.check_off_cpu()
    }

    /// `--off-cpu`'s threshold (in nanoseconds, a u64) and its event beside
    /// the others.
    fn check_off_cpu(&self) -> Result<(), RecordError> {
        let usage = |m: String| Err(RecordError::Usage(m));
        if u64::try_from(self.off_cpu_thresh.as_nanos()).is_err() {
            return usage(format!(
                "--off-cpu-thresh {} ms is more than the {} ms a wait's nanoseconds can hold (u64)",
                self.off_cpu_thresh.as_millis(),
                u64::MAX / 1_000_000
            ));
        }
        let context_switches = |e: &&EventSpec| {
            !e.off_cpu && e.type_ == crate::format::attr::TYPE_SOFTWARE && e.config == 3
        };
        let off_cpu = self.events.iter().any(|e| e.off_cpu);
        if let Some(e) = self
            .events
            .iter()
            .find(context_switches)
            .filter(|_| off_cpu)
        {
            return usage(format!(
                "--off-cpu samples the software context-switches event, and so does -e {}: the kernel \
                 writes one switch's samples of two such events with one id (the last opened's, in \
                 every ring), so their samples cannot be told apart; record one or the other",
                e.name
            ));
        }
        Ok(())
    }
}
