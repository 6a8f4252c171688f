//! The second pass's first half: each sample of the chosen events parsed,
//! its user stack unwound (dwarf) and its callchain put together with
//! perf's context markers. Where the recording has user stacks to unwind,
//! this half runs on a thread of its own, a batch of samples ahead of the
//! half that names and gathers them (`SecondPass::take`): the two halves
//! then share the machine's cores, as `perf script | inferno` shares them
//! between two processes. The samples reach the second half in the order
//! they were read, so the output does not depend on the thread.

use std::path::Path;
use std::sync::mpsc::sync_channel;

use super::{callchain, SecondPass};
use crate::export::recording::events::{self, EventSamples};
use crate::export::recording::process::Timeline;
use crate::export::recording::survey::{next, open_input};
use crate::export::recording::view::Views;
use crate::export::unwind::dwarf::{Unwind, UserState};
use crate::export::write::format::Format;
use crate::format::record::misc;
use crate::format::sample::Sample;
use crate::format::{Attr, FormatError, Meta, Record};

/// Samples handed from the thread that unwinds to the one that names, at a
/// time: enough that the channel costs nothing per sample, few enough that
/// both threads stay busy from the start.
const BATCH: usize = 256;

/// Batches that may wait between the two halves.
const DEPTH: usize = 4;

/// One sample, ready to be named and gathered.
pub(super) struct Chained {
    /// The event's slot among those exported.
    pub(super) slot: usize,
    pub(super) pid: u32,
    pub(super) tid: u32,
    /// The sample's time, where it has one.
    pub(super) time: Option<u64>,
    pub(super) period: Option<u64>,
    /// Its callchain with perf's context markers (see `callchain`).
    pub(super) chain: Vec<u64>,
    /// Whether its user stack was unwound.
    pub(super) unwound: bool,
}

/// What the first half keeps while it reads one input.
pub(super) struct Chaining<'s> {
    chosen: Vec<&'s EventSamples>,
    views: Views<'s>,
    unwind: Option<Unwind>,
}

impl<'s> Chaining<'s> {
    pub(super) fn new(
        chosen: Vec<&'s EventSamples>,
        procs: &'s Timeline,
        unwind: Option<Unwind>,
    ) -> Chaining<'s> {
        Chaining {
            chosen,
            views: Views::new(procs),
            unwind,
        }
    }

    /// The sample `rec` of an event exported, prepared; None for any other
    /// record.
    fn prepare(&mut self, rec: &Record<'_>, meta: &Meta) -> Option<Result<Chained, FormatError>> {
        let (attr, slot) = events::wanted(rec, meta, &self.chosen)?;
        Some(self.sample(rec, meta, attr, slot))
    }

    fn sample(
        &mut self,
        rec: &Record<'_>,
        meta: &Meta,
        attr: &Attr,
        slot: usize,
    ) -> Result<Chained, FormatError> {
        let s = Sample::parse(rec.body(), attr, meta.endian, rec.offset)?;
        let (pid, tid) = (s.pid.unwrap_or(0), s.tid.unwrap_or(0));
        let user = UserState::of(&s, rec.body(), attr.sample_regs_user(), meta.endian);
        let unwound = match (&mut self.unwind, user) {
            (Some(u), Some(state)) => {
                let (view, _) = self.views.at(pid, s.time.unwrap_or(u64::MAX));
                Some(u.frames(view, pid, &state))
            }
            _ => None,
        };
        let unwound = unwound.filter(|f| !f.is_empty());
        let was_unwound = unwound.is_some();
        let user_ip = rec.header.misc & misc::CPUMODE_MASK == misc::USER;
        Ok(Chained {
            slot,
            pid,
            tid,
            time: s.time,
            period: s.period,
            chain: callchain(&s, user_ip, unwound).into_owned(),
            unwound: was_unwound,
        })
    }

    /// Reads `input`, handing each sample to `take` in order; on this
    /// thread, or with the unwinding on a thread of its own where there are
    /// user stacks to unwind.
    pub(super) fn read(
        mut self,
        input: &Path,
        take: impl FnMut(Chained),
    ) -> Result<Option<Unwind>, FormatError> {
        match self.unwind.is_some() {
            true => self.read_beside(input, take),
            false => {
                self.read_here(input, take)?;
                Ok(self.unwind)
            }
        }
    }

    fn read_here(
        &mut self,
        input: &Path,
        mut take: impl FnMut(Chained),
    ) -> Result<(), FormatError> {
        let (mut r, cut) = open_input(input)?;
        while let Some((rec, meta)) = next(&mut r, cut)? {
            if let Some(p) = self.prepare(&rec, meta) {
                take(p?);
            }
        }
        Ok(())
    }

    /// As `read_here`, the preparing on a thread of its own and `take` on
    /// this one. An error on either side ends both: the preparing thread
    /// stops at the first batch nobody receives.
    fn read_beside(
        self,
        input: &Path,
        mut take: impl FnMut(Chained),
    ) -> Result<Option<Unwind>, FormatError> {
        std::thread::scope(|scope| {
            let (tx, rx) = sync_channel::<Result<Vec<Chained>, FormatError>>(DEPTH);
            let mut me = self;
            let worker = std::thread::Builder::new()
                .name("perfz-unwind".into())
                .spawn_scoped(scope, move || {
                    let mut batch = Vec::with_capacity(BATCH);
                    let handed = |b: Result<Vec<Chained>, FormatError>| tx.send(b).is_ok();
                    let ended = me.read_here(input, |p| {
                        batch.push(p);
                        if batch.len() == BATCH {
                            let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                            // A closed channel: the naming half stopped
                            // (its error is the one returned).
                            let _ = handed(Ok(full));
                        }
                    });
                    let _ = match ended {
                        Ok(()) => handed(Ok(batch)),
                        Err(e) => handed(Err(e)),
                    };
                    me.unwind
                })
                .map_err(FormatError::Io)?;
            for batch in rx {
                batch?.into_iter().for_each(&mut take);
            }
            worker
                .join()
                .map_err(|_| FormatError::Unsupported("the unwinding thread panicked".into()))
        })
    }
}

impl SecondPass<'_> {
    /// Reads the samples of the chosen events in `input`: each prepared
    /// (unwound), then named and gathered into `gather`.
    pub(super) fn read<F: Format>(
        &mut self,
        input: &Path,
        gather: &mut F,
    ) -> Result<(), FormatError> {
        let preparer = Chaining::new(self.chosen.clone(), self.procs, self.unwind.take());
        let unwind = preparer.read(input, |p| self.take(gather, p))?;
        self.unwind = unwind;
        Ok(())
    }
}
