//! `--flight-recorder SIZE`: one unit on this thread compresses into memory
//! (`push::Output::Memory`, [`Segments`]) and keeps the newest SIZE bytes of
//! compressed trace; SIGUSR2, `--control` `snapshot` and the end write what
//! it holds as `OUTPUT.<timestamp>` ([`FlightWindow`]).

use super::destination::Destination;
use super::error::RecordError;
use super::flight_window::FlightWindow;
use super::options::SwitchOutput;
use super::recording::Recording;
use super::run;
use super::summary::Summary;
use super::unit::Unit;
use crate::push::Segments;

pub fn record(
    mut rec: Recording<'_>,
    cap: u64,
    mut notes: Vec<String>,
) -> Result<Summary, RecordError> {
    let o = rec.o;
    let (mut drain, build_notes) = rec.drain_unit(Segments::new(cap).into(), true, true)?;
    notes.extend(build_notes);
    let side_band = rec.side_band(&mut notes);
    let mut w = FlightWindow::new(&side_band);
    let mut out = Destination::Memory {
        path: o.output.clone(),
    };
    let child = rec.start(&mut out)?;

    let (mut rings, event_fds) = rec.take_rings();
    let features = rec.features.clone();
    let opts = rec.loop_options(&features, None);
    let channel = rec.channel.take();
    let mut ctl = rec.supervisor(channel, child, true);
    // SIGUSR2 asks for a snapshot, as perf's --switch-output does.
    ctl.limits.switch = Some(SwitchOutput::Signal);
    let on_snapshot = |drain: &mut Unit, drained: &mut run::Drained| {
        let taken = w.snapshot_unit(&rec, drain, &mut notes);
        drained.write_error = taken.err();
        drained.write_error.is_none()
    };
    let drained = run::drain_all(
        &mut drain,
        &mut rings,
        &event_fds,
        &mut ctl,
        &opts,
        on_snapshot,
    );
    let mut ended = ctl.end(drained);
    rec.prepared.set.rings = rings;
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
