//! A drain unit's output as the unit lends it to the session, settled
//! (every write landed): what a checkpoint, a switch or a snapshot acts on.

use std::fs::File;
use std::io;

use crate::format::writer::Salvage;
use crate::format::{AttrEntry, CompressedInfo, FeatureSet, FormatError};
use crate::push::output::sync_in_background;
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
    /// Set by [`switch`](Lent::switch): the codec starts a new stream.
    pub(crate) restart: &'a mut bool,
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

    /// `--switch-output`: the unit goes on in `next` (an output of the
    /// same kind: a perf.data of `attrs`, or a `data.N` stream), the codec
    /// on a new stream; the output so far is finished with `features` (plus
    /// HEADER_COMPRESSED) without waiting for the disk; the [`Salvage`]
    /// says what did not fit (a full disk). A unit that writes nowhere has
    /// nothing to switch.
    pub fn switch(
        &mut self,
        next: File,
        attrs: &[AttrEntry],
        features: &FeatureSet,
    ) -> Result<Salvage, FormatError> {
        let f = self.features(features);
        let Some(out) = self.output.as_deref_mut() else {
            return Ok(Salvage::default());
        };
        let next = out.successor(next, attrs)?;
        *self.restart = true;
        let old = std::mem::replace(out, next);
        let (file, salvage) = old.finish_unsynced(&f)?;
        sync_in_background(file);
        Ok(salvage)
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
