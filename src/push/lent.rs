//! A drain unit's output as the unit lends it to the session, settled
//! (every write landed): what a copy acts on, a checkpoint or a snapshot.
//! A switch and the end are not loans: the unit hands its output back
//! ([`HandedBack`](crate::push::HandedBack)).

use std::io;

use crate::format::{CompressedInfo, FeatureSet};
use crate::push::{Output, Segments};
use crate::transform::scan::Hits;

/// A drain unit's output, lent settled: every write has landed.
pub struct Lent<'a> {
    /// The output (None: the unit writes nowhere).
    pub output: Option<&'a mut Output>,
    /// HEADER_COMPRESSED as it stands (None: raw records).
    pub compressed: Option<CompressedInfo>,
    /// What the build-id pass needs, gathered since it was last taken
    /// (None: not asked for).
    pub hits: Option<&'a mut Hits>,
}

impl Lent<'_> {
    /// `features` plus HEADER_COMPRESSED as it stands.
    pub fn features(&self, features: &FeatureSet) -> FeatureSet {
        features.with_compressed(self.compressed)
    }

    /// A checkpoint with `features`: the bytes it used, `None` where the
    /// output cannot (see [`Output::checkpoint`]).
    pub fn checkpoint(&mut self, features: &FeatureSet) -> io::Result<Option<u64>> {
        let f = self.features(features);
        match self.output.as_deref_mut() {
            Some(out) => out.checkpoint(&f),
            None => Ok(None),
        }
    }

    /// What the build-id pass gathered; gathering starts over.
    pub fn take_hits(&mut self) -> Option<Hits> {
        self.hits.as_deref_mut().map(std::mem::take)
    }

    /// The flight recorder's retained records, oldest first.
    pub fn snapshot(&self) -> Option<Vec<u8>> {
        self.output.as_deref()?.segments().map(Segments::snapshot)
    }
}
