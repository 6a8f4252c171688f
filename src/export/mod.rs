//! `perfz export`: recordings to the formats people look at profiles in.
//! Two streaming passes over every input (perfz's and perf's files in every
//! codec, pipes, `--threads` directories, several `--switch-output`
//! outputs merged): the first follows the side band (the processes' names
//! and maps through time), the second names each sample's callchain as it
//! was at the sample's time and collapses it. Memory grows with the side
//! band, the symbol tables and the distinct stacks, not with the samples
//! (but for speedscope's, which keeps each sample's time, weight and stack
//! id to sort them by time).
//!
//! ```text
//! pass 1: PerfReader ─ side band (by time) ─▶ Timeline (names per thread, maps per process)
//! pass 2: PerfReader ─ SAMPLE ─▶ callchain (kernel / user contexts) at its time
//!         (dwarf: kernel part + user frames unwound from regs and stack, unwind/)
//!         ─▶ Symbols ─▶ gather::Gather: Folded (folded lines, svg) | pprof::ProfileBuilder (pprof)
//!                       | speedscope::Speedscope (speedscope)
//! ```
//!
//! Its rooms, each opened by its own `mod.rs`:
//!
//! - `recording/`: what the recording says: its events, the side band
//!   through time (the first pass, `survey`), each process's maps;
//! - `files/`: the files it maps: found (`--symfs`, the build-id cache,
//!   debuginfod), opened, their load maps;
//! - `name/`: each distinct frame named as `perf script` names it (symbol
//!   tables, inline frames, kallsyms, JIT maps and dumps, demangling);
//! - `unwind/`: dwarf recordings' user stacks, unwound;
//! - `write/`: what is written: folded lines and svg, pprof, speedscope,
//!   two recordings' difference ([`diff`]), `perfz report`'s table.
//!
//! The front door is [`export`] and [`diff`] with their options and
//! results; [`Elf`], [`Inline`] and [`unwind_one`] are open to the fuzz
//! targets.

pub(crate) mod files;
pub(crate) mod name;
pub(crate) mod recording;
pub(crate) mod unwind;
pub(crate) mod write;

use std::path::PathBuf;

use crate::format::record::misc;
use crate::format::FormatError;
use files::{debuginfod, locate};
use name::frames::{FrameTable, CONTEXT_HV, CONTEXT_KERNEL, CONTEXT_MAX, CONTEXT_USER};
use name::symbols::Symbols;
use name::{kallsyms, unnamed};
use recording::survey::{self, next, open_input, Survey};
use recording::{events, parallelism, view};
use unwind::dwarf::{Unwind, UserState};
use write::gather::Gather;
use write::{pprof, speedscope};

pub use files::locate::Symfs;
pub use name::inline::Inline;
pub use name::symbols::Elf;
pub use name::unnamed::UnnamedFile;
pub use recording::events::Time;
pub use unwind::dwarf::unwind_one;
pub use write::diff::{diff, Diffed};
pub use write::folded::FoldOptions;
pub use write::gather::FlameOptions;

/// What an export read.
#[derive(Debug, Default, serde::Serialize)]
pub struct Exported {
    /// Samples exported.
    pub samples: u64,
    /// Distinct stacks written (folded lines, or pprof samples).
    pub stacks: usize,
    /// Frames without a function name.
    pub unknown_frames: u64,
    /// Frames over all samples, each inlined function counted as a frame of its own.
    pub frames: u64,
    /// Whether kernel frames were named (the recording is from this kernel).
    pub kernel_symbols: bool,
    /// Samples whose user stack was unwound from their stack copy (dwarf).
    pub unwound: u64,
    /// Why dwarf stacks were not unwound, where they were not.
    pub not_unwound: Option<String>,
    /// The event exported (`a + b`: on- and off-CPU time, in nanoseconds).
    pub event: Option<String>,
    /// The recording's other events, left out (`-e` chooses).
    pub other_events: Vec<String>,
    /// Inputs cut short or damaged, read up to the damage.
    pub cut_short: Vec<String>,
    /// What went wrong asking debuginfod servers, once each.
    pub debuginfod: Vec<String>,
    /// The weights' unit: `nanoseconds` or `none` (counts).
    pub unit: &'static str,
    /// The files whose frames stayed without a name, most first.
    pub unnamed: Vec<UnnamedFile>,
}

/// What `perfz export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// stackcollapse-perf's lines.
    Folded,
    /// A flame graph (inferno's, as flamegraph.pl draws them).
    Svg,
    /// A gzipped pprof profile.
    Pprof,
    /// speedscope's JSON: a time-ordered profile per thread.
    Speedscope,
}

/// How to export.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// How stacks are folded into lines (folded and svg output).
    pub fold: FoldOptions,
    /// Only the samples of this event (its name as perf prints it).
    pub event: Option<String>,
    /// With off-CPU samples: wall-clock time, or on- or off-CPU alone.
    pub time: Time,
    /// Inline frames where DWARF says so, as perf script shows them.
    pub inline: bool,
    /// `--symfs`: the recorded paths are looked up under this root.
    pub symfs: Option<Symfs>,
    /// `--kallsyms`: the kernel's symbols from this file, whichever
    /// kernel the recording is from.
    pub kallsyms: Option<PathBuf>,
    /// The debuginfod servers (space-separated URLs) to fetch missing
    /// symbols from; None or empty: none.
    pub debuginfod: Option<String>,
    /// How an svg flame graph is drawn.
    pub flame: FlameOptions,
    /// A latency profile: each sample weighs its period divided by how many
    /// of the program's threads ran then (`perf report --latency`).
    pub latency: bool,
}

/// Exports every sample of `inputs` (read in order, as one recording) to
/// `out` as `format`: a first pass follows the side band, a second names
/// each sample's frames as they were at its time.
pub fn export(
    inputs: &[PathBuf],
    format: ExportFormat,
    o: &ExportOptions,
    out: &mut dyn std::io::Write,
) -> Result<Exported, FormatError> {
    // Read beside the first pass; left unread where the recording turns
    // out to be from another kernel.
    let kallsyms = kallsyms::Kallsyms::read(kallsyms_file(o));
    let survey = survey::survey(inputs)?;
    let Survey { procs, events, .. } = &survey;
    let first = survey.first_event.as_deref();
    let chosen = events::choose(events, first, o.event.as_deref(), o.time, format)?;
    let latency = latency_of(&survey, o)?;
    let (mut syms, locate) = sources(&survey, o, kallsyms);
    let (mut done, mut unwind) = begin(&survey, &chosen, &locate);
    done.kernel_symbols |= o.kallsyms.is_some();
    let mut gather = Gather::new(format, &o.flame);
    let mut table = FrameTable::default();
    let mut views = view::Views::new(procs);
    let mut ids = Vec::new();
    let (mut first, mut last) = (u64::MAX, 0u64);
    for input in inputs {
        let (mut r, cut) = open_input(input)?;
        while let Some((rec, meta)) = next(&mut r, cut)? {
            let Some((attr, slot)) = events::wanted(&rec, meta, &chosen) else {
                continue;
            };
            let s =
                crate::format::sample::Sample::parse(rec.body(), attr, meta.endian, rec.offset)?;
            let (pid, tid) = (s.pid.unwrap_or(0), s.tid.unwrap_or(0));
            let time = s.time.unwrap_or(u64::MAX);
            if let Some(t) = s.time {
                first = first.min(t);
                last = last.max(t);
            }
            let maps = views.at(pid, time);
            let user = UserState::of(&s, rec.body(), attr.sample_regs_user(), meta.endian);
            let unwound = match (&mut unwind, user) {
                (Some(u), Some(state)) => Some(u.frames(maps.0, pid, &state)),
                _ => None,
            };
            let unwound = unwound.filter(|f| !f.is_empty());
            done.unwound += unwound.is_some() as u64;
            let user_ip = rec.header.misc & misc::CPUMODE_MASK == misc::USER;
            table.intern(&callchain(&s, user_ip, unwound), pid, maps, &mut ids);
            table.take_new_maps().for_each(|m| syms.load_beside(m));
            let comm = procs.comm(tid, time);
            done.samples += 1;
            if gather.names_as_it_goes() {
                table.name_new(&mut syms);
            }
            let period = match latency {
                Some(p) => Some(p.weight(s.period.unwrap_or(1), time)),
                None => s.period,
            };
            let sample = (slot, time, period);
            gather.add(&o.fold, (&table.named, &ids), (&comm, pid, tid), sample);
        }
    }
    table.name_new(&mut syms);
    for (f, holders) in table.named.iter().zip(&table.holders) {
        let n = f.funcs.len() as u64;
        done.frames += n.max(1) * holders;
        done.unknown_frames += (n == 0) as u64 * holders;
    }
    done.unnamed = unnamed::unnamed_files(&table.named, &table.holders, syms.kernel_named());
    done.debuginfod = locate.debuginfod.iter().flat_map(|d| d.trouble()).collect();
    let about = || pprof::about(inputs, &chosen, (first, last));
    let title = format!("perfz: {}", inputs[0].display());
    let unit = events::unit(&chosen, o.fold.sample_counts);
    done.unit = unit;
    let heading = speedscope::Heading { name: &title, unit };
    done.stacks = gather.write((&table.named, &o.fold), &heading, about, out)?;
    Ok(done)
}

/// With `--latency`, what the samples' weights are divided by; an error
/// where the recording cannot say (no context switches), as perf's.
fn latency_of<'s>(
    survey: &'s Survey,
    o: &ExportOptions,
) -> Result<Option<&'s parallelism::Parallelism>, FormatError> {
    if !o.latency {
        return Ok(None);
    }
    if o.fold.sample_counts {
        return Err(FormatError::Unsupported(
            "--latency weighs each sample's period: leave out --sample-counts".into(),
        ));
    }
    if !survey.parallelism.is_known() {
        return Err(FormatError::Unsupported(
            "--latency needs the recording's context switches: record with perfz record --latency (perf report: \"requires --latency flag during record\")".into(),
        ));
    }
    Ok(Some(&survey.parallelism))
}

/// The kernel's symbols: `--kallsyms`'s file, else /proc/kallsyms (under
/// `--symfs`, as every file perf opens then: "every single file opened by
/// perf is relative to symfs").
fn kallsyms_file(o: &ExportOptions) -> Option<PathBuf> {
    let under_symfs = o.symfs.as_ref().map(|s| s.join("/proc/kallsyms"));
    o.kallsyms.clone().or(under_symfs)
}

/// Where the recording's files are found, and the symbols named from
/// them: the kernel's from `kallsyms` where they are the recording
/// kernel's (or `--kallsyms` gave them).
fn sources(
    survey: &Survey,
    o: &ExportOptions,
    kallsyms: kallsyms::Kallsyms,
) -> (Symbols, std::sync::Arc<locate::Locate>) {
    let kernel_named = survey.kernel_here || o.kallsyms.is_some();
    let locate = std::sync::Arc::new(locate::Locate {
        symfs: o.symfs.clone(),
        // The vDSO is read from memory only where files are read from here.
        this_kernel: survey.kernel_here && o.symfs.is_none(),
        debuginfod: o
            .debuginfod
            .as_deref()
            .and_then(debuginfod::Debuginfod::new),
    });
    let kernel = kernel_named.then_some(kallsyms);
    let mut syms = Symbols::new(kernel, locate.clone(), o.inline);
    syms.note_jitdumps(survey.procs.jitdumps());
    (syms, locate)
}

/// What the export says of itself before its pass (the event, the inputs
/// cut short, the other events), and the dwarf unwinder for the recording.
fn begin(
    survey: &Survey,
    chosen: &[&events::EventSamples],
    locate: &std::sync::Arc<locate::Locate>,
) -> (Exported, Option<Unwind>) {
    let names: Vec<&str> = chosen.iter().map(|e| e.0.as_str()).collect();
    let mut done = Exported {
        kernel_symbols: survey.kernel_here,
        event: (!names.is_empty()).then(|| names.join(" + ")),
        cut_short: survey.cut_short.clone(),
        other_events: events::others(&survey.events, chosen),
        ..Default::default()
    };
    let unwind = unwinder(survey.arch.as_deref(), locate, &mut done);
    (done, unwind)
}

/// The dwarf unwinder for a recording of `arch`: framehop unwinds x86-64
/// and aarch64, perfz reads x86-64's registers; another's is said in `done`.
fn unwinder(
    arch: Option<&str>,
    locate: &std::sync::Arc<locate::Locate>,
    done: &mut Exported,
) -> Option<Unwind> {
    match arch {
        None | Some("x86_64") => Some(Unwind::new(locate.clone())),
        Some(other) => {
            done.not_unwound = Some(format!(
                "the recording is from {other}: dwarf stacks are unwound for x86_64 only"
            ));
            None
        }
    }
}

/// A sample's callchain with perf's context markers: the kernel's part and
/// the `unwound` user frames (dwarf), else the recorded chain, else its ip
/// alone. A chain with a context marker perf does not know (a stack walk
/// into garbage: `0xffff...fffe` words at a process's exit) is empty: perf
/// discards all of it ("the callchain is corrupted") and prints no frame.
fn callchain(
    s: &crate::format::sample::Sample,
    user_ip: bool,
    unwound: Option<Vec<u64>>,
) -> std::borrow::Cow<'_, [u64]> {
    let known =
        |&ip: &u64| ip < CONTEXT_MAX || [CONTEXT_HV, CONTEXT_KERNEL, CONTEXT_USER].contains(&ip);
    if !s.callchain.iter().all(known) {
        return std::borrow::Cow::Borrowed(&[]);
    }
    if let Some(frames) = unwound {
        let kernel = s.callchain.iter().take_while(|&&ip| ip != CONTEXT_USER);
        kernel
            .copied()
            .chain(std::iter::once(CONTEXT_USER))
            .chain(frames)
            .collect()
    } else if s.callchain.is_empty() {
        let marker = if user_ip {
            CONTEXT_USER
        } else {
            CONTEXT_KERNEL
        };
        vec![marker, s.ip.unwrap_or(0)].into()
    } else {
        (&s.callchain[..]).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_with_a_context_perf_does_not_know_is_discarded_as_perf_discards_it() {
        let s = |chain: &[u64]| crate::format::sample::Sample {
            ip: Some(0x1044),
            callchain: chain.to_vec(),
            ..Default::default()
        };
        // A frame-pointer walk into garbage at a process's exit (perf
        // 6.1's machine.c: "It seems the callchain is corrupted. Discard
        // all."): perf script prints the sample without a frame.
        let garbage = s(&[CONTEXT_USER, 0x1044, u64::MAX - 1, u64::MAX - 1]);
        assert!(callchain(&garbage, true, None).is_empty());
        assert!(callchain(&garbage, true, Some(vec![0x1044, 0x2000])).is_empty());
        let good = s(&[CONTEXT_KERNEL, 0xffff_ffff_8100_0000, CONTEXT_USER, 0x1044]);
        assert_eq!(&*callchain(&good, false, None), &good.callchain[..]);
        // A sample without a chain is its ip, as before.
        assert_eq!(
            &*callchain(&s(&[]), true, None),
            &[CONTEXT_USER, 0x1044][..]
        );
    }
}
