//! The export's second pass, over the first's [`Survey`]: each sample of
//! the chosen events read at its time (its callchain, its user stack
//! unwound where it was recorded with dwarf), its frames interned and
//! named, and gathered into what the format writes ([`over`]: the two
//! passes, generic over the format).

mod chained;

use std::path::PathBuf;

use super::files::{debuginfod, locate};
use super::name::frames::{FrameTable, CONTEXT_HV, CONTEXT_KERNEL, CONTEXT_MAX, CONTEXT_USER};
use super::name::kallsyms::Kallsyms;
use super::name::symbols::Symbols;
use super::name::unnamed;
use super::recording::events::{self, EventSamples, Several};
use super::recording::parallelism::Parallelism;
use super::recording::process::Timeline;
use super::recording::survey::{self, Survey};
use super::recording::view::Views;
use super::unwind::dwarf::Unwind;
use super::write::format::{Ending, Format};
use super::write::sampled::Sampled;
use super::{ExportOptions, Exported};
use crate::format::FormatError;

/// Every sample of `inputs` (read in order, as one recording) gathered by
/// the format `F` as `o` says, handed to `end` with the second pass: a
/// first pass follows the side band, a second names each sample's frames
/// as they were at its time.
pub(crate) fn over<F: Format, R>(
    inputs: &[PathBuf],
    o: &ExportOptions,
    end: impl FnOnce(SecondPass<'_>, F) -> Result<R, FormatError>,
) -> Result<R, FormatError> {
    // Read beside the first pass; left unread where the recording turns
    // out to be from another kernel.
    let kallsyms = Kallsyms::read(kallsyms_file(o));
    let survey = survey::survey(inputs)?;
    let mut pass = SecondPass::new(&survey, F::SEVERAL_EVENTS, o, kallsyms)?;
    let mut gather = F::new(o);
    for input in inputs {
        pass.read(input, &mut gather)?;
    }
    end(pass, gather)
}

/// What the second pass holds while it reads: what each sample is named
/// against, and what the export says of itself.
pub(crate) struct SecondPass<'s> {
    o: &'s ExportOptions,
    procs: &'s Timeline,
    /// The events exported, by slot.
    chosen: Vec<&'s EventSamples>,
    /// With `--latency`, what each sample's period is divided by.
    latency: Option<&'s Parallelism>,
    syms: Symbols,
    locate: std::sync::Arc<locate::Locate>,
    unwind: Option<Unwind>,
    table: FrameTable<'s>,
    views: Views<'s>,
    /// The frame ids of the sample at hand.
    ids: Vec<u32>,
    /// The earliest and latest sample times.
    first: u64,
    last: u64,
    done: Exported,
    /// The recording machine's host name and the recorder's command line,
    /// where the recording says (OTLP's resource).
    host: Option<String>,
    cmdline: Option<Vec<String>>,
}

impl<'s> SecondPass<'s> {
    /// Ready to read the samples `survey` found, exported as `o` says (of
    /// several events, as `several` says), the kernel's symbols from
    /// `kallsyms`.
    fn new(
        survey: &'s Survey,
        several: Several,
        o: &'s ExportOptions,
        kallsyms: Kallsyms,
    ) -> Result<SecondPass<'s>, FormatError> {
        let first = survey.first_event.as_deref();
        let chosen = events::choose(&survey.events, first, o.event.as_deref(), o.time, several)?;
        let latency = latency_of(survey, o)?;
        let (syms, locate) = sources(survey, o, kallsyms);
        let (mut done, unwind) = begin(survey, &chosen, &locate);
        done.kernel_symbols |= o.kallsyms.is_some();
        Ok(SecondPass {
            o,
            procs: &survey.procs,
            chosen,
            latency,
            syms,
            locate,
            unwind,
            table: FrameTable::default(),
            views: Views::new(&survey.procs),
            ids: Vec::new(),
            first: u64::MAX,
            last: 0,
            done,
            host: survey.hostname.clone(),
            cmdline: survey.cmdline.clone(),
        })
    }

    /// Names one chained sample's frames and gathers it into `gather`
    /// (see [`chained`]).
    fn take<F: Format>(&mut self, gather: &mut F, p: chained::Chained) {
        let time = p.time.unwrap_or(u64::MAX);
        if let Some(t) = p.time {
            self.first = self.first.min(t);
            self.last = self.last.max(t);
        }
        let (pid, tid) = (p.pid, p.tid);
        let maps = self.views.at(pid, time);
        self.done.unwound += p.unwound as u64;
        (self.table).intern(&p.chain, pid, maps.0, maps.1, &mut self.ids);
        let syms = &mut self.syms;
        self.table.take_new_maps().for_each(|m| syms.load_beside(m));
        let comm = self.procs.comm(tid, time);
        let process = match F::WANTS_PROCESS {
            true => self.procs.comm(pid, time),
            false => comm.clone(),
        };
        self.done.samples += 1;
        if F::NAMES_AS_IT_GOES {
            self.table.name_new(&mut self.syms);
        }
        let period = match self.latency {
            Some(l) => Some(l.weight(p.period.unwrap_or(1), time)),
            None => p.period,
        };
        let sample = Sampled {
            comm: &comm,
            process: &process,
            pid,
            tid,
            ids: &self.ids,
            slot: p.slot,
            time,
            period,
        };
        gather.add_sample(&self.o.fold, &self.table.named, &sample);
    }

    /// Names the frames left, counts them, and writes `gather`'s samples
    /// to `out`; what the export did.
    pub(crate) fn finish<F: Format>(
        self,
        gather: F,
        inputs: &[PathBuf],
        out: &mut dyn std::io::Write,
    ) -> Result<Exported, FormatError> {
        let ((), done) = self.finish_with(inputs, |end| Ok((gather.write_to(end, out)?, ())))?;
        Ok(done)
    }

    /// Names the frames left and counts them; what `made` makes at the
    /// end (and how many stacks it holds), and what the export did.
    pub(crate) fn finish_with<R>(
        mut self,
        inputs: &[PathBuf],
        made: impl FnOnce(&Ending<'_>) -> Result<(usize, R), FormatError>,
    ) -> Result<(R, Exported), FormatError> {
        self.close();
        let end = Ending {
            named: &self.table.named,
            o: self.o,
            inputs,
            chosen: &self.chosen,
            span: (self.first, self.last),
            unit: self.done.unit,
            host: self.host.as_deref(),
            cmdline: self.cmdline.as_deref(),
        };
        let (stacks, r) = made(&end)?;
        self.done.stacks = stacks;
        Ok((r, self.done))
    }

    /// Names the frames left, and counts them and what is left unnamed.
    fn close(&mut self) {
        let (table, done) = (&mut self.table, &mut self.done);
        table.name_new(&mut self.syms);
        for (f, holders) in table.named.iter().zip(&table.holders) {
            let n = f.funcs.len() as u64;
            done.frames += n.max(1) * holders;
            done.unknown_frames += (n == 0) as u64 * holders;
        }
        done.unnamed =
            unnamed::unnamed_files(&table.named, &table.holders, self.syms.kernel_named());
        let trouble = self.locate.debuginfod.iter().flat_map(|d| d.trouble());
        done.debuginfod = trouble.collect();
        done.unit = events::unit(&self.chosen, self.o.fold.sample_counts);
    }
}

/// With `--latency`, what the samples' weights are divided by; an error
/// where the recording cannot say (no context switches), as perf's.
fn latency_of<'s>(
    survey: &'s Survey,
    o: &ExportOptions,
) -> Result<Option<&'s Parallelism>, FormatError> {
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
    kallsyms: Kallsyms,
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
    chosen: &[&EventSamples],
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
