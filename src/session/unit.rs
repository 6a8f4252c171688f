//! A drain unit as the session holds it: the one codec-generic [`Drain`]
//! behind a box (one indirect call per pass), and what the session does
//! with the unit's output while the unit lends it (a checkpoint, a switch,
//! a snapshot) or once it returns it (the finish, or the salvage after a
//! failed write).
//!
//! The end ([`Unit::end`]): what the unit holds back (off-CPU waits still
//! open) and what the codec holds go out, then LOST_SAMPLES (from the
//! events' PERF_FORMAT_LOST counts; a directory has them in `data`); only
//! then are the numbers taken, so they count the last record, and the
//! output finished with the features (HEADER_COMPRESSED with the measured
//! ratio, build ids) and the header.
//!
//! After a failed write (ENOSPC, EFBIG, EIO) the loop has stopped at once.
//! The serial sink knows which records were written whole (a failed write
//! is not counted), the async sink which writes landed before the first
//! that failed; the output is salvaged there, its features and header
//! after what was kept: where the features do not fit, the last records
//! are cut, or only the features reading needs are written
//! ([`Salvage`](crate::format::writer::Salvage)). A finish with no failed
//! write does the same when the features alone do not fit. Where even that
//! fails, the file is cut back to its last checkpoint, which the header
//! already describes. Either way the recording fails saying what the file
//! kept ([`Kept`]).

use std::io;
use std::path::Path;

use super::error::{format_io, Kept};
use super::place::cut_back;
use crate::event::ring::Rings;
use crate::format::FeatureSet;
use crate::push::drain::{Drain, DrainReport, Flush};
use crate::push::lent::Lent;
use crate::push::{Output, Segments};
use crate::transform::scan::{Hits, RecordCounts};

/// One drain unit: it owns its codec, sink and output; its rings are
/// lent to it pass by pass.
pub struct Unit(Box<dyn Drain + Send>);

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

impl Unit {
    /// The unit `drain` (as `unit_build` builds it).
    pub fn new(drain: Box<dyn Drain + Send>) -> Self {
        Unit(drain)
    }

    /// One pass over `rings` (see [`Drain::pass`]).
    pub fn pass(&mut self, rings: &mut Rings, min: u64, n: &mut RecordCounts) -> io::Result<bool> {
        self.0.pass(rings, min, n)
    }

    /// Records that never were in a ring (side band, LOST_SAMPLES).
    pub fn write_plain(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.0.write_plain(bytes)
    }

    /// What the codec and the sink hold goes into the output.
    pub fn flush(&mut self) -> io::Result<()> {
        self.0.flush(Flush::Held)
    }

    /// The numbers kept so far.
    pub fn report(&self) -> DrainReport {
        self.0.report()
    }

    /// Bytes of records in the current output (`--max-size`, switches).
    pub fn bytes_written(&self) -> u64 {
        self.0.bytes_written()
    }

    /// Where the output's last checkpoint left it: what a failed write
    /// rolls back to.
    pub fn checkpoint_end(&self) -> Option<u64> {
        self.0.report().checkpoint_end
    }

    /// Makes the output perf-readable as it is now, with `features` (plus
    /// HEADER_COMPRESSED); the bytes it used, `None` where it cannot.
    pub fn checkpoint(&mut self, features: &FeatureSet) -> io::Result<Option<u64>> {
        self.0.lend()?.checkpoint(features)
    }

    /// Flushes, waits until every write landed and lends the output: for
    /// a switch, a snapshot or the hits, all at one loan.
    pub fn lend(&mut self) -> io::Result<Lent<'_>> {
        self.0.lend()
    }

    /// Ends the unit, whose loop ended with `error` (a failed write) or
    /// not: held-back records and `plain` go out first, then the output is
    /// finished with `features` (made from the hits, taking them where it
    /// uses them); after a failed write it is salvaged where it can be (it
    /// is at `path`: None for a pipe or memory), or else cut back to its
    /// last checkpoint.
    pub fn end(
        self,
        mut error: Option<io::Error>,
        plain: &[u8],
        path: Option<&Path>,
        features: impl FnOnce(&mut Option<Hits>) -> FeatureSet,
    ) -> UnitEnd {
        let mut d = self.0;
        if error.is_none() {
            error = d.flush(Flush::End).err();
        }
        if error.is_none() && !plain.is_empty() {
            error = d.write_plain(plain).err();
        }
        // What the codec holds goes out before the report is taken: the sizes
        // (and a directory's HEADER_COMPRESSED) count the last record.
        if error.is_none() {
            error = d.flush(Flush::Held).err();
        }
        let report = d.report();
        let kept_at = report.checkpoint_end;
        let mut returned = d.into_output();
        let retained = (returned.output.as_ref())
            .and_then(Output::segments)
            .map(Segments::snapshot);
        let mut hits = returned.hits.take();
        let f = features(&mut hits);
        let failed = match error.or(returned.error.take()) {
            Some(err) => {
                let kept = match path {
                    Some(p) => match returned.salvage(&f) {
                        Ok(s) => Some(Kept::salvaged(crate::format::size_on_disk(p), s)),
                        Err(_) => cut_back(p, kept_at),
                    },
                    None => None,
                };
                Some((err, kept))
            }
            // The features may not fit after the last records (a full disk
            // that the records' writes just missed): said as a failure.
            None => match returned.finish(&f) {
                Ok(s) if s.whole() => None,
                Ok(s) => {
                    let size = path.map_or(0, crate::format::size_on_disk);
                    Some((s.error(), Some(Kept::salvaged(size, s))))
                }
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
}
