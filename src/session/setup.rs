//! Before anything is written: who is recorded, on which CPUs, the workload
//! forked and held before exec, the events opened. Nothing here touches the
//! output, so a failure leaves the user's files as they were.
//!
//! Ring pages: `-m`; else, with dwarf call graphs at a known rate, rings
//! sized to hold 32 ms of the stream (`ring::HOLD_MS`) within a memory
//! budget; with `--off-cpu` (no dwarf) 8 × perf's default; else perf's.
//! inherit is off with `--per-thread`, `-t` and system-wide. `-r`'s
//! SCHED_FIFO is taken later, by `Recording::start`, once the workload
//! runs: it must not inherit the policy.

use std::ffi::OsString;
use std::io;

use super::error::io_err;
use super::error::RecordError;
use super::options::RecordOptions;
use crate::event::attr_build::AttrOptions;
use crate::event::cpus;
use crate::event::events::{CallGraph, Sampling};
use crate::event::open::{EventSet, Tracking};
use crate::event::ring;
use crate::event::target::{resolve_command, threads_of, Target, Workload};
use crate::format::sample::id_trailer_size;
use crate::notes::Notes;

/// A recording ready to start.
pub struct Prepared {
    pub set: EventSet,
    /// The workload (or timing command), forked and waiting to exec. Dropped
    /// unstarted, it exits without running anything.
    pub workload: Option<Workload>,
    /// The processes recorded (the workload's pid, or `-p`'s).
    pub tgids: Vec<i32>,
    /// `--switch-output-event`: the events whose samples switch the output.
    pub switch_events: Option<super::switch_event::SwitchEvents>,
}

impl Drop for Prepared {
    fn drop(&mut self) {
        if let Some(w) = self.workload.take() {
            w.abort();
        }
    }
}

impl Prepared {
    /// The largest ring's data size (an async buffer holds a whole drain).
    pub fn ring_size(&self) -> usize {
        self.set
            .rings
            .iter()
            .map(|(_, r)| r.data_size())
            .max()
            .unwrap_or(1 << 19)
    }

    /// Where samples keep unwritten dwarf stack bytes, unless kept. Where
    /// the events' samples cannot be cut, a note says why.
    pub fn stack_cut(
        &self,
        keep_padding: bool,
        notes: &mut Notes,
    ) -> Option<crate::transform::StackCut> {
        if keep_padding {
            return None;
        }
        crate::transform::StackCut::for_attrs(&self.set.attrs).unwrap_or_else(|why| {
            notes.push(format!(
                "dwarf stacks are written whole (the ring's unwritten stack bytes are kept): {why}"
            ));
            None
        })
    }

    /// Bytes of the sample_id trailer of the first event's records.
    pub fn trailer_size(&self) -> usize {
        let a = &self.set.attrs[0].attr;
        if a.sample_id_all() {
            id_trailer_size(a.sample_type())
        } else {
            0
        }
    }
}

/// The workload forked and held; with the data on standard output (`-o
/// -`), its standard output goes to standard error, as perf sends it, so
/// that what it prints never lands in the data stream.
fn fork_held(argv: &[OsString], data_on_stdout: bool) -> Result<Workload, RecordError> {
    let start_err = |err: io::Error| RecordError::Start {
        cmd: argv[0].to_string_lossy().into_owned(),
        err,
    };
    let path = resolve_command(&argv[0]).map_err(start_err)?;
    Workload::prepare(&path, argv, data_on_stdout).map_err(start_err)
}

/// Resolves the target, forks the command held before exec, checks the
/// options that need the target, and opens the events.
pub fn prepare(o: &RecordOptions) -> Result<Prepared, RecordError> {
    let online = cpus::online().map_err(io_err("cannot read the online CPUs"))?;
    let mut workload = None;
    let (cpus, pids, tgids): (Vec<u32>, Vec<i32>, Vec<i32>) = match &o.target {
        Target::Workload(argv) => {
            let w = fork_held(argv, super::place::is_stdout(&o.path))?;
            let pid = w.pid;
            workload = Some(w);
            (online, vec![pid], vec![pid])
        }
        Target::Pids(list) => {
            let (tids, alive) = tasks_of(list)?;
            (online, tids, alive)
        }
        Target::Tids(list) => {
            if let Some(t) = list
                .iter()
                .find(|t| !std::path::Path::new(&format!("/proc/{t}")).exists())
            {
                return Err(RecordError::Usage(format!("no thread with tid {t}")));
            }
            (online, list.clone(), list.clone())
        }
        Target::Cpus(list) => (ring_cpus(o, list, online)?, vec![-1], Vec::new()),
    };
    if !o.timing_command.is_empty() {
        if let Some(w) = workload.take() {
            w.abort();
        }
        workload = Some(fork_held(
            &o.timing_command,
            super::place::is_stdout(&o.path),
        )?);
    }
    let set = open_events(o, &cpus, &pids)?;
    let switch_events = switch_events(o, &cpus, &pids)?;
    Ok(Prepared {
        set,
        workload,
        tgids,
        switch_events,
    })
}

/// Opens the recording's events on `cpus` and `pids` (with the tracking
/// dummy where the side band needs one) and notes what was adjusted.
fn open_events(o: &RecordOptions, cpus: &[u32], pids: &[i32]) -> Result<EventSet, RecordError> {
    check_enabling(o)?;
    let wide = wide_side_band(o, cpus);
    // A cgroup's events see its tasks only: the side band comes from a
    // dummy that sees every task, as perf's dummy:u.
    let cgroups = o.events.iter().any(|e| e.cgroup.is_some());
    let tracking_dummy = o.delay_ms.is_some() || o.control.is_some() || wide || cgroups;
    let rings = if o.per_thread { pids.len() } else { cpus.len() };
    let (pages, sized) = ring_pages(o, rings);
    let opts = attr_options(o, tracking_dummy);
    let (events, ratio_notes) = crate::event::ratio::apply(&o.events, &opts);
    // A refusal drops `workload`, which lets the held child exit unrun.
    let set = EventSet::open(
        &events,
        &opts,
        cpus,
        pids,
        pages,
        o.per_thread,
        if tracking_dummy {
            Tracking::Dummy {
                sampling_waits: o.delay_ms.is_some(),
                sampling_cpus: match (&o.target, wide) {
                    (Target::Cpus(list), true) => Some(list.clone()),
                    _ => None,
                },
            }
        } else {
            Tracking::First
        },
    )?;
    let mut set = set;
    ratio_notes.into_iter().for_each(|n| set.notes.push(n));
    if let Some(note) = sized.filter(|_| set.pages == pages) {
        set.notes.push(note);
    }
    Ok(set)
}

/// `--switch-output-event`'s events, open on the recording's `cpus` and
/// `pids` and watched (none without the option).
fn switch_events(
    o: &RecordOptions,
    cpus: &[u32],
    pids: &[i32],
) -> Result<Option<super::switch_event::SwitchEvents>, RecordError> {
    if o.switch_output_events.is_empty() {
        return Ok(None);
    }
    let opts = attr_options(o, false);
    super::switch_event::SwitchEvents::open(&o.switch_output_events, &opts, cpus, pids)
        .map(Some)
        .map_err(io_err("cannot open --switch-output-event's event"))
}

/// The threads of the processes `list` names, and those processes that
/// are still running (of many, `-u`, one may exit before it is looked at).
fn tasks_of(list: &[i32]) -> Result<(Vec<i32>, Vec<i32>), RecordError> {
    let mut tids = Vec::new();
    let mut alive = Vec::new();
    for &p in list {
        match threads_of(p) {
            Ok(t) => {
                tids.extend(t);
                alive.push(p);
            }
            Err(e) if list.len() > 1 && e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err(format!("cannot attach to pid {p}"))(e)),
        }
    }
    if alive.is_empty() {
        return Err(RecordError::Usage(
            "none of the processes is running any more".into(),
        ));
    }
    Ok((tids, alive))
}

/// `-D`, `--control` and `--per-thread` as the target allows them.
fn check_enabling(o: &RecordOptions) -> Result<(), RecordError> {
    if o.delay_ms.is_some_and(|d| d < -1) {
        return Err(RecordError::Usage(
            "-D/--delay takes milliseconds, or -1 to start disabled until --control enables".into(),
        ));
    }
    if o.delay_ms == Some(-1) && o.control.is_none() {
        return Err(RecordError::Usage(
            "-D -1 starts with the events disabled: give --control=fifo:CTL so they can be enabled"
                .into(),
        ));
    }
    if o.per_thread && o.target.is_system_wide() {
        return Err(RecordError::Usage(
            "--per-thread maps one ring per task: use it with a command, -p or -t, not with -a or -C".into(),
        ));
    }
    Ok(())
}

/// The CPUs with a ring for `-a` or `-C LIST`: the list (all online), or
/// every online CPU where a tracking dummy covers them all.
fn ring_cpus(o: &RecordOptions, list: &[u32], online: Vec<u32>) -> Result<Vec<u32>, RecordError> {
    if let Some(bad) = list.iter().find(|c| !online.contains(c)) {
        return Err(RecordError::Usage(format!(
            "cpu {bad} is not online (online: {})",
            cpus::format_list(&online)
        )));
    }
    Ok(if wide_side_band(o, &online) {
        online
    } else {
        list.to_vec()
    })
}

/// `-C` naming some CPUs only: the sampling events are opened there, and a
/// tracking dummy on every online CPU (`online`), so that every process's
/// maps and names are recorded wherever it ran, as perf 6.12 does (not with
/// `--threads`, whose drains each own the CPUs they sample).
fn wide_side_band(o: &RecordOptions, online: &[u32]) -> bool {
    matches!(&o.target, Target::Cpus(list) if list.len() < online.len())
        && o.threads.is_none()
        && !o.per_thread
}

/// How each event's attr is built, from the options (`tracking_dummy`: a
/// dummy event beside them carries the side band).
fn attr_options(o: &RecordOptions, tracking_dummy: bool) -> AttrOptions {
    let mut opts = attr_options_of(o, tracking_dummy);
    if crate::event::attr_build::ids_apart(&o.events, &opts, tracking_dummy) {
        opts.extra.sample_type |= crate::format::attr::sample_type::IDENTIFIER;
    }
    opts
}

/// [`attr_options`] before the events' own terms are looked at.
fn attr_options_of(o: &RecordOptions, tracking_dummy: bool) -> AttrOptions {
    let system_wide = o.target.is_system_wide();
    AttrOptions {
        sampling: o.sampling,
        call_graph: o.call_graph,
        with_id: o.events.len() + tracking_dummy as usize > 1,
        // Tracepoints sample their CPU (perf's default for them); every
        // event then does, so all records carry the same sample_id trailer.
        with_cpu: system_wide || o.events.iter().any(|e| e.tracepoint.is_some()),
        // The kernel maps no ring of an inherited per-task event, so
        // --per-thread records the named tasks only (as perf does); -t
        // names threads, not their children (perf's -t has no inherit).
        inherit: o.inherit && !system_wide && !o.per_thread && !matches!(o.target, Target::Tids(_)),
        enable_on_exec: matches!(o.target, Target::Workload(_)),
        switch_events: o.switch_events,
        // Build ids in MMAP2 records, but not on CPU-wide events: there the
        // kernel (6.18 here) leaks PERF_RECORD_MISC_MMAP_BUILD_ID into the
        // MMAP2 records of every other recorder on those CPUs, and a
        // concurrent `perf record` 6.1 reads their inode as a build id and
        // aborts (6 of 6 runs beside `perfz record -a`, and beside perf's
        // own `--buildid-mmap -a`). The build-id pass names hit DSOs anyway.
        build_id: !system_wide || o.build_ids.in_mmaps,
        sampling_explicit: o.sampling_explicit,
        clockid: o.clockid,
        with_period: o.events.iter().any(|e| e.off_cpu),
        extra: o.attr_extra,
    }
}

/// `--off-cpu`'s rings (frame pointers), in perf's default rings.
const OFF_CPU_RING_FACTOR: usize = 8;

/// Locked ring memory perfz gives itself when it sizes the rings: 1/64 of
/// the machine's memory, at most this much.
const SIZED_RINGS_MAX_TOTAL: usize = 512 << 20;
/// ...and at most this much per ring.
const SIZED_RING_MAX: usize = 16 << 20;

/// Pages per ring: `-m`, else perf's default, else (dwarf call graphs at a
/// known rate) rings sized to hold the stream for [`ring::HOLD_MS`] within
/// a memory budget, with the note that says so.
fn ring_pages(o: &RecordOptions, rings: usize) -> (usize, Option<String>) {
    let default = ring::default_pages();
    if let Some(p) = o.pages {
        return (p, None);
    }
    if o.events.iter().any(|e| e.off_cpu) && !matches!(o.call_graph, CallGraph::Dwarf(_)) {
        // Three records a switch: a switch-heavy program (a pipe's
        // ping-pong, 250 000 switches/s a CPU) fills perf's 512 KiB ring
        // in 7 ms.
        let pages = default * OFF_CPU_RING_FACTOR;
        return (
            pages,
            Some(format!(
                "--off-cpu: rings of {pages} pages ({} KiB; perf's default is {default} pages; -m sets it) \
                 to hold a switch-heavy stream",
                pages * ring::page_size() / 1024
            )),
        );
    }
    let CallGraph::Dwarf(stack) = o.call_graph else {
        return (default, None);
    };
    let rate = match o.sampling {
        Sampling::Frequency(f) => f,
        // A period: samples a second of the clock events (nanoseconds).
        Sampling::Period(p) if p > 0 => 1_000_000_000 / p,
        Sampling::Period(_) => return (default, None),
    };
    // --off-cpu: every switch-out is a sample with its own stack dump;
    // room for as many switch-outs as clock samples (a thread that sleeps
    // and is preempted about as often as it is sampled).
    let off_cpu = o.events.iter().any(|e| e.off_cpu);
    let rate = if off_cpu {
        rate.saturating_mul(2)
    } else {
        rate
    };
    let mem = crate::synth::features::mem_total_kb().map_or(1 << 30, |kb| kb as usize * 1024);
    let budget = (mem / 64).min(SIZED_RINGS_MAX_TOTAL) / rings.max(1);
    // A dwarf sample reserves its stack size, the registers (17 on x86-64)
    // and the fixed fields and kernel chain (about 512 bytes in all).
    let sample = u64::from(stack) + crate::advice::DWARF_SAMPLE_OVERHEAD;
    let pages = ring::pages_for_stream(rate, sample, default, budget.min(SIZED_RING_MAX));
    if pages <= default {
        return (default, None);
    }
    let mib = |p: usize| (p * ring::page_size()) as f64 / (1 << 20) as f64;
    (
        pages,
        Some(format!(
            "rings sized for dwarf stacks: {pages} pages ({:.0} MiB) per ring, {:.0} MiB locked in all \
             ({rate} samples/s{} of {stack}-byte stacks held for {} ms; perf's default is {default} pages; -m sets it)",
            mib(pages),
            mib(pages) * rings as f64,
            if off_cpu { " with --off-cpu's switch-outs" } else { "" },
            ring::HOLD_MS
        )),
    )
}

#[cfg(test)]
mod tests;
