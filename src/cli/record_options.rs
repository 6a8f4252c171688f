//! `perfz record`'s options as clap reads them: perf record's, plus
//! `--codec` (perf names its table of them `record_options` too;
//! docs/RECORD_OPTIONS.md has a row for each of perf's, taken or refused).

use std::path::PathBuf;

use perfz_codecs::CodecSpec;

use super::convert::parse_spec;

#[derive(Debug, clap::Args)]
#[command(group(
    clap::ArgGroup::new("switching")
        .multiple(true)
        .args(["switch_output", "switch_output_event"])
))]
pub struct Args {
    /// Events to sample, as perf spells them (default cpu-clock): comma
    /// lists, `{a,b}:S` groups, cpu-clock, task-clock, page-faults, ...,
    /// cycles and cache events (L1-dcache-load-misses) where the PMU allows,
    /// raw rNNNN, tracepoints sys:name (globs), pmu/term=value/, per-event
    /// terms (cpu-clock/period=10000/), modifiers :u :k :h :G :H :p :P :D.
    #[arg(short, long = "event", value_name = "EVENTS")]
    pub(super) events: Vec<String>,
    /// With -a or -C: count the events before it only in these cgroups
    /// (comma-separated, in the events' order; one names every event's),
    /// as perf's -G: one container's profile on a busy machine.
    #[arg(short = 'G', long = "cgroup", value_name = "name")]
    pub(super) cgroup: Vec<String>,
    /// An ftrace filter for the tracepoints of the -e before it (perf's
    /// --filter), e.g. 'prev_state == 1'.
    #[arg(long, value_name = "FILTER")]
    pub(super) filter: Vec<String>,
    /// Sampling frequency in Hz, or `max` (the kernel's
    /// perf_event_max_sample_rate).
    #[arg(
        short = 'F',
        long = "freq",
        conflicts_with = "count",
        value_name = "HZ|max"
    )]
    pub(super) freq: Option<String>,
    /// Sampling period (events between samples).
    #[arg(short = 'c', long = "count")]
    pub(super) count: Option<u64>,
    /// Record call chains with frame pointers (same as --call-graph fp).
    #[arg(short = 'g')]
    pub(super) g: bool,
    /// Call chains: fp, or dwarf[,SIZE] (registers + SIZE bytes of user stack, default 8192).
    #[arg(long = "call-graph", value_name = "MODE")]
    pub(super) call_graph: Option<String>,
    /// Record existing processes (all their threads), comma separated.
    #[arg(short, long, value_delimiter = ',')]
    pub(super) pid: Vec<i32>,
    /// Record existing threads, comma separated.
    #[arg(short, long, value_delimiter = ',')]
    pub(super) tid: Vec<i32>,
    /// Record every online CPU (also what perfz does with no target and no
    /// command, as perf).
    #[arg(short, long = "all-cpus")]
    pub(super) all_cpus: bool,
    /// Record the processes of this user (name or number).
    #[arg(short, long, value_name = "USER")]
    pub(super) uid: Option<String>,
    /// Record these CPUs (e.g. 0-3,5).
    #[arg(short = 'C', long = "cpu", value_name = "LIST")]
    pub(super) cpu: Option<String>,
    /// Ring buffer data size: pages (a power of two) or a size like 512K.
    #[arg(short, long = "mmap-pages", value_name = "PAGES|SIZE")]
    pub(super) mmap_pages: Option<String>,
    /// Drain the rings at this SCHED_FIFO priority (as perf's -r): the
    /// drain runs as soon as it wakes, before other work on its CPU. Needs
    /// root or CAP_SYS_NICE (or an RLIMIT_RTPRIO allowing PRIO).
    #[arg(short = 'r', long = "realtime", value_name = "PRIO", value_parser = clap::value_parser!(i32).range(1..=99))]
    pub(super) realtime: Option<i32>,
    /// Don't drain a ring holding less than SIZE bytes (except at the end).
    #[arg(long = "mmap-flush", value_name = "SIZE", default_value = "1")]
    pub(super) mmap_flush: String,
    /// Codec: none, zstd[:LEVEL][,wlog=N][,long][,oneshot], lz4, snappy
    /// (default zstd:3 into a file, none into a pipe; `zstd` alone is level
    /// 1, as perf -z). A compressed pipe (`-o -` with a codec) is not read by
    /// every perf tool (perf 6.1's report --task and --stats, inject): give
    /// none for those.
    #[arg(long, value_name = "SPEC", value_parser = parse_spec, conflicts_with = "compression_level")]
    pub(super) codec: Option<CodecSpec>,
    /// The record compressed data goes in: compressed
    /// (PERF_RECORD_COMPRESSED, the default: every perf since 5.x reads it)
    /// or compressed2 (PERF_RECORD_COMPRESSED2, as perf 6.16 and newer
    /// write with -z: perf before 6.16 cannot read it).
    #[arg(
        long = "compressed-format",
        value_name = "compressed|compressed2",
        default_value = "compressed"
    )]
    pub(super) compressed_format: crate::format::CompressedFormat,
    /// perf's -z[N] / --compression-level[=N]: zstd at level N (1 alone).
    #[arg(short = 'z', long = "compression-level", value_name = "n", num_args = 0..=1, default_missing_value = "1", require_equals = true)]
    pub(super) compression_level: Option<i32>,
    /// Output file; `-` writes pipe mode to stdout (uncompressed unless
    /// --codec or -z asks).
    #[arg(short, long, default_value = "perf.data")]
    pub(super) output: PathBuf,
    /// Record context switches.
    #[arg(long = "switch-events")]
    pub(super) switch_events: bool,
    /// Record what latency profiling needs (context switches, as perf's
    /// --latency): `perf report --latency`, `perfz export --latency`.
    #[arg(long = "latency")]
    pub(super) latency: bool,
    /// Off-CPU time: where the target's threads wait, by stack, as perf's
    /// offcpu-time event (period = nanoseconds off CPU), beside -e.
    #[arg(long = "off-cpu")]
    pub(super) off_cpu: bool,
    /// --off-cpu: waits shorter than this many ms are added up per (thread,
    /// stack) and written each second, longer ones one sample each (perf
    /// 6.16's option and default).
    #[arg(long = "off-cpu-thresh", value_name = "MS", default_value_t = 500)]
    pub(super) off_cpu_thresh: u64,
    /// The samples' clock, as perf's -k: mono (jitdumps' clock), raw, real, boot, tai, or an id.
    #[arg(short = 'k', long = "clockid", value_name = "CLOCK", value_parser = crate::event::clock::parse)]
    pub(super) clockid: Option<i32>,
    /// Don't follow child processes and threads.
    #[arg(short = 'i', long = "no-inherit")]
    pub(super) no_inherit: bool,
    /// No summary.
    #[arg(short, long)]
    pub(super) quiet: bool,
    /// Write the summary numbers as JSON to FILE.
    #[arg(long = "stats-json", value_name = "FILE")]
    pub(super) stats_json: Option<PathBuf>,
    /// Write asynchronously with N buffers in flight (1..=4, default 1).
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "1", require_equals = true, value_parser = clap::value_parser!(u8).range(1..=4))]
    pub(super) aio: Option<u8>,
    /// How --aio writes: io_uring, a pwrite thread, or auto (io_uring where available).
    #[arg(
        long = "aio-backend",
        value_name = "auto|uring|thread",
        default_value = "auto"
    )]
    pub(super) aio_backend: crate::session::AioBackend,
    /// Keep the bytes of dwarf stack dumps that the kernel did not write
    /// (stale ring contents past each sample's dyn_size) as they are, like
    /// perf; by default perfz drops them: each sample's stack dump is cut to
    /// the bytes the kernel wrote (perf reads only dyn_size bytes, so
    /// nothing it shows changes).
    #[arg(long = "keep-stack-padding")]
    pub(super) keep_stack_padding: bool,
    /// Make the file readable by perf every SECONDS while recording, so a
    /// crash (kill -9, full disk) loses at most that much; 0 = only at the end.
    #[arg(long, value_name = "SECONDS", default_value = "1", value_parser = crate::quantity::parse_seconds)]
    pub(super) checkpoint: f64,
    /// Drain the rings with parallel threads, each with its own codec and
    /// data file; the output becomes a directory (perf's --threads format).
    /// SPEC: cpu (one thread per CPU, the default), core, package, numa, N
    /// threads, or masks CPUS/AFFINITY:CPUS/AFFINITY... Works with --aio,
    /// --switch-output and --flight-recorder (each output a directory).
    #[arg(long, value_name = "SPEC", num_args = 0..=1, default_missing_value = "cpu", require_equals = true)]
    pub(super) threads: Option<crate::session::ThreadSpec>,
    /// One ring per recorded task instead of one per CPU (perf's
    /// --per-thread); the tasks' future children are not followed.
    #[arg(long = "per-thread")]
    pub(super) per_thread: bool,
    /// Wait MS milliseconds after the start before sampling (mmap and comm
    /// are tracked meanwhile); -1: start disabled until --control enables.
    #[arg(
        short = 'D',
        long = "delay",
        value_name = "MS",
        allow_negative_numbers = true
    )]
    pub(super) delay: Option<String>,
    /// perf's control channel: `fifo:CTL[,ACK]` or `fd:CTL[,ACK]`; write
    /// `enable`, `disable`, `stop` or `ping` to it (each answered `ack`).
    #[arg(long, value_name = "fifo:CTL[,ACK]|fd:CTL[,ACK]")]
    pub(super) control: Option<crate::session::ControlSpec>,
    /// Stop after SECONDS (the workload, if any, is ended as on Ctrl-C).
    #[arg(long, value_name = "SECONDS", value_parser = crate::quantity::parse_seconds)]
    pub(super) duration: Option<f64>,
    /// Stop cleanly once the output holds SIZE bytes (e.g. 100M): the file
    /// is finalized and opens in perf.
    #[arg(long = "max-size", value_name = "SIZE")]
    pub(super) max_size: Option<String>,
    /// Write a new complete perf.data (OUTPUT.<timestamp>) on SIGUSR2
    /// (`signal`, the default), every SIZE bytes (e.g. 100M) or every TIME
    /// (e.g. 30s, 5m, 1h).
    #[arg(long = "switch-output", value_name = "signal|SIZE|TIME", num_args = 0..=1, default_missing_value = "signal", require_equals = true)]
    pub(super) switch_output: Option<crate::session::SwitchOutput>,
    /// The running kernel's vmlinux: the kernel's entry in the build-id
    /// table and cache (perf report then finds its symbols and debug info).
    #[arg(long = "vmlinux", value_name = "file")]
    pub(super) vmlinux: Option<PathBuf>,
    /// Switch the output (as SIGUSR2) at each sample of this event, e.g.
    /// syscalls:sys_enter_clock_nanosleep; implies --switch-output.
    #[arg(long = "switch-output-event", value_name = "event")]
    pub(super) switch_output_event: Vec<String>,
    /// With --switch-output or --switch-output-event: keep only the newest
    /// N outputs.
    #[arg(long = "switch-max-files", value_name = "N", requires = "switching", value_parser = clap::value_parser!(u32).range(1..))]
    pub(super) switch_max_files: Option<u32>,
    /// Keep the newest SIZE bytes (e.g. 64M) of *compressed* trace in
    /// memory instead of writing it; SIGUSR2, `--control` `snapshot`, and the
    /// end write what it holds as OUTPUT.<timestamp>.
    #[arg(long = "flight-recorder", value_name = "SIZE")]
    pub(super) flight_recorder: Option<String>,
    /// No build-id table (and no cache) at the end.
    #[arg(short = 'B', long = "no-buildid")]
    pub(super) no_buildid: bool,
    /// Don't add the recorded DSOs to perf's build-id cache (~/.debug).
    #[arg(short = 'N', long = "no-buildid-cache")]
    pub(super) no_buildid_cache: bool,
    /// Build ids of every mapped DSO, not only those samples hit.
    #[arg(long = "buildid-all")]
    pub(super) buildid_all: bool,
    /// Build ids in the MMAP2 records only (every CPU too), no build-id
    /// table or cache at the end (perf's --buildid-mmap).
    #[arg(long = "buildid-mmap")]
    pub(super) buildid_mmap: bool,
    /// Parse the options, then exit.
    #[arg(long = "dry-run")]
    pub(super) dry_run: bool,
    /// Write to OUTPUT.<timestamp> (perf's --timestamp-filename).
    #[arg(long = "timestamp-filename")]
    pub(super) timestamp_filename: bool,
    /// The first and last sample times in the header (perfz always writes
    /// them, as HEADER_SAMPLE_TIME).
    #[arg(long = "timestamp-boundary")]
    pub(super) timestamp_boundary: bool,
    /// Fail where -F is above the kernel's maximum instead of lowering it.
    #[arg(long = "strict-freq")]
    pub(super) strict_freq: bool,
    /// Filter perfz's own task out of the tracepoints of the -e before it
    /// (`common_pid != PID`).
    #[arg(long = "exclude-perf")]
    pub(super) exclude_perf: bool,
    /// Which side band of existing tasks to write at the start: all, task
    /// (names and forks), mmap (maps too), cgroup, no.
    #[arg(
        long = "synth",
        value_name = "no|all|task|mmap|cgroup",
        default_value = "all"
    )]
    pub(super) synth: crate::session::Synth,
    /// Stop reading one task's /proc maps after MS milliseconds (perf's
    /// default 500), writing what was read.
    #[arg(long = "proc-map-timeout", value_name = "MS", default_value_t = 500)]
    pub(super) proc_map_timeout: u64,
    /// Threads synthesizing the side band (perfz uses one; the file is the
    /// same whatever the number).
    #[arg(long = "num-thread-synthesize", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(super) num_thread_synthesize: Option<u32>,
    /// Print how many bytes the push path read, copied, compressed and wrote.
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub(super) verbose: u8,
    #[command(flatten)]
    pub(super) perf: super::record_perf::PerfArgs,
    /// Where the finished recording is sent (OTLP/HTTP).
    #[command(flatten)]
    pub(super) otlp: super::export_otlp::OtlpArgs,
    /// The command to record, with its arguments: the words after the
    /// options (or after `--`), as perf's parse-options splits them.
    #[arg(skip)]
    pub(super) command: Vec<std::ffi::OsString>,
    /// The options as perf's parse-options read them, one word each (the
    /// order of -e, --filter and --exclude-perf).
    #[arg(skip)]
    pub(super) words: Vec<String>,
}
