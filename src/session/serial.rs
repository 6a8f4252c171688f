//! The serial strategy: every ring drained by one unit on this thread into
//! one [`Destination`] (a file, a pipe or the flight recorder's memory),
//! switched on `--switch-output` (or a snapshot).

use super::destination::{Destination, Units, UnitsEnd};
use super::error::RecordError;
use super::recording::Recording;
use super::summary::Summary;
use crate::notes::Notes;

/// Runs a serial recording to the end.
pub fn record(mut rec: Recording<'_>, mut notes: Notes) -> Result<Summary, RecordError> {
    let (mut dest, mut unit) = Destination::begin(&rec, &mut notes)?;
    let child = rec.start(dest.place_mut())?;
    let mut switch_failed = None;
    let ended = rec.run(&mut unit, child, |rec, unit, d| {
        let times = std::mem::take(&mut d.counts.times);
        switch_failed = dest.switch(rec, Units::Here(unit), times, &mut notes).err();
        switch_failed.is_none()
    });
    if let Some(e) = switch_failed {
        return Err(e);
    }
    dest.finish(&rec, UnitsEnd::Here(unit), ended, notes)
}
