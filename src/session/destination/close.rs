//! The one close of a destination's current output, at a switch and at
//! the end, as a unit's `hand_over` is one call with a next output or
//! none: each perf.data finished once (`finish.rs`, by its kind: a file
//! and its features; a directory's data.N and `data`; the flight
//! recorder's last snapshot), then sealed once (`rotation.rs`): at a
//! switch named `OUTPUT.<timestamp>` and the next one started, at the end
//! named like the others. The kinds say only what differs: where the next
//! output comes from (`next`), what follows the close (`carry`), how the
//! next one becomes OUTPUT.

use super::{Destination, Kind};
use crate::notes::Notes;
use crate::push::HandedBack;
use crate::session::error::RecordError;
use crate::session::finish::Closing;
use crate::session::recording::Recording;
use crate::session::unit::Units;
use crate::transform::scan::SampleTimes;

impl Destination {
    /// One switch. `--switch-output`: the kind makes the next output;
    /// every unit hands its own over and goes on in it; the ended one is
    /// closed, sealed (`OUTPUT.<timestamp>`), and the next one started;
    /// where the close fails the recording ends, saying what is kept. The
    /// flight recorder writes a snapshot. `times`: the current output's
    /// first and last sample times, where the strategy knows them.
    pub fn switch(
        &mut self,
        rec: &Recording<'_>,
        units: &mut dyn Units,
        times: SampleTimes,
        notes: &mut Notes,
    ) -> Result<(), RecordError> {
        let outputs = match (&mut self.kind, &self.rotation) {
            (Kind::Memory(w), _) => return w.snapshot(rec, units, notes).map(drop),
            // A `snapshot` command without --switch-output: nothing to do.
            (_, None) => return Ok(()),
            (Kind::File(f), Some(_)) => f.next(rec)?,
            (Kind::Dir(d), Some(_)) => d.next(rec, units.count(), notes)?,
        };
        let handed = units.hand_over(outputs)?;
        if handed.iter().all(Option::is_none) {
            // Every unit has ended (the recording is ending): the current
            // output is the last, closed by the end; nothing switched.
            return Ok(());
        }
        let how = Closing::switch(Some(times));
        self.close(rec, handed, Some(units), how, notes).map(drop)
    }

    /// The current output closed: at a switch (`units`: they went on in
    /// the next output) or at the end (None), with what each unit `handed`
    /// back (None: it had ended). Returns the bytes written, where known.
    pub(super) fn close(
        &mut self,
        rec: &Recording<'_>,
        handed: Vec<Option<HandedBack>>,
        units: Option<&mut dyn Units>,
        how: Closing<'_>,
        notes: &mut Notes,
    ) -> Result<Option<u64>, RecordError> {
        let Destination {
            kind,
            place,
            rotation,
        } = self;
        let written = match kind {
            Kind::File(f) => {
                let h = handed.into_iter().next().flatten().unwrap_or_default();
                f.close(rec, place, h, how, notes)?
            }
            Kind::Dir(d) => Some(d.close(rec, place, handed, how, notes)?),
            Kind::Memory(w) => {
                let handed = handed.into_iter().flatten().collect();
                Some(w.close(rec, handed, how.lost.unwrap_or_default(), notes)?)
            }
        };
        let Some(rotation) = rotation.as_mut() else {
            return Ok(written);
        };
        let Some(units) = units else {
            rotation.seal_last(notes);
            return Ok(written);
        };
        // The current output is closed: from here a failure concerns only
        // the next one, whose temporary is removed.
        let output = &rec.options().path;
        match kind {
            Kind::File(f) => match f.carry(rec, notes) {
                Some(next) => rotation.seal_and_start(notes, || f.start(next, units, output)),
                None => Ok(()),
            },
            Kind::Dir(d) => match d.carry(rec, notes)? {
                Some(next) => rotation.seal_and_start(notes, || {
                    std::fs::rename(next.path(), output)?;
                    let _ = next.keep();
                    Ok(())
                }),
                None => Ok(()),
            },
            Kind::Memory(_) => Ok(()),
        }?;
        Ok(written)
    }
}
