//! `perfz record`: perf record's options, plus `--codec`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use perfz_codecs::CodecSpec;

use super::convert::parse_spec;
use super::record_events::{events_with_filters, frequency, max_sample_rate};
use crate::event::cpus::parse_list;
use crate::event::events::{CallGraph, Sampling};
use crate::event::target::Target;
use crate::session::{record, RecordOptions, DEFAULT_FREQUENCY};
use crate::units::parse_size;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Events to sample, as perf spells them (default cpu-clock): comma
    /// lists, `{a,b}:S` groups, cpu-clock, task-clock, page-faults, ...,
    /// cycles and cache events (L1-dcache-load-misses) where the PMU allows,
    /// raw rNNNN, tracepoints sys:name (globs), pmu/term=value/, per-event
    /// terms (cpu-clock/period=10000/), modifiers :u :k :h :G :H :p :P :D.
    #[arg(short, long = "event", value_name = "EVENTS")]
    events: Vec<String>,
    /// An ftrace filter for the tracepoints of the -e before it (perf's
    /// --filter), e.g. 'prev_state == 1'.
    #[arg(long, value_name = "FILTER")]
    filter: Vec<String>,
    /// Sampling frequency in Hz, or `max` (the kernel's
    /// perf_event_max_sample_rate).
    #[arg(
        short = 'F',
        long = "freq",
        conflicts_with = "count",
        value_name = "HZ|max"
    )]
    freq: Option<String>,
    /// Sampling period (events between samples).
    #[arg(short = 'c', long = "count")]
    count: Option<u64>,
    /// Record call chains with frame pointers (same as --call-graph fp).
    #[arg(short = 'g')]
    g: bool,
    /// Call chains: fp, or dwarf[,SIZE] (registers + SIZE bytes of user stack, default 8192).
    #[arg(long = "call-graph", value_name = "MODE")]
    call_graph: Option<String>,
    /// Record existing processes (all their threads), comma separated.
    #[arg(short, long, value_delimiter = ',')]
    pid: Vec<i32>,
    /// Record existing threads, comma separated.
    #[arg(short, long, value_delimiter = ',')]
    tid: Vec<i32>,
    /// Record every online CPU (also what perfz does with no target and no
    /// command, as perf).
    #[arg(short, long = "all-cpus")]
    all_cpus: bool,
    /// Record the processes of this user (name or number).
    #[arg(short, long, value_name = "USER")]
    uid: Option<String>,
    /// Record these CPUs (e.g. 0-3,5).
    #[arg(short = 'C', long = "cpu", value_name = "LIST")]
    cpu: Option<String>,
    /// Ring buffer data size: pages (a power of two) or a size like 512K.
    #[arg(short, long = "mmap-pages", value_name = "PAGES|SIZE")]
    mmap_pages: Option<String>,
    /// Drain the rings at this SCHED_FIFO priority (as perf's -r): the
    /// drain runs as soon as it wakes, before other work on its CPU. Needs
    /// root or CAP_SYS_NICE (or an RLIMIT_RTPRIO allowing PRIO).
    #[arg(short = 'r', long = "realtime", value_name = "PRIO", value_parser = clap::value_parser!(i32).range(1..=99))]
    realtime: Option<i32>,
    /// Don't drain a ring holding less than SIZE bytes (except at the end).
    #[arg(long = "mmap-flush", value_name = "SIZE", default_value = "1")]
    mmap_flush: String,
    /// Codec: none, zstd[:LEVEL][,wlog=N][,long][,oneshot], lz4, snappy
    /// (default zstd:3 into a file, none into a pipe; `zstd` alone is level
    /// 1, as perf -z). A compressed pipe (`-o -` with a codec) is not read by
    /// every perf tool (perf 6.1's report --task and --stats, inject): give
    /// none for those.
    #[arg(long, value_name = "SPEC", value_parser = parse_spec, conflicts_with = "compression_level")]
    codec: Option<CodecSpec>,
    /// perf's -z[N] / --compression-level[=N]: zstd at level N (1 alone).
    #[arg(short = 'z', long = "compression-level", value_name = "n", num_args = 0..=1, default_missing_value = "1", require_equals = true)]
    compression_level: Option<i32>,
    /// Output file; `-` writes pipe mode to stdout (uncompressed unless
    /// --codec or -z asks).
    #[arg(short, long, default_value = "perf.data")]
    output: PathBuf,
    /// Record context switches.
    #[arg(long = "switch-events")]
    switch_events: bool,
    /// Off-CPU time: where the target's threads wait, by stack, as perf's
    /// offcpu-time event (period = nanoseconds off CPU), beside -e.
    #[arg(long = "off-cpu")]
    off_cpu: bool,
    /// --off-cpu: waits shorter than this many ms are added up per (thread,
    /// stack) and written each second, longer ones one sample each (perf
    /// 6.16's option and default).
    #[arg(long = "off-cpu-thresh", value_name = "MS", default_value_t = 500)]
    off_cpu_thresh: u64,
    /// The samples' clock, as perf's -k: mono (jitdumps' clock), raw, real, boot, tai, or an id.
    #[arg(short = 'k', long = "clockid", value_name = "CLOCK", value_parser = crate::event::clock::parse)]
    clockid: Option<i32>,
    /// Don't follow child processes and threads.
    #[arg(short = 'i', long = "no-inherit")]
    no_inherit: bool,
    /// No summary.
    #[arg(short, long)]
    quiet: bool,
    /// Write the summary numbers as JSON to FILE.
    #[arg(long = "stats-json", value_name = "FILE")]
    stats_json: Option<PathBuf>,
    /// Write asynchronously with N buffers in flight (1..=4, default 1).
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "1", require_equals = true, value_parser = clap::value_parser!(u8).range(1..=4))]
    aio: Option<u8>,
    /// How --aio writes: io_uring, a pwrite thread, or auto (io_uring where available).
    #[arg(
        long = "aio-backend",
        value_name = "auto|uring|thread",
        default_value = "auto"
    )]
    aio_backend: crate::session::AioBackend,
    /// Keep the bytes of dwarf stack dumps that the kernel did not write
    /// (stale ring contents past each sample's dyn_size) as they are, like
    /// perf; by default perfz drops them: each sample's stack dump is cut to
    /// the bytes the kernel wrote (perf reads only dyn_size bytes, so
    /// nothing it shows changes).
    #[arg(long = "keep-stack-padding")]
    keep_stack_padding: bool,
    /// Make the file readable by perf every SECONDS while recording, so a
    /// crash (kill -9, full disk) loses at most that much; 0 = only at the end.
    #[arg(long, value_name = "SECONDS", default_value = "1", value_parser = crate::units::parse_seconds)]
    checkpoint: f64,
    /// Drain the rings with parallel threads, each with its own codec and
    /// data file; the output becomes a directory (perf's --threads format).
    /// SPEC: cpu (one thread per CPU, the default), core, package, numa, N
    /// threads, or masks CPUS/AFFINITY:CPUS/AFFINITY... Works with --aio,
    /// --switch-output and --flight-recorder (each output a directory).
    #[arg(long, value_name = "SPEC", num_args = 0..=1, default_missing_value = "cpu", require_equals = true)]
    threads: Option<crate::session::ThreadSpec>,
    /// One ring per recorded task instead of one per CPU (perf's
    /// --per-thread); the tasks' future children are not followed.
    #[arg(long = "per-thread")]
    per_thread: bool,
    /// Wait MS milliseconds after the start before sampling (mmap and comm
    /// are tracked meanwhile); -1: start disabled until --control enables.
    #[arg(
        short = 'D',
        long = "delay",
        value_name = "MS",
        allow_negative_numbers = true
    )]
    delay: Option<String>,
    /// perf's control channel: `fifo:CTL[,ACK]` or `fd:CTL[,ACK]`; write
    /// `enable`, `disable`, `stop` or `ping` to it (each answered `ack`).
    #[arg(long, value_name = "fifo:CTL[,ACK]|fd:CTL[,ACK]")]
    control: Option<crate::session::ControlSpec>,
    /// Stop after SECONDS (the workload, if any, is ended as on Ctrl-C).
    #[arg(long, value_name = "SECONDS", value_parser = crate::units::parse_seconds)]
    duration: Option<f64>,
    /// Stop cleanly once the output holds SIZE bytes (e.g. 100M): the file
    /// is finalized and opens in perf.
    #[arg(long = "max-size", value_name = "SIZE")]
    max_size: Option<String>,
    /// Write a new complete perf.data (OUTPUT.<timestamp>) on SIGUSR2
    /// (`signal`, the default), every SIZE bytes (e.g. 100M) or every TIME
    /// (e.g. 30s, 5m, 1h).
    #[arg(long = "switch-output", value_name = "signal|SIZE|TIME", num_args = 0..=1, default_missing_value = "signal", require_equals = true)]
    switch_output: Option<crate::session::SwitchOutput>,
    /// With --switch-output: keep only the newest N outputs.
    #[arg(long = "switch-max-files", value_name = "N", requires = "switch_output", value_parser = clap::value_parser!(u32).range(1..))]
    switch_max_files: Option<u32>,
    /// Keep the newest SIZE bytes (e.g. 64M) of *compressed* trace in
    /// memory instead of writing it; SIGUSR2, `--control` `snapshot`, and the
    /// end write what it holds as OUTPUT.<timestamp>.
    #[arg(long = "flight-recorder", value_name = "SIZE")]
    flight_recorder: Option<String>,
    /// No build-id table (and no cache) at the end.
    #[arg(short = 'B', long = "no-buildid")]
    no_buildid: bool,
    /// Don't add the recorded DSOs to perf's build-id cache (~/.debug).
    #[arg(short = 'N', long = "no-buildid-cache")]
    no_buildid_cache: bool,
    /// Build ids of every mapped DSO, not only those samples hit.
    #[arg(long = "buildid-all")]
    buildid_all: bool,
    /// Build ids in the MMAP2 records only (every CPU too), no build-id
    /// table or cache at the end (perf's --buildid-mmap).
    #[arg(long = "buildid-mmap")]
    buildid_mmap: bool,
    /// Parse the options, then exit.
    #[arg(long = "dry-run")]
    dry_run: bool,
    /// Write to OUTPUT.<timestamp> (perf's --timestamp-filename).
    #[arg(long = "timestamp-filename")]
    timestamp_filename: bool,
    /// The first and last sample times in the header (perfz always writes
    /// them, as HEADER_SAMPLE_TIME).
    #[arg(long = "timestamp-boundary")]
    timestamp_boundary: bool,
    /// Fail where -F is above the kernel's maximum instead of lowering it.
    #[arg(long = "strict-freq")]
    strict_freq: bool,
    /// Filter perfz's own task out of the tracepoints of the -e before it
    /// (`common_pid != PID`).
    #[arg(long = "exclude-perf")]
    exclude_perf: bool,
    /// Which side band of existing tasks to write at the start: all, task
    /// (names and forks), mmap (maps too), cgroup, no.
    #[arg(
        long = "synth",
        value_name = "no|all|task|mmap|cgroup",
        default_value = "all"
    )]
    synth: crate::session::Synth,
    /// Stop reading one task's /proc maps after MS milliseconds (perf's
    /// default 500), writing what was read.
    #[arg(long = "proc-map-timeout", value_name = "MS", default_value_t = 500)]
    proc_map_timeout: u64,
    /// Threads synthesizing the side band (perfz uses one; the file is the
    /// same whatever the number).
    #[arg(long = "num-thread-synthesize", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    num_thread_synthesize: Option<u32>,
    /// Print how many bytes the push path read, copied, compressed and wrote.
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
    #[command(flatten)]
    perf: super::record_perf::PerfArgs,
    /// The command to record, with its arguments: the words after the
    /// options (or after `--`), as perf's parse-options splits them.
    #[arg(skip)]
    pub(super) command: Vec<String>,
    /// The options as perf's parse-options read them, one word each (the
    /// order of -e, --filter and --exclude-perf).
    #[arg(skip)]
    pub(super) words: Vec<String>,
}

/// `perfz record`, as perf parses `perf record`'s command line: `words` are
/// the words after `record`. Usage errors exit 129 and failures 255, as
/// perf's; a recorded command's exit status is perfz's.
pub fn main(words: &[String]) -> ExitCode {
    let argv = match super::record_args::parse(words) {
        Ok(super::record_args::Parsed::Args(a)) => a,
        Ok(super::record_args::Parsed::Exit(code)) => return code,
        Err(e) => {
            eprintln!("  Error: {e}");
            eprintln!("\n{}", super::record_args::USAGE_HEAD);
            eprintln!("perfz record -h lists the options");
            return ExitCode::from(129);
        }
    };
    match run(*argv) {
        Ok(status) => ExitCode::from(status),
        Err(e) if super::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perfz: {e:#}");
            ExitCode::from(255)
        }
    }
}

/// Records as `a` asks; the exit status: the recorded command's (0 where
/// there was none, or a signal ended it).
pub fn run(a: Args) -> anyhow::Result<u8> {
    if a.perf.lists_registers() {
        println!("{}", super::record_perf::register_list());
        return Ok(0);
    }
    let mut notes = Vec::new();
    let Some(opts) = options_of(&a, &mut notes)? else {
        return Ok(0); // --dry-run
    };
    let mut summary = record(&opts)?;
    summary.notes.splice(0..0, notes);
    if let Some(p) = &a.stats_json {
        super::write_replacing(p, serde_json::to_string_pretty(&summary)?.as_bytes())
            .with_context(|| format!("writing {}", p.display()))?;
    }
    if !a.quiet {
        for n in &summary.notes {
            eprintln!("perfz: note: {n}");
        }
        eprint!("{}", summary.render());
    }
    Ok(summary.workload_exit.map_or(0, |c| c as u8))
}

/// What `a` asks perfz to record (`None` for `--dry-run`); `notes` gets
/// what was adjusted (a frequency lowered to the kernel's limit).
fn options_of(a: &Args, notes: &mut Vec<String>) -> anyhow::Result<Option<RecordOptions>> {
    anyhow::ensure!(
        a.output.as_os_str() != "-" || !super::stdio::stdout_was_closed(),
        "-o -: standard output is closed, so the recording would be lost; give it a pipe or a file (perfz record -o - | perf report -i -)"
    );
    let mut events = events_with_filters(&a.events, &a.filter, a.exclude_perf, &a.words)?;
    if a.off_cpu {
        events.push(crate::event::events::EventSpec::off_cpu());
    }
    let (sampling, call_graph) = sampling_of(a, notes)?;
    let (target, timing_command) = target_of(a)?;
    let codec = codec_of(a)?;
    let pages = a
        .mmap_pages
        .as_deref()
        .map(super::record_args::data_pages)
        .transpose()?;
    let attr_extra = a
        .perf
        .extra_attr(matches!(call_graph, CallGraph::Dwarf(_)))?;
    let output = if a.timestamp_filename && a.output.as_os_str() != "-" {
        crate::session::timestamped(&a.output)
    } else {
        a.output.clone()
    };
    if a.dry_run {
        return Ok(None);
    }
    let mmap_flush = parse_size(&a.mmap_flush)? as usize;
    Ok(Some(RecordOptions {
        events,
        sampling,
        sampling_explicit: a.freq.is_some() || a.count.is_some(),
        call_graph,
        target,
        output,
        pages,
        realtime: a.realtime,
        mmap_flush,
        codec,
        switch_events: a.switch_events,
        off_cpu_thresh: std::time::Duration::from_millis(a.off_cpu_thresh),
        clockid: a.clockid,
        inherit: !a.no_inherit,
        timing_command,
        aio: a.aio.map(usize::from),
        aio_backend: a.aio_backend,
        copy_meter: a.verbose > 0 || a.stats_json.is_some(),
        checkpoint: (a.checkpoint > 0.0).then(|| std::time::Duration::from_secs_f64(a.checkpoint)),
        argv: std::env::args().collect(),
        status: !a.quiet && std::io::stderr().is_terminal(),
        keep_stack_padding: a.keep_stack_padding,
        threads: a.threads.clone(),
        per_thread: a.per_thread,
        delay_ms: a
            .delay
            .as_deref()
            .map(super::record_args::delay_ms)
            .transpose()?,
        control: a.control.clone(),
        build_ids: crate::session::BuildIdOptions {
            table: !a.no_buildid && !a.buildid_mmap,
            all: a.buildid_all,
            cache: !a.no_buildid && !a.no_buildid_cache && !a.buildid_mmap,
            in_mmaps: a.buildid_mmap,
        },
        synth: a.synth,
        proc_map_timeout: std::time::Duration::from_millis(a.proc_map_timeout),
        duration: a
            .duration
            .filter(|&d| d > 0.0)
            .map(std::time::Duration::from_secs_f64),
        max_size: a.max_size.as_deref().map(parse_size).transpose()?,
        switch_output: a.switch_output,
        switch_max_files: a.switch_max_files.map(|n| n as usize),
        flight_recorder: a.flight_recorder.as_deref().map(parse_size).transpose()?,
        attr_extra,
    }))
}

/// How often events sample (`-c`, `-F`, or perf's default up to the
/// kernel's limit) and which call chains they carry (`-g`, `--call-graph`).
fn sampling_of(a: &Args, notes: &mut Vec<String>) -> anyhow::Result<(Sampling, CallGraph)> {
    let sampling = match (&a.freq, a.count) {
        (_, Some(c)) => Sampling::Period(c),
        (Some(f), None) => Sampling::Frequency(frequency(f, a.strict_freq, notes)?),
        (None, None) => Sampling::Frequency(
            DEFAULT_FREQUENCY.min(max_sample_rate().unwrap_or(DEFAULT_FREQUENCY)),
        ),
    };
    let call_graph = match (&a.call_graph, a.g) {
        (Some(m), _) => CallGraph::parse(m)?,
        (None, true) => CallGraph::FramePointer,
        (None, false) => CallGraph::None,
    };
    Ok((sampling, call_graph))
}

/// What to record (a command, -p, -t, -u, -a or -C; no target and no
/// command: every CPU, as perf), and the command that times an explicit
/// target.
fn target_of(a: &Args) -> anyhow::Result<(Target, Vec<String>)> {
    let targets = [
        !a.pid.is_empty(),
        !a.tid.is_empty(),
        a.all_cpus || a.cpu.is_some(),
        a.uid.is_some(),
    ];
    let n_targets = targets.iter().filter(|&&t| t).count();
    anyhow::ensure!(
        n_targets <= 1,
        "record one target: a command, or one of -p PID, -t TID, -u USER, -a, -C LIST (optionally with a command that times it)"
    );
    Ok(match (n_targets, a.command.is_empty()) {
        (0, false) => (Target::Workload(a.command.clone()), Vec::new()),
        // No target and no command: every CPU until Ctrl-C, as perf.
        (0, true) => (Target::Cpus(crate::event::cpus::online()?), Vec::new()),
        _ => (explicit_target(a)?, a.command.clone()),
    })
}

/// The codec: --codec, else -z or --compression-level (zstd), else the
/// default.
fn codec_of(a: &Args) -> anyhow::Result<CodecSpec> {
    Ok(match (a.codec, a.compression_level) {
        (Some(c), _) => c,
        (None, Some(l)) => {
            let s = format!("zstd:{l}");
            s.parse()
                .map_err(|e: perfz_codecs::Error| anyhow::anyhow!("--compression-level {l}: {e}"))?
        }
        // A pipe is read by every perf tool only uncompressed (perf 6.1's
        // report --task and --stats and inject stop at a COMPRESSED
        // record), as perf writes it without -z.
        (None, None) if a.output.as_os_str() == "-" => CodecSpec::None,
        (None, None) => CodecSpec::default(),
    })
}

fn explicit_target(a: &Args) -> anyhow::Result<Target> {
    if let Some(u) = &a.uid {
        let uid = super::record_args::resolve_user(u)?;
        let pids = crate::event::target::pids_of_user(uid)?;
        anyhow::ensure!(!pids.is_empty(), "-u {u}: user {uid} runs no process");
        return Ok(Target::Pids(pids));
    }
    Ok(if !a.pid.is_empty() {
        Target::Pids(a.pid.clone())
    } else if !a.tid.is_empty() {
        Target::Tids(a.tid.clone())
    } else if let Some(list) = &a.cpu {
        Target::Cpus(parse_list(list)?)
    } else {
        Target::Cpus(crate::event::cpus::online()?)
    })
}
