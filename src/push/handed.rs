//! An output handed back by its sink or drain unit ([`HandedBack`]): at a
//! switch (the unit goes on in the next output) or at the end; or, for a
//! snapshot, a copy of what the unit retains. The
//! session finishes it; the finish and the salvage here are the format's
//! (what fits after the records), the policy around them the session's.

use std::io;

use super::output::Output;
use super::report::UnitReport;
use crate::format::writer::Salvage;
use crate::format::{CompressedInfo, FeatureSet, FormatError};
use crate::transform::scan::Hits;

/// An output handed back: every write landed, or after a failed write cut
/// back to what landed whole.
#[derive(Default)]
pub struct HandedBack {
    /// The output (None: the sink wrote nowhere).
    pub(crate) output: Option<Output>,
    /// Data sizes at the ends of recent writes (record boundaries): where a
    /// salvage may cut back to when the features do not fit after the data.
    pub(crate) ends: Vec<u64>,
    /// The first write that failed (the unit's, or one that landed late).
    pub(crate) error: Option<io::Error>,
    /// HEADER_COMPRESSED as the codec left it (None: raw records).
    pub(crate) compressed: Option<CompressedInfo>,
    /// What the build-id pass needs, gathered since it was last taken (a
    /// drain unit's; None: not asked for).
    pub(crate) hits: Option<Hits>,
    /// The unit's numbers when it handed the output back (a drain unit's).
    pub(crate) report: UnitReport,
    /// A snapshot's copy of what the unit retains (the flight recorder's
    /// records, oldest first), the output staying the unit's (None); empty
    /// where the output itself is handed back.
    pub(crate) retained: Vec<u8>,
}

impl HandedBack {
    /// What an output handed back at the end retains (the flight
    /// recorder's memory), as a snapshot's copy; its failed write, if one
    /// did.
    pub fn into_copy(mut self) -> io::Result<HandedBack> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let retained = (self.output.take().as_ref())
            .and_then(Output::segments)
            .map(super::Segments::snapshot)
            .unwrap_or_default();
        Ok(HandedBack { retained, ..self })
    }

    /// `features` plus HEADER_COMPRESSED as the codec left it.
    pub fn features(&self, features: &FeatureSet) -> FeatureSet {
        features.with_compressed(self.compressed)
    }

    /// The output, where every write landed; else the first error.
    pub fn landed(self) -> io::Result<Output> {
        match (self.error, self.output) {
            (Some(e), _) => Err(e),
            (None, Some(out)) => Ok(out),
            (None, None) => Err(io::Error::other("this sink wrote nowhere")),
        }
    }

    /// Every write landed: the output finished with `features` (plus
    /// HEADER_COMPRESSED), or, where they do not fit after the records,
    /// cut back as [`salvage`](Self::salvage) does (the [`Salvage`] says
    /// what was left out). Nothing to finish: Ok.
    pub fn finish(self, features: &FeatureSet) -> Result<Salvage, FormatError> {
        self.finish_cutting_back(features, false)
    }

    /// After a failed write: the output finished with what landed whole,
    /// cut back to a write end where the features do not fit after it.
    pub fn salvage(self, features: &FeatureSet) -> Result<Salvage, FormatError> {
        self.finish_cutting_back(features, true)
    }

    fn finish_cutting_back(
        self,
        features: &FeatureSet,
        after_failure: bool,
    ) -> Result<Salvage, FormatError> {
        let f = self.features(features);
        let ends = self.ends;
        self.output.map_or(Ok(Salvage::default()), |out| {
            out.finish_cutting_back(&f, &ends, after_failure)
        })
    }
}
