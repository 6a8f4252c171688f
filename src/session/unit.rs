//! The drain units of a recording as its destination reaches them,
//! whichever strategy runs them ([`Units`]), and a unit's answer to a
//! request of its destination ([`answer`]). The unit itself is
//! [`Unit`](crate::push::unit::Unit), held behind a box.
//!
//! A unit's one lifecycle call is `Unit::hand_over`: at a switch it hands
//! its output back (flushed, its writes landed, its codec restarted) and
//! goes on in the next; at the end (`Unit::end`, in every strategy) it
//! hands it back and takes none. The session finishes what it is handed
//! (`finish.rs`); a loan (`Unit::lend`) stays only for copies: a
//! checkpoint, a snapshot.

use std::io;

use super::error::RecordError;
use super::mailbox::{Reply, Request};
use crate::push::unit::Unit;
use crate::push::{HandedBack, Output};

/// A unit's answer to a request of its destination (see
/// [`Request`](super::mailbox::Request)); `index`: which unit it is.
pub fn answer(unit: &mut dyn Unit, r: Request, index: usize) -> Reply {
    match r {
        Request::Snapshot => Reply::Snapshot(index, unit.copy()),
        Request::HandOver(next) => Reply::Handed(index, unit.hand_over(Some(next))),
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
impl Units for &mut dyn Unit {
    fn count(&self) -> usize {
        1
    }

    fn hand_over(&mut self, next: Vec<Output>) -> Result<Vec<Option<HandedBack>>, RecordError> {
        Ok(next
            .into_iter()
            .map(|n| Some(Unit::hand_over(&mut **self, Some(n))))
            .collect())
    }

    fn snapshot(&mut self) -> Result<Vec<Option<io::Result<HandedBack>>>, RecordError> {
        Ok(vec![Some(self.copy())])
    }

    fn write_side_band(&mut self, side_band: &[u8]) -> io::Result<()> {
        self.write_plain(side_band)
    }
}
