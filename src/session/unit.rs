//! A drain unit as the session holds it: the one codec-generic [`Drain`]
//! behind a box (one indirect call per pass), and [`Units`], the units of
//! a recording as its destination reaches them, whichever strategy runs
//! them.
//!
//! A unit's one lifecycle call is [`Unit::hand_over`]: at a switch it hands
//! its output back (flushed, its writes landed, its codec restarted) and
//! goes on in the next; at the end ([`Unit::end`], in every strategy) it
//! hands it back and takes none. The session finishes what it is handed
//! (`finish.rs`); a loan
//! ([`Unit::lend`]) stays only for copies: a checkpoint, a snapshot.

use std::io;

use super::error::RecordError;
use super::mailbox::{Reply, Request};
use crate::event::ring::Rings;
use crate::format::FeatureSet;
use crate::push::drain::{Drain, DrainReport};
use crate::push::lent::Lent;
use crate::push::{HandedBack, Output};
use crate::transform::scan::RecordCounts;

/// One drain unit: it owns its codec, sink and output; its rings are
/// lent to it pass by pass.
pub struct Unit(Box<dyn Drain + Send>);

impl Unit {
    /// The unit `drain` (as `unit_build` builds it).
    pub fn new(drain: Box<dyn Drain + Send>) -> Self {
        Unit(drain)
    }

    /// One pass over `rings` (see [`Drain::pass`]).
    pub fn pass(&mut self, rings: &mut Rings, min: u64, n: &mut RecordCounts) -> io::Result<bool> {
        self.0.pass(rings, min, n)
    }

    /// Records that never were in a ring (side band, LOST_SAMPLES).
    pub fn write_plain(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.0.write_plain(bytes)
    }

    /// What the codec and the sink hold goes into the output.
    pub fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }

    /// The numbers kept so far.
    pub fn report(&self) -> DrainReport {
        self.0.report()
    }

    /// Bytes of records in the current output (`--max-size`, switches).
    pub fn bytes_written(&self) -> u64 {
        self.0.bytes_written()
    }

    /// Makes the output perf-readable as it is now, with `features` (plus
    /// HEADER_COMPRESSED); the bytes it used, `None` where it cannot.
    pub fn checkpoint(&mut self, features: &FeatureSet) -> io::Result<Option<u64>> {
        self.0.lend()?.checkpoint(features)
    }

    /// Flushes, waits until every write landed and lends the output: for
    /// a copy (a snapshot, the hits so far).
    pub fn lend(&mut self) -> io::Result<Lent<'_>> {
        self.0.lend()
    }

    /// The output handed back, and the unit goes on in `next` (a new codec
    /// stream), or, with `None`, ends (see [`Drain::hand_over`]).
    pub fn hand_over(&mut self, next: Option<Output>) -> HandedBack {
        self.0.hand_over(next)
    }
}

/// A unit's answers to the [`Request`](super::mailbox::Request)s of its
/// destination.
impl Unit {
    /// Its answer to a snapshot: what it retains, copied, and the hits
    /// gathered since the last ask; its output stays its own.
    pub fn copy(&mut self) -> io::Result<HandedBack> {
        let (hits, retained) = {
            let mut lent = self.lend()?;
            (lent.take_hits(), lent.snapshot().unwrap_or_default())
        };
        Ok(HandedBack {
            hits,
            report: self.report(),
            retained,
            ..HandedBack::default()
        })
    }

    /// Its answer to a request (see [`Request`](super::mailbox::Request)).
    pub fn answer(&mut self, r: Request, index: usize) -> Reply {
        match r {
            Request::Snapshot => Reply::Snapshot(index, self.copy()),
            Request::HandOver(next) => Reply::Handed(index, self.hand_over(Some(next))),
        }
    }

    /// The unit's end, in every strategy: its output handed back for the
    /// last time, with `failed` (the drain loop's failed write) as the
    /// first error where there was one.
    pub fn end(&mut self, failed: Option<io::Error>) -> HandedBack {
        let mut handed = self.hand_over(None);
        if let Some(e) = failed {
            handed.error = Some(e);
        }
        handed
    }
}

/// The drain units of a recording as its destination reaches them between
/// two loops: one on this thread, or one per drain thread through its
/// mailbox. A unit that has ended answers nothing.
pub trait Units {
    /// How many units there are (each writes an output of its own).
    fn count(&self) -> usize;
    /// Each unit hands its output back and goes on in its `next` output
    /// (in order, one each); a unit that had ended answers `None`.
    fn hand_over(&mut self, next: Vec<Output>) -> Result<Vec<Option<HandedBack>>, RecordError>;
    /// A copy of what each unit retains (the flight recorder), with the
    /// hits it gathered since the last ask (in order, one each; a unit
    /// that had ended answers `None`).
    fn snapshot(&mut self) -> Result<Vec<Option<io::Result<HandedBack>>>, RecordError>;
    /// The next output's side band, after a switch: into the unit's output
    /// where the unit writes it (one unit on this thread); drain threads'
    /// outputs hold none (their directory's `data` does): nothing to do.
    fn write_side_band(&mut self, side_band: &[u8]) -> io::Result<()>;
}

/// The one unit of the serial strategy, on this thread.
impl Units for Unit {
    fn count(&self) -> usize {
        1
    }

    fn hand_over(&mut self, next: Vec<Output>) -> Result<Vec<Option<HandedBack>>, RecordError> {
        Ok(next
            .into_iter()
            .map(|n| Some(Unit::hand_over(self, Some(n))))
            .collect())
    }

    fn snapshot(&mut self) -> Result<Vec<Option<io::Result<HandedBack>>>, RecordError> {
        Ok(vec![Some(self.copy())])
    }

    fn write_side_band(&mut self, side_band: &[u8]) -> io::Result<()> {
        self.write_plain(side_band)
    }
}
