//! The serial strategy: every ring drained by one unit on this thread into
//! one [`Destination`] (a file, a pipe or the flight recorder's memory),
//! switched on `--switch-output` (or a snapshot).
//!
//! ```text
//! begin ─ start ─ run (switch: the unit hands its output over) ─ hand over
//! for the last time ─ finish
//! ```

use super::destination::Destination;
use super::error::RecordError;
use super::recording::Recording;
use super::summary::Summary;
use crate::notes::Notes;

/// Runs a serial recording to the end.
pub fn record(mut rec: Recording<'_>, mut notes: Notes) -> Result<Summary, RecordError> {
    let (mut dest, mut unit) = Destination::begin(&rec, &mut notes)?;
    let child = rec.start(dest.place_mut())?;
    let mut switch_failed = None;
    let mut ended = rec.run(&mut *unit, child, |rec, mut unit, d| {
        let times = std::mem::take(&mut d.counts.times);
        switch_failed = dest.switch(rec, &mut unit, times, &mut notes).err();
        switch_failed.is_none()
    });
    if let Some(e) = switch_failed {
        return Err(e);
    }
    let handed = unit.end(ended.drained.write_error.take());
    dest.finish(&rec, vec![handed], ended, notes)
}
