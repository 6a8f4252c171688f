//! `--flight-recorder SIZE`: the drain compresses into memory segments
//! (`push::MemorySink`) and keeps the newest SIZE bytes of compressed
//! trace; SIGUSR2, `--control` `snapshot`, or the end of the recording
//! write what it holds as `OUTPUT.<timestamp>`: header, attrs, a side band
//! for the window (processes as they are now, plus every mapping seen since
//! the start, so maps of processes created before the window or gone since
//! are there), the retained records, and the features.

use super::destination::Destination;
use super::error::RecordError;
use super::flight_window::FlightWindow;
use super::recording::Recording;
use super::summary::Summary;
use crate::push::Segments;

pub fn record(
    mut rec: Recording<'_>,
    cap: u64,
    mut notes: Vec<String>,
) -> Result<Summary, RecordError> {
    let o = rec.options();
    let (mut drain, build_notes) = rec.drain_unit(Segments::new(cap).into(), true, true)?;
    notes.extend(build_notes);
    let side_band = rec.side_band(&mut notes);
    let mut w = FlightWindow::new(&side_band);
    let mut out = Destination::Memory {
        path: o.output.clone(),
    };
    let child = rec.start(&mut out)?;

    let mut ended = rec.run(&mut drain, child, |rec, drain, drained| {
        let taken = w.snapshot_unit(rec, drain, &mut notes);
        drained.write_error = taken.err();
        drained.write_error.is_none()
    });
    if let Some(err) = ended.drained.write_error.take() {
        return Err(w.failed(&rec, err));
    }
    // The end writes what the recorder holds, like a last snapshot.
    let last = match w.snapshot_unit(&rec, &mut drain, &mut notes) {
        Ok(p) => p,
        Err(err) => return Err(w.failed(&rec, err)),
    };
    Ok(Summary {
        output: last.display().to_string(),
        side_band_bytes: w.side_band_bytes,
        bytes_written: w.bytes,
        outputs: std::mem::take(&mut w.written),
        ..rec.summary(drain.report(), &mut ended, notes)
    })
}
