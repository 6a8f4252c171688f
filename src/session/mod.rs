//! One recording, shaped like ripgrep's searcher: plain setup code
//! (`setup`, `file_output`, `synth_side_band`), one runtime choice of codec,
//! sink and meter (`unit_build`), one generic unit that drains rings
//! ([`crate::push::drain`]), and a plain control loop (`run`) and finish
//! around it.
//!
//! ```text
//! record ─ setup::prepare ─ Output::open ─ glue (CodecSpec::visit) ─▶ Box<dyn Drain>
//!        ─ side band ─ enable / start workload ─ Output::commit ─ run::run ─ finish
//! ```

mod build_ids;
mod control;
mod cpu_wait;
mod destination;
mod dir_output;
mod dso_capture;
mod error;
mod file_output;
mod flight_window;
mod layout;
mod limits;
mod mailbox;
mod map_history;
mod memory_asks;
mod options;
mod place;
mod recording;
mod rotation;
mod run;
mod serial;
mod setup;
pub mod signals;
mod status;
mod summary;
mod supervisor;
mod synth_side_band;
mod thread_tally;
mod threads;
mod unit;
mod unit_build;

use std::time::Instant;

pub use crate::push::drain::DrainReport;
pub use control::ControlSpec;
pub use error::{Kept, RecordError};
pub use layout::ThreadSpec;
pub use options::{
    AioBackend, BuildIdOptions, RecordOptions, SwitchOutput, Synth, DEFAULT_FREQUENCY,
};
pub use rotation::stamped as timestamped;
pub use summary::Summary;

use error::io_err;
use recording::Recording;

/// Runs a recording to the end and returns what it did: the options
/// checked, the events prepared, then the strategy that groups the rings
/// and says where their bytes go.
pub fn record(o: &RecordOptions) -> Result<Summary, RecordError> {
    o.validate()?;
    signals::install().map_err(io_err("installing signal handlers"))?;
    let started = Instant::now();
    let mut notes = Vec::new();
    let capture = o.build_ids.cache && o.build_ids.table && !place::is_stdout(&o.output);
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
    notes: Vec<String>,
) -> Result<Summary, RecordError> {
    match &o.threads {
        Some(spec) => threads::record(rec, spec, notes),
        None => serial::record(rec, notes),
    }
}
