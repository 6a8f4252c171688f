//! The serial strategy: every ring drained by one unit on this thread into
//! one output (a file or a pipe, [`FileOutput`]), switched to a new file on
//! `--switch-output`.

use super::error::RecordError;
use super::file_output::FileOutput;
use super::recording::Recording;
use super::run;
use super::summary::Summary;
use super::unit::Unit;

/// Runs a serial recording to the end.
pub fn record(mut rec: Recording<'_>, mut notes: Vec<String>) -> Result<Summary, RecordError> {
    let (mut out, mut drain) = FileOutput::begin(&rec, &mut notes)?;
    let child = rec.start(&mut out.out)?;
    let (mut rings, event_fds) = rec.take_rings();
    let features = rec.features.clone();
    let loop_options = rec.loop_options(&features, rec.o.checkpoint);
    let channel = rec.channel.take();
    let mut ctl = rec.supervisor(channel, child, true);
    let mut switch_failed = None;
    let on_switch = |drain: &mut Unit, d: &mut run::Drained| {
        switch_failed = out.switch(&rec, drain, d.counts.times, &mut notes).err();
        // The next output's sample times start afresh.
        d.counts.times = Default::default();
        switch_failed.is_none()
    };
    let drained = run::drain_all(
        &mut drain,
        &mut rings,
        &event_fds,
        &mut ctl,
        &loop_options,
        on_switch,
    );
    let ended = ctl.end(drained);
    if let Some(e) = switch_failed {
        return Err(e);
    }
    rec.prepared.set.rings = rings;
    out.finish(&rec, drain, ended, notes)
}
