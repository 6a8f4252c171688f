//! The entry of a recording: the options checked, the events prepared,
//! then the strategy that groups the rings and says where their bytes go.
//! The top of session/: it imports the strategies; nothing imports it.

use std::time::Instant;

use super::error::{io_err, RecordError};
use super::options::RecordOptions;
use super::recording::Recording;
use super::summary::Summary;
use super::{dso_capture, place, serial, signals, threads};
use crate::notes::Notes;

/// Runs a recording to the end and returns what it did: the options
/// checked, the events prepared, then the strategy that groups the rings
/// and says where their bytes go.
pub fn run(o: &RecordOptions) -> Result<Summary, RecordError> {
    o.validate()?;
    signals::install().map_err(io_err("installing signal handlers"))?;
    let started = Instant::now();
    let mut notes = Notes::new();
    let capture = o.build_ids.cache && o.build_ids.table && !place::is_stream(&o.path);
    if let Some(dir) = crate::synth::build_id::cache_dir().filter(|_| capture) {
        dso_capture::start(dir);
    }
    let rec = Recording::prepare(o, started, &mut notes);
    let summary = rec.and_then(|rec| by_strategy(o, rec, notes));
    let missed = dso_capture::stop();
    summary.map(|mut s| {
        s.notes.extend(missed);
        s
    })
}

/// Runs the prepared recording with the strategy its options choose.
fn by_strategy(
    o: &RecordOptions,
    rec: Recording<'_>,
    notes: Notes,
) -> Result<Summary, RecordError> {
    match &o.threads {
        Some(spec) => threads::record(rec, spec, notes),
        None => serial::record(rec, notes),
    }
}
