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

pub mod folded;
pub mod inline;
pub mod pprof;
pub mod process;
pub mod symbols;
pub mod unwind;

use std::path::PathBuf;
use std::sync::Arc;

use crate::format::feat;
use crate::format::record::misc;
use crate::format::sample::SampleId;
use crate::format::side_band::SideBand;
use crate::format::{FormatError, PerfReader, RecordType};
use folded::Folded;
use process::{Mapping, Timeline};
use symbols::Symbols;
use unwind::{Unwind, UserState};

pub use folded::FoldOptions;

/// perf's callchain context markers (`PERF_CONTEXT_*`, as u64).
const CONTEXT_HV: u64 = -32i64 as u64;
const CONTEXT_KERNEL: u64 = -128i64 as u64;
const CONTEXT_USER: u64 = -512i64 as u64;
/// Everything from here up is a marker, not an address.
const CONTEXT_MAX: u64 = -4095i64 as u64;

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

/// One frame, named: its address, the functions there (innermost first;
/// empty: unknown), its mapping, and its module as perf prints it.
pub struct Named {
    pub ip: u64,
    pub funcs: Vec<Arc<str>>,
    pub map: Option<Mapping>,
    pub module: Option<Arc<str>>,
    pub kernel: bool,
}

/// Every distinct frame of an export, named once: by (mapping, address,
/// kernel) where the mapping is the Timeline's (its address: the
/// Timeline does not change once built) or none.
#[derive(Default)]
pub struct FrameTable {
    index: rustc_hash::FxHashMap<(usize, u64, bool), u32>,
    pub named: Vec<Named>,
}

impl FrameTable {
    /// The ids of a callchain's frames, leaf first, naming each new one as
    /// perf script prints it.
    fn intern(
        &mut self,
        chain: &[u64],
        (pid, time): (u32, u64),
        procs: &Timeline,
        syms: &mut Symbols,
        ids: &mut Vec<u32>,
    ) {
        ids.clear();
        let mut kernel = false;
        for &ip in chain {
            match ip {
                CONTEXT_KERNEL | CONTEXT_HV => {
                    kernel = true;
                    continue;
                }
                CONTEXT_USER => {
                    kernel = false;
                    continue;
                }
                ip if ip >= CONTEXT_MAX => continue,
                _ => {}
            }
            let map = procs.mapping(pid, ip, time, kernel);
            let key = (map.map_or(0, |m| m as *const Mapping as usize), ip, kernel);
            let next = self.named.len() as u32;
            let id = *self.index.entry(key).or_insert(next);
            if id == next {
                self.named.push(name_frame(ip, kernel, map, syms));
            }
            ids.push(id);
        }
    }
}

/// The samples' events of one input: attr index -> name.
fn event_name(a: &crate::format::AttrEntry, i: usize) -> String {
    a.name.clone().unwrap_or_else(|| format!("event{i}"))
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
    let mut kernel_here = true;
    let mut arch = None;
    let here = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .ok();
    // Events with samples, in the order first seen: name -> (attr, samples).
    let mut events: Vec<(String, crate::format::Attr, u64)> = Vec::new();
    for input in inputs {
        let mut r = PerfReader::open(input)?;
        let recorded = r.features.string(feat::OSRELEASE);
        kernel_here &= here.is_some() && recorded == here;
        arch = arch.or(r.features.string(feat::ARCH));
        // Files' build ids from the header (perf's default; MMAP2 records
        // carry them only with --buildid-mmap).
        for (_, _, id, name) in r.features.build_id_table().unwrap_or_default() {
            procs.note_build_id(name, id);
        }
        while let Some((rec, meta)) = r.next_record()? {
            let t = rec.header.type_;
            if t == RecordType::SAMPLE {
                if let Some((i, a)) = meta.attrs.iter().enumerate().find(|(_, a)| {
                    meta.attr_of_sample(&rec)
                        .is_some_and(|s| std::ptr::eq(s, *a))
                }) {
                    let name = event_name(a, i);
                    match events.iter_mut().find(|e| e.0 == name) {
                        Some(e) => e.2 += 1,
                        None => events.push((name, a.attr.clone(), 1)),
                    }
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
        None => (events.len() == 1).then(|| &events[0]),
    };
    let mut syms = Symbols::new(kernel_here, o.inline);
    let mut done = Exported {
        kernel_symbols: kernel_here,
        event: chosen.map(|e| e.0.clone()),
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
        let mut r = PerfReader::open(input)?;
        while let Some((rec, meta)) = r.next_record()? {
            if rec.header.type_ != RecordType::SAMPLE {
                continue;
            }
            let Some((i, entry)) = meta.attrs.iter().enumerate().find(|(_, a)| {
                meta.attr_of_sample(&rec)
                    .is_some_and(|s| std::ptr::eq(s, *a))
            }) else {
                continue;
            };
            if o.event.is_some() && chosen.is_some_and(|e| e.0 != event_name(entry, i)) {
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
            let user = user_state(&s, rec.body(), attr.sample_regs_user(), meta.endian);
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
                Output::Folded | Output::Svg => folded.add(&o.fold, (&comm, pid, tid), &ids),
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
            let about = about(inputs, chosen, (first, last));
            let p = profile.finish(about);
            done.stacks = p.sample.len();
            pprof::write(&p, out)?;
        }
    }
    Ok(done)
}

/// perf's software clock events (PERF_TYPE_SOFTWARE, cpu-clock and
/// task-clock): their period is nanoseconds.
fn is_clock(a: &crate::format::Attr) -> bool {
    a.type_() == 1 && a.config() <= 1
}

/// What a pprof profile says of itself: its second value, period, time
/// span and comments naming the recording.
fn about(
    inputs: &[PathBuf],
    event: Option<&(String, crate::format::Attr, u64)>,
    (first, last): (u64, u64),
) -> pprof::About {
    let duration = last.saturating_sub(first);
    let (value, period) = match event {
        Some((_, a, _)) if is_clock(a) => {
            let freq = a.flags() & (1 << 10) != 0;
            let period = match (freq, a.sample_period()) {
                (true, f) if f > 0 => 1_000_000_000 / f,
                (false, p) => p,
                _ => 0,
            };
            (("cpu".into(), "nanoseconds".into()), period)
        }
        Some((name, a, _)) => {
            let freq = a.flags() & (1 << 10) != 0;
            (
                (name.clone(), "count".into()),
                if freq { 0 } else { a.sample_period() },
            )
        }
        None => (("events".into(), "count".into()), 0),
    };
    // The wall-clock time of the first sample: the last input's
    // modification time (the recording's end) less the samples' span.
    let end = std::fs::metadata(inputs.last().expect("an input"))
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64);
    let mut comments = vec![format!(
        "perfz export of {}",
        inputs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )];
    if let Some((name, _, n)) = event {
        comments.push(format!("event {name}: {n} samples"));
    }
    pprof::About {
        value,
        period: i64::try_from(period).unwrap_or(0),
        time_nanos: end.saturating_sub(duration as i64),
        duration_nanos: duration as i64,
        comments,
    }
}

/// A sample's user registers and stack copy, when it has both.
fn user_state<'a>(
    s: &crate::format::sample::Sample,
    body: &'a [u8],
    mask: u64,
    e: crate::format::endian::Endian,
) -> Option<UserState<'a>> {
    if s.user_regs_at == 0 || s.user_stack_len == 0 {
        return None;
    }
    let len = usize::try_from(s.user_stack_len.min(s.user_stack_size)).ok()?;
    let at = s.user_stack_at.checked_add(8)?;
    Some(UserState {
        regs: body.get(s.user_regs_at..)?,
        mask,
        stack: body.get(at..at.checked_add(len)?)?,
        little_endian: e == crate::format::endian::Endian::Little,
    })
}

/// One frame as perf script prints it.
fn name_frame(ip: u64, kernel: bool, map: Option<&Mapping>, syms: &mut Symbols) -> Named {
    let func = if kernel {
        syms.kernel(ip)
    } else {
        map.and_then(|m| syms.user(m, ip))
    };
    let mut funcs = match (func.is_some(), map) {
        // DWARF's names stand for the symbol's (perf's append_inlines).
        (true, Some(m)) if !kernel => syms.inlined(m, ip),
        _ => Vec::new(),
    };
    if funcs.is_empty() {
        funcs.extend(func);
    }
    let module = match map {
        Some(m) => Some(m.path.clone()),
        None if kernel => Some("[kernel.kallsyms]".into()),
        None => None,
    };
    Named {
        ip,
        funcs,
        map: map.cloned(),
        module,
        kernel,
    }
}
