//! How a drain unit's output ends, for every strategy: what waits (plain
//! records such as LOST_SAMPLES, what the codec holds) goes out, then the
//! output is finished with its features; after a failed write, then or
//! before, it is salvaged (finished with what was written whole) where it
//! can be, or else cut back to its last checkpoint.

use std::io;
use std::path::Path;

use super::destination::cut_back;
use super::error::{format_io, Kept};
use super::recording::Unit;
use super::run::Drained;
use crate::format::FeatureSet;
use crate::push::drain::DrainReport;
use crate::push::scan::Hits;

/// What an ended unit leaves.
pub struct UnitEnd {
    /// Its numbers, taken once nothing is held (they count the last record).
    pub report: DrainReport,
    /// What the build-id pass needs, where the features did not take it.
    pub hits: Option<Hits>,
    /// The flight recorder: the records it retained.
    pub retained: Option<Vec<u8>>,
    /// A write or the finish failed: the error, and what the output kept.
    pub failed: Option<(io::Error, Option<Kept>)>,
}

/// What a drain thread hands back.
pub struct ThreadEnd {
    /// How its loop went.
    pub drained: Drained,
    /// How its unit ended (a failed write or finish: what its data.N kept).
    pub end: UnitEnd,
    /// CPU time the thread used.
    pub cpu_seconds: f64,
}

/// Ends `drain`, whose loop ended with `error` (a failed write) or not.
/// `plain` goes out first; `features` makes the output's features from the
/// hits (taking them where it uses them); `path` is the unit's file (None:
/// a pipe or memory, which are not cut back).
pub fn end_unit(
    mut drain: Unit,
    mut error: Option<io::Error>,
    plain: &[u8],
    path: Option<&Path>,
    features: impl FnOnce(&mut Option<Hits>) -> FeatureSet,
) -> UnitEnd {
    if error.is_none() {
        error = drain.end().err();
    }
    if error.is_none() && !plain.is_empty() {
        error = drain.write_plain(plain).err();
    }
    // What the codec holds goes out before the report is taken: the sizes
    // (and a directory's HEADER_COMPRESSED) count the last record.
    if error.is_none() {
        error = drain.flush().err();
    }
    debug_assert!(
        error.is_some() || !drain.holds(),
        "a report taken with bytes held misses the last record"
    );
    let report = drain.report();
    let mut hits = drain.take_hits();
    let retained = drain.snapshot();
    let f = features(&mut hits);
    let kept_at = drain.checkpoint_end();
    let failed = match error {
        Some(err) => {
            let salvaged = path.is_some() && drain.salvage(&f).is_ok();
            let kept = match path {
                Some(p) if salvaged => Some(Kept::Everything(crate::format::size_on_disk(p))),
                Some(p) => cut_back(p, kept_at),
                None => None,
            };
            Some((err, kept))
        }
        None => match drain.finish(&f) {
            Ok(()) => None,
            Err(e) => Some((format_io(e), path.and_then(|p| cut_back(p, kept_at)))),
        },
    };
    UnitEnd {
        report,
        hits,
        retained,
        failed,
    }
}
