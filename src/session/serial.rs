//! The serial strategy: every ring drained by one unit on this thread into
//! one output (a file or a pipe, [`FileOutput`]), switched to a new file on
//! `--switch-output`.

use super::error::RecordError;
use super::file_output::FileOutput;
use super::recording::Recording;
use super::summary::Summary;

/// Runs a serial recording to the end.
pub fn record(mut rec: Recording<'_>, mut notes: Vec<String>) -> Result<Summary, RecordError> {
    let (mut out, mut drain) = FileOutput::begin(&rec, &mut notes)?;
    let child = rec.start(&mut out.out)?;
    let mut switch_failed = None;
    let ended = rec.run(&mut drain, child, |rec, drain, d| {
        switch_failed = out.switch(rec, drain, d.counts.times, &mut notes).err();
        // The next output's sample times start afresh.
        d.counts.times = Default::default();
        switch_failed.is_none()
    });
    if let Some(e) = switch_failed {
        return Err(e);
    }
    out.finish(&rec, drain, ended, notes)
}
