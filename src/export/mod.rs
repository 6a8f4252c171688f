//! `perfz export`: recordings to the formats people look at profiles in.
//! Two streaming passes over every input (perfz's and perf's files in every
//! codec, pipes, `--threads` directories, several `--switch-output`
//! outputs merged): the first follows the side band (the processes' names
//! and maps through time, [`process`]), the second names each sample's
//! callchain as it was at the sample's time ([`symbols`]) and collapses it
//! ([`folded`]). Memory grows with the side band, the symbol tables and
//! the distinct stacks, not with the samples.
//!
//! ```text
//! pass 1: PerfReader ─ side band (by time) ─▶ Timeline (names per thread, maps per process)
//! pass 2: PerfReader ─ SAMPLE ─▶ callchain (kernel / user contexts) at its time
//!         (dwarf: kernel part + user frames unwound from regs and stack, [unwind])
//!         ─▶ Symbols ─▶ Folded (folded lines, svg) | pprof::Builder (pprof)
//! ```

pub mod demangle;
pub mod file;
pub mod folded;
pub mod frames;
pub mod inline;
pub mod pprof;
pub mod process;
pub mod report;
pub mod symbols;
pub mod unwind;

use std::path::PathBuf;

use crate::format::feat;
use crate::format::record::misc;
use crate::format::sample::SampleId;
use crate::format::side_band::SideBand;
use crate::format::{FormatError, PerfReader, RecordType};
use folded::Folded;
use frames::{FrameTable, CONTEXT_KERNEL, CONTEXT_USER};
use process::Timeline;
use symbols::Symbols;
use unwind::{Unwind, UserState};

pub use frames::Named;

pub use folded::FoldOptions;

/// What an export read.
#[derive(Debug, Default, serde::Serialize)]
pub struct Exported {
    pub samples: u64,
    pub stacks: usize,
    /// Frames without a function name.
    pub unknown_frames: u64,
    pub frames: u64,
    /// Whether kernel frames were named (the recording is from this kernel).
    pub kernel_symbols: bool,
    /// Samples whose user stack was unwound from their stack copy (dwarf).
    pub unwound: u64,
    /// Why dwarf stacks were not unwound, where they were not.
    pub not_unwound: Option<String>,
    /// The event exported.
    pub event: Option<String>,
    /// The recording's other events, left out (`-e` chooses).
    pub other_events: Vec<String>,
    /// Inputs cut short or damaged, read up to the damage.
    pub cut_short: Vec<String>,
}

/// What `perfz export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// stackcollapse-perf's lines.
    Folded,
    /// A flame graph (inferno's, as flamegraph.pl draws them).
    Svg,
    /// A gzipped pprof profile.
    Pprof,
}

/// How to export.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    pub fold: FoldOptions,
    /// Only the samples of this event (its name as perf prints it).
    pub event: Option<String>,
    /// Inline frames where DWARF says so, as perf script shows them.
    pub inline: bool,
}

/// The samples' events of one input: attr index -> name.
fn event_name(a: &crate::format::AttrEntry, i: usize) -> String {
    // Without EVENT_DESC (a file cut before its features), a built-in event
    // is named from its attr, as perf names it.
    a.name
        .clone()
        .or_else(|| {
            crate::event::events::name_of(a.attr.type_(), a.attr.config()).map(String::from)
        })
        .unwrap_or_else(|| format!("event{i}"))
}

/// Exports every sample of `inputs` (read in order, as one recording) to
/// `out` as `format`: a first pass follows the side band, a second names
/// each sample's frames as they were at its time.
pub fn export(
    inputs: &[PathBuf],
    format: Output,
    o: &ExportOptions,
    out: &mut dyn std::io::Write,
) -> Result<Exported, FormatError> {
    let mut procs = Timeline::default();
    // Read beside the first pass; left unread where the recording turns
    // out to be from another kernel.
    let kallsyms = Some(symbols::Kallsyms::read());
    let mut kernel_here = true;
    let mut arch = None;
    let here = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .ok();
    // Events with samples, in the order first seen: name -> (attr, samples).
    let mut events: Vec<(String, crate::format::Attr, u64)> = Vec::new();
    let mut first_event = None;
    let mut cut_short = Vec::new();
    for input in inputs {
        let (mut r, cut) = open_input(input)?;
        if cut {
            cut_short.push(input.display().to_string());
        }
        // Samples per attr of this input, named once it is read.
        let mut counts: Vec<u64> = Vec::new();
        while let Some((rec, meta)) = next(&mut r, cut)? {
            let t = rec.header.type_;
            if t == RecordType::SAMPLE {
                if let Some(i) = meta.attr_index_of_sample(&rec) {
                    // The earliest sample's event, as perf script's time
                    // order shows it first (rings are drained in turns).
                    let t = sample_time(rec.body(), &meta.attrs[i].attr, meta.endian);
                    if first_event.as_ref().is_none_or(|(ft, _)| t < *ft) {
                        first_event = Some((t, event_name(&meta.attrs[i], i)));
                    }
                    if counts.len() <= i {
                        counts.resize(i + 1, 0);
                    }
                    counts[i] += 1;
                }
            } else if t.is_kernel() {
                if let Some(ev) = SideBand::parse(t, rec.header.misc, rec.body()) {
                    let time = meta
                        .attrs
                        .first()
                        .filter(|a| a.attr.sample_id_all())
                        .and_then(|a| {
                            SampleId::parse(rec.body(), a.attr.sample_type(), meta.endian)
                        })
                        .and_then(|id| id.time)
                        .unwrap_or(0);
                    procs.push(time, ev);
                }
            }
        }
        // The features, read after the pass: a pipe's come as records.
        let recorded = r.features.string(feat::OSRELEASE);
        // A recording that says nothing of its kernel (cut before its
        // features) is taken for this one's, as perf takes it.
        kernel_here &= here.is_some()
            && (recorded.is_none() || recorded == here)
            && same_kernel_build(&r.features);
        arch = arch.or(r.features.string(feat::ARCH));
        // Files' build ids from the header (perf's default; MMAP2 records
        // carry them only with --buildid-mmap).
        for (_, _, id, name) in r.features.build_id_table().unwrap_or_default() {
            procs.note_build_id(name, id);
        }
        for (i, n) in counts.into_iter().enumerate().filter(|(_, n)| *n > 0) {
            let a = &r.attrs[i];
            let name = event_name(a, i);
            match events.iter_mut().find(|e| e.0 == name) {
                Some(e) => e.2 += n,
                None => events.push((name, a.attr.clone(), n)),
            }
        }
    }
    procs.build();
    let names = || {
        events
            .iter()
            .map(|e| format!("{} ({} samples)", e.0, e.2))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let chosen = match &o.event {
        Some(want) => match events.iter().find(|e| &e.0 == want) {
            Some(e) => Some(e),
            None => {
                return Err(FormatError::Unsupported(format!(
                    "no samples of event {want:?} in the recording; it has: {}",
                    if events.is_empty() {
                        "no samples".into()
                    } else {
                        names()
                    }
                )))
            }
        },
        None if format == Output::Pprof && events.len() > 1 => {
            return Err(FormatError::Unsupported(format!(
                "a pprof profile holds one event and the recording has samples of {}: \
                 choose one with -e NAME",
                names()
            )))
        }
        // The first event a sample has, as perf script | inferno-collapse-perf
        // keep it: events of other units never share a flame graph.
        None => first_event
            .as_ref()
            .and_then(|(_, f)| events.iter().find(|e| &e.0 == f)),
    };
    let mut syms = Symbols::new(kernel_here.then_some(kallsyms).flatten(), o.inline);
    let mut done = Exported {
        kernel_symbols: kernel_here,
        event: chosen.map(|e| e.0.clone()),
        cut_short,
        other_events: events
            .iter()
            .filter(|e| chosen.is_some_and(|c| c.0 != e.0))
            .map(|e| format!("{} ({} samples)", e.0, e.2))
            .collect(),
        ..Default::default()
    };
    // framehop unwinds x86-64 and aarch64; perfz reads x86-64's registers.
    let mut unwind = match arch.as_deref() {
        None | Some("x86_64") => Some(Unwind::new(kernel_here)),
        Some(other) => {
            done.not_unwound = Some(format!(
                "the recording is from {other}: dwarf stacks are unwound for x86_64 only"
            ));
            None
        }
    };
    let mut folded = Folded::default();
    let mut profile = pprof::Builder::new();
    let mut table = FrameTable::default();
    let mut ids = Vec::new();
    let (mut first, mut last) = (u64::MAX, 0u64);
    for input in inputs {
        let (mut r, cut) = open_input(input)?;
        while let Some((rec, meta)) = next(&mut r, cut)? {
            if rec.header.type_ != RecordType::SAMPLE {
                continue;
            }
            let Some(i) = meta.attr_index_of_sample(&rec) else {
                continue;
            };
            let entry = &meta.attrs[i];
            if chosen.is_some_and(|e| e.0 != event_name(entry, i)) {
                continue;
            }
            let attr = &entry.attr;
            let s =
                crate::format::sample::Sample::parse(rec.body(), attr, meta.endian, rec.offset)?;
            let (pid, tid) = (s.pid.unwrap_or(0), s.tid.unwrap_or(0));
            let time = s.time.unwrap_or(u64::MAX);
            if let Some(t) = s.time {
                first = first.min(t);
                last = last.max(t);
            }
            let user_ip = rec.header.misc & misc::CPUMODE_MASK == misc::USER;
            let user = UserState::of(&s, rec.body(), attr.sample_regs_user(), meta.endian);
            let unwound = match (&mut unwind, user) {
                (Some(u), Some(state)) => Some(u.frames(&procs, pid, time, &state)),
                _ => None,
            };
            let chain: Vec<u64> = if let Some(frames) = unwound.filter(|f| !f.is_empty()) {
                // The kernel's part of the chain, then the unwound user frames.
                done.unwound += 1;
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
                vec![marker, s.ip.unwrap_or(0)]
            } else {
                s.callchain.clone()
            };
            table.intern(&chain, (pid, time), &procs, &mut syms, &mut ids);
            for &id in &ids {
                let n = table.named[id as usize].funcs.len() as u64;
                done.frames += n.max(1);
                done.unknown_frames += (n == 0) as u64;
            }
            let comm = procs.comm(tid, time);
            done.samples += 1;
            match format {
                Output::Folded | Output::Svg => {
                    folded.add(&o.fold, (&comm, pid, tid), &ids, s.period)
                }
                Output::Pprof => {
                    profile.add(&table.named, &ids, (&comm, pid, tid), s.period.unwrap_or(1))
                }
            }
        }
    }
    match format {
        Output::Folded => {
            let lines = folded.lines(&o.fold, &table.named);
            done.stacks = lines.len();
            for l in lines {
                writeln!(out, "{l}")?;
            }
        }
        Output::Svg => {
            let lines = folded.lines(&o.fold, &table.named);
            done.stacks = lines.len();
            let mut opts = inferno::flamegraph::Options::default();
            opts.title = format!("perfz: {}", inputs[0].display());
            opts.count_name = "samples".into();
            inferno::flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), out)
                .map_err(|e| match e.downcast::<std::io::Error>() {
                    Ok(io) => FormatError::Io(io),
                    Err(other) => {
                        FormatError::Unsupported(format!("drawing the flame graph: {other}"))
                    }
                })?;
        }
        Output::Pprof => {
            let about = pprof::about(inputs, chosen, (first, last));
            let p = profile.finish(about);
            done.stacks = p.sample.len();
            pprof::write(&p, out)?;
        }
    }
    Ok(done)
}

/// A sample's time (u64::MAX without one), read where its layout puts it
/// without parsing the rest.
fn sample_time(body: &[u8], attr: &crate::format::Attr, e: crate::format::endian::Endian) -> u64 {
    use crate::format::attr::sample_type as st;
    let t = attr.sample_type();
    if t & st::TIME == 0 {
        return u64::MAX;
    }
    let at = [st::IDENTIFIER, st::IP, st::TID]
        .iter()
        .filter(|&&b| t & b != 0)
        .count()
        * 8;
    body.get(at..at + 8)
        .map_or(u64::MAX, |b| e.u64(b.try_into().unwrap()))
}

/// Whether the kernel the recording names in its build-id table (where it
/// does) is the running one: another build of the same release has other
/// addresses, and perf leaves its frames unnamed.
fn same_kernel_build(f: &crate::format::FeatureSet) -> bool {
    let recorded = f
        .build_id_table()
        .unwrap_or_default()
        .into_iter()
        .find(|(_, _, _, name)| name == "[kernel.kallsyms]")
        .map(|(_, _, id, _)| id);
    match (recorded, crate::synth::build_id::of_kernel()) {
        (Some(theirs), Some(ours)) => theirs == ours,
        _ => true,
    }
}

/// Opens an input; one whose header describes more than the file holds
/// (cut short, or a crash before it was finished) is opened as recover
/// opens it, to be read up to the damage as perf reads it: true then.
fn open_input(path: &std::path::Path) -> Result<(PerfReader, bool), FormatError> {
    match PerfReader::open(path) {
        Ok(r) => Ok((r, false)),
        Err(e) => {
            if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
                return Err(e);
            }
            match crate::recover::open_damaged(path) {
                Ok(d) => Ok((d.reader, true)),
                Err(_) => Err(e),
            }
        }
    }
}

/// The next record; in an input read up to its damage, the damage is its
/// end.
fn next(
    r: &mut PerfReader,
    cut: bool,
) -> Result<Option<(crate::format::Record<'_>, &crate::format::Meta)>, FormatError> {
    match r.next_record() {
        Err(_) if cut => Ok(None),
        other => other,
    }
}
