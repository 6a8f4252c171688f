//! `perfz record`: its command line read as perf reads perf record's
//! ([`super::record_args`]) into its options ([`Args`]), and recorded.

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::Context;
use perfz_codecs::CodecSpec;

use super::record_events::{events_with_filters, frequency, max_sample_rate};
use super::record_options::Args;
use crate::event::cpus::parse_list;
use crate::event::events::{CallGraph, Sampling};
use crate::event::target::Target;
use crate::notes::Notes;
use crate::quantity::parse_size;
use crate::session::{record, RecordOptions, DEFAULT_FREQUENCY};

/// `perfz record`, as perf parses `perf record`'s command line: `words` are
/// the words after `record`. Usage errors exit 129 and failures 255, as
/// perf's; a recorded command's exit status is perfz's.
pub fn main(words: &[std::ffi::OsString]) -> ExitCode {
    let argv = match super::record_args::parse(words) {
        Ok(super::record_args::Parsed::Args(a)) => a,
        Ok(super::record_args::Parsed::Exit(code)) => return code,
        Err(e) => {
            say!("  Error: {e}");
            say!("\n{}", super::record_args::USAGE_HEAD);
            say!("perfz record -h lists the options");
            return ExitCode::from(129);
        }
    };
    match run(*argv) {
        Ok(status) => ExitCode::from(status),
        Err(e) if super::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            say!("perfz: {}", super::said(&e));
            ExitCode::from(255)
        }
    }
}

/// Records as `a` asks; the exit status: the recorded command's (0 where
/// there was none, or a signal ended it).
pub fn run(a: Args) -> anyhow::Result<u8> {
    if a.perf.lists_registers() {
        super::write_stdout(&format!("{}\n", super::record_perf::register_list()))?;
        return Ok(0);
    }
    let mut notes = Notes::new();
    let send_to = super::export_otlp::record_endpoint(
        &a.otlp,
        &a.output,
        a.switch_output.is_some() || a.flight_recorder.is_some(),
    )?;
    let Some(opts) = options_of(&a, &mut notes)? else {
        return Ok(0); // --dry-run
    };
    let mut summary = record::run(&opts)?;
    summary.notes.splice(0..0, notes.into_vec());
    if let Some(p) = &a.stats_json {
        super::write_replacing(p, serde_json::to_string_pretty(&summary)?.as_bytes())
            .with_context(|| format!("writing {}", p.display()))?;
    }
    if !a.quiet {
        for n in &summary.notes {
            say!("perfz: note: {n}");
        }
        let asked = a.codec.is_some() || a.compression_level.is_some();
        crate::notes::say(&summary.render(asked));
    }
    if let Some(to) = send_to {
        let name = super::record_args::command_name;
        super::export_otlp::send_recording(&a.otlp, &to, &a.output, name)?;
    }
    Ok(exit_status(summary.stop_signal, summary.workload_exit))
}

/// perfz record's exit status as perf record's: the workload's (128 + the
/// signal that ended it: SIGTERM's 143 where a signal stopped perfz and it
/// ended the workload); without one, 128 + the signal that stopped perfz
/// (perf raises it again); SIGHUP's 129 always (perf has no handler and dies
/// of it, where perfz finishes the recording first).
fn exit_status(stop_signal: Option<i32>, workload_exit: Option<i32>) -> u8 {
    let code = match (stop_signal, workload_exit) {
        (Some(libc::SIGHUP), _) => 128 + libc::SIGHUP,
        (_, Some(c)) => c,
        (Some(sig), None) => 128 + sig,
        (None, None) => 0,
    };
    code as u8
}

/// What `a` asks perfz to record (`None` for `--dry-run`); `notes` gets
/// what was adjusted (a frequency lowered to the kernel's limit).
fn options_of(a: &Args, notes: &mut Notes) -> anyhow::Result<Option<RecordOptions>> {
    anyhow::ensure!(
        a.output.as_os_str() != "-" || !super::stdio::stdout_was_closed(),
        "-o -: standard output is closed, so the recording would be lost; give it a pipe or a file (perfz record -o - | perf report -i -)"
    );
    let events = events_of(a)?;
    let (sampling, call_graph) = sampling_of(a, notes)?;
    let (target, timing_command) = target_of(a)?;
    let codec = codec_of(a)?;
    let pages = pages_of(a)?;
    let attr_extra = a.perf.extra_attr(any_dwarf(call_graph, &events))?;
    let output = output_of(a);
    if a.dry_run {
        return Ok(None);
    }
    Ok(Some(RecordOptions {
        events,
        sampling,
        sampling_explicit: a.freq.is_some() || a.count.is_some(),
        call_graph,
        target,
        path: output,
        pages,
        realtime: a.realtime,
        mmap_flush: parse_size(&a.mmap_flush)? as usize,
        codec,
        compressed_format: a.compressed_format,
        switch_events: a.switch_events || a.latency,
        off_cpu_thresh: std::time::Duration::from_millis(a.off_cpu_thresh),
        clockid: a.clockid,
        inherit: !a.no_inherit,
        timing_command,
        aio: a.aio.map(usize::from),
        aio_backend: a.aio_backend,
        copy_meter: a.verbose > 0 || a.stats_json.is_some(),
        checkpoint: (a.checkpoint > 0.0).then(|| std::time::Duration::from_secs_f64(a.checkpoint)),
        argv: std::env::args_os().collect(),
        status: !a.quiet && std::io::stderr().is_terminal(),
        keep_stack_padding: a.keep_stack_padding,
        threads: a.threads.clone(),
        per_thread: a.per_thread,
        delay_ms: delay_ms_of(a)?,
        control: a.control.clone(),
        build_ids: build_id_options(a),
        synth: a.synth,
        proc_map_timeout: std::time::Duration::from_millis(a.proc_map_timeout),
        duration: a
            .duration
            .filter(|&d| d > 0.0)
            .map(std::time::Duration::from_secs_f64),
        max_size: a.max_size.as_deref().map(parse_size).transpose()?,
        switch_output: switch_output_of(a),
        switch_output_events: switch_events_of(a)?,
        vmlinux: a.vmlinux.as_deref().map(checked_vmlinux).transpose()?,
        switch_max_files: a.switch_max_files.map(|n| n as usize),
        flight_recorder: a.flight_recorder.as_deref().map(parse_size).transpose()?,
        attr_extra,
    }))
}

/// The events `a` records: each `-e` with its filters and cgroup, and
/// the off-CPU event with `--off-cpu`.
fn events_of(a: &Args) -> anyhow::Result<Vec<crate::event::EventSpec>> {
    let mut lists = events_with_filters(&a.events, &a.filter, a.exclude_perf, &a.words)?;
    super::record_cgroups::assign(&mut lists, &a.words)?;
    let mut events: Vec<_> = lists.into_iter().flatten().collect();
    super::record_uid::filter_events(a, &mut events)?;
    if a.off_cpu {
        events.push(crate::event::events::EventSpec::off_cpu());
    }
    Ok(events)
}

/// The data pages per ring `-m` asks for, if it does.
fn pages_of(a: &Args) -> anyhow::Result<Option<usize>> {
    a.mmap_pages
        .as_deref()
        .map(super::record_args::data_pages)
        .transpose()
}

/// The output path: `-o`'s, with a timestamp added for
/// `--timestamp-filename` (not to `-`).
fn output_of(a: &Args) -> std::path::PathBuf {
    if a.timestamp_filename && a.output.as_os_str() != "-" {
        crate::session::timestamped(&a.output)
    } else {
        a.output.clone()
    }
}

/// `-D`'s delay in milliseconds, if given.
fn delay_ms_of(a: &Args) -> anyhow::Result<Option<i64>> {
    a.delay
        .as_deref()
        .map(super::record_args::delay_ms)
        .transpose()
}

/// `--switch-output`'s mode: a signal where only `--switch-output-event`
/// is given.
fn switch_output_of(a: &Args) -> Option<crate::session::SwitchOutput> {
    match (a.switch_output, a.switch_output_event.is_empty()) {
        (None, false) => Some(crate::session::SwitchOutput::Signal),
        (s, _) => s,
    }
}

/// Whether any event samples dwarf stacks: all (`--call-graph dwarf`), or
/// one by its own `call-graph=dwarf` term.
fn any_dwarf(call_graph: CallGraph, events: &[crate::event::EventSpec]) -> bool {
    matches!(call_graph, CallGraph::Dwarf(_))
        || events
            .iter()
            .any(|e| matches!(e.terms.call_graph, Some(CallGraph::Dwarf(_))))
}

/// How often events sample (`-c`, `-F`, or perf's default up to the
/// kernel's limit) and which call chains they carry (`-g`, `--call-graph`).
fn sampling_of(a: &Args, notes: &mut Notes) -> anyhow::Result<(Sampling, CallGraph)> {
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
fn target_of(a: &Args) -> anyhow::Result<(Target, Vec<std::ffi::OsString>)> {
    let tasks = !a.pid.is_empty() || !a.tid.is_empty();
    let n_targets = [tasks, a.uid.is_some(), a.all_cpus || a.cpu.is_some()]
        .iter()
        .filter(|&&t| t)
        .count();
    if let Some(w) = overridden(a).filter(|_| !a.quiet) {
        say!("Warning:\n{w}");
    }
    let target = match (n_targets, a.command.is_empty()) {
        (0, false) => (Target::Workload(a.command.clone()), Vec::new()),
        // No target and no command: every CPU until Ctrl-C, as perf.
        (0, true) => (Target::Cpus(crate::event::cpus::online()?), Vec::new()),
        _ => (explicit_target(a)?, a.command.clone()),
    };
    anyhow::ensure!(
        a.cgroup.is_empty() || target.0.is_system_wide(),
        "-G: cgroup monitoring only available in system-wide mode (-a or -C), as perf's"
    );
    anyhow::ensure!(
        !(a.latency && target.0.is_system_wide()),
        "--latency: latency profiling is not supported with system-wide collection (-a, -C, or no command), as perf's; record a command, -p or -t"
    );
    Ok(target)
}

/// `--vmlinux FILE`, checked to be the running kernel's (perf caches any
/// file under the kernel's build id; a wrong one would name every kernel
/// frame wrongly in every later report); its absolute path.
fn checked_vmlinux(v: &std::path::Path) -> anyhow::Result<std::path::PathBuf> {
    use crate::synth::build_id;
    let path = std::fs::canonicalize(v).with_context(|| format!("--vmlinux {}", v.display()))?;
    let theirs = build_id::of_file(&path)
        .with_context(|| format!("--vmlinux {}: no ELF file with a build id", v.display()))?;
    let ours = build_id::of_kernel()
        .context("--vmlinux: cannot read the running kernel's build id (/sys/kernel/notes)")?;
    anyhow::ensure!(
        theirs == ours,
        "--vmlinux {}: its build id {} is not the running kernel's ({}): give this kernel's vmlinux",
        v.display(),
        build_id::hex(&theirs),
        build_id::hex(&ours)
    );
    Ok(path)
}

/// Where build ids go: -B, -N, --buildid-all, --buildid-mmap.
fn build_id_options(a: &Args) -> crate::session::BuildIdOptions {
    crate::session::BuildIdOptions {
        table: !a.no_buildid && !a.buildid_mmap,
        all: a.buildid_all,
        cache: !a.no_buildid && !a.no_buildid_cache && !a.buildid_mmap,
        in_mmaps: a.buildid_mmap,
    }
}

/// `--switch-output-event`'s events, in perf's grammar.
fn switch_events_of(a: &Args) -> anyhow::Result<Vec<crate::event::EventSpec>> {
    let mut next_group = 0;
    let mut events = Vec::new();
    for list in &a.switch_output_event {
        let parsed = crate::event::parse::parse_events(list, &mut next_group)
            .map_err(|e| anyhow::anyhow!("--switch-output-event {list}: {e}"))?;
        events.extend(parsed);
    }
    Ok(events)
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

/// perf's warning where more than one kind of target was given, as its
/// target__validate orders them: -p / -t win over -C, -u and -a, and -u
/// over -C and -a; the first override is said.
fn overridden(a: &Args) -> Option<&'static str> {
    let tasks = !a.pid.is_empty() || !a.tid.is_empty();
    let (uid, cpu, system) = (a.uid.is_some(), a.cpu.is_some(), a.all_cpus);
    // -u with -a or -C: both taken (perf 6.16+: -u is system-wide).
    [
        (tasks && cpu, "PID/TID switch overriding CPU"),
        (tasks && uid, "PID/TID switch overriding UID"),
        (tasks && system, "PID/TID switch overriding SYSTEM"),
    ]
    .into_iter()
    .find_map(|(on, w)| on.then_some(w))
}

/// The target -p, -t, -C or -a names, the first of them in that order
/// winning (perf: -p makes -t its list too); -u alone is every CPU, as
/// perf 6.16+ records it (its events keep the user's samples:
/// record_uid.rs).
fn explicit_target(a: &Args) -> anyhow::Result<Target> {
    if !a.pid.is_empty() {
        return Ok(Target::Pids(a.pid.clone()));
    }
    if !a.tid.is_empty() {
        return Ok(Target::Tids(a.tid.clone()));
    }
    Ok(if let Some(list) = &a.cpu {
        Target::Cpus(parse_list(list)?)
    } else {
        Target::Cpus(crate::event::cpus::online()?)
    })
}

#[cfg(test)]
mod tests {
    use super::exit_status;

    /// As perf 6.12 exits: `perf record -- sleep 5` and `perf record -a`
    /// sent SIGINT, SIGTERM and SIGHUP (143 143 129; 130 143 129).
    #[test]
    fn stopped_by_a_signal_perfz_exits_as_perf() {
        let ended = Some(128 + libc::SIGTERM);
        assert_eq!(exit_status(Some(libc::SIGINT), ended), 143);
        assert_eq!(exit_status(Some(libc::SIGTERM), ended), 143);
        assert_eq!(exit_status(Some(libc::SIGHUP), ended), 129);
        assert_eq!(exit_status(Some(libc::SIGINT), None), 130);
        assert_eq!(exit_status(Some(libc::SIGTERM), None), 143);
        assert_eq!(exit_status(Some(libc::SIGHUP), None), 129);
        assert_eq!(exit_status(None, Some(7)), 7);
        assert_eq!(exit_status(None, None), 0);
    }
}
