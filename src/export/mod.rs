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
//!         ─▶ Symbols ─▶ Folded
//! ```

pub mod folded;
pub mod process;
pub mod symbols;
pub mod unwind;

use std::path::PathBuf;

use crate::format::feat;
use crate::format::record::misc;
use crate::format::sample::SampleId;
use crate::format::side_band::SideBand;
use crate::format::{FormatError, PerfReader, RecordType};
use folded::{Folded, Frame};
use process::Timeline;
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
}

/// What `perfz export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// stackcollapse-perf's lines.
    Folded,
    /// A flame graph (inferno's, as flamegraph.pl draws them).
    Svg,
}

/// Exports every sample of `inputs` (read in order, as one recording) to
/// `out` as `format`: a first pass follows the side band, a second names
/// each sample's frames as they were at its time.
pub fn export(
    inputs: &[PathBuf],
    format: Output,
    o: &FoldOptions,
    out: &mut dyn std::io::Write,
) -> Result<Exported, FormatError> {
    let mut procs = Timeline::default();
    let mut kernel_here = true;
    let mut arch = None;
    let here = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .ok();
    for input in inputs {
        let mut r = PerfReader::open(input)?;
        let recorded = r.features.string(feat::OSRELEASE);
        kernel_here &= here.is_some() && recorded == here;
        arch = arch.or(r.features.string(feat::ARCH));
        while let Some((rec, meta)) = r.next_record()? {
            let t = rec.header.type_;
            if t.is_kernel() && t != RecordType::SAMPLE {
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
    let mut syms = Symbols::new(kernel_here);
    let mut folded = Folded::default();
    let mut done = Exported {
        kernel_symbols: kernel_here,
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
    for input in inputs {
        let mut r = PerfReader::open(input)?;
        while let Some((rec, meta)) = r.next_record()? {
            if rec.header.type_ != RecordType::SAMPLE {
                continue;
            }
            let Some(attr) = meta.attr_of_sample(&rec).map(|a| &a.attr) else {
                continue;
            };
            let s =
                crate::format::sample::Sample::parse(rec.body(), attr, meta.endian, rec.offset)?;
            let (pid, tid) = (s.pid.unwrap_or(0), s.tid.unwrap_or(0));
            let time = s.time.unwrap_or(u64::MAX);
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
            let names = name_frames(&chain, (pid, time), &procs, &mut syms, &mut done);
            let comm = procs.comm(tid, time);
            done.samples += 1;
            folded.add(
                o,
                (&comm, pid, tid),
                names.iter().map(|(func, module, kernel)| Frame {
                    func: func.as_deref(),
                    module: module.as_deref(),
                    kernel: *kernel,
                }),
            );
        }
    }
    done.stacks = folded.stacks();
    match format {
        Output::Folded => folded.write(out)?,
        Output::Svg => {
            let lines = folded.lines();
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
    }
    Ok(done)
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

type Named = (
    Option<std::sync::Arc<str>>,
    Option<std::sync::Arc<str>>,
    bool,
);

/// Names every address of a callchain, leaf first: (function, module,
/// kernel), as perf script prints them.
fn name_frames(
    chain: &[u64],
    (pid, time): (u32, u64),
    procs: &Timeline,
    syms: &mut Symbols,
    done: &mut Exported,
) -> Vec<Named> {
    let mut kernel = false;
    let mut out = Vec::with_capacity(chain.len());
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
        let named = if kernel {
            let module = procs
                .mapping(pid, ip, time, true)
                .map(|m| m.path.clone())
                .unwrap_or_else(|| "[kernel.kallsyms]".into());
            (syms.kernel(ip), Some(module), true)
        } else {
            match procs.mapping(pid, ip, time, false) {
                Some(m) => (syms.user(m, ip), Some(m.path.clone()), false),
                None => (None, None, false),
            }
        };
        done.frames += 1;
        done.unknown_frames += named.0.is_none() as u64;
        out.push(named);
    }
    out
}
