//! A drain unit's output as the unit lends it to the session, settled
//! (every write landed): what a checkpoint, a switch or a snapshot acts on.

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
    /// Set by [`switch`](Lent::switch): the codec starts a new stream.
    pub(crate) restart: &'a mut bool,
}

impl Lent<'_> {
    /// `features` plus HEADER_COMPRESSED as it stands.
    pub fn features(&self, features: &FeatureSet) -> FeatureSet {
        let mut f = features.clone();
        if let Some(info) = self.compressed {
            f.set_compressed(info);
        }
        f
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

    /// The unit goes on in `next`, the codec on a new stream; the output
    /// written so far is returned, to be finished (with [`features`](Self::features)).
    pub fn switch(&mut self, next: Output) -> io::Result<Output> {
        let out = self
            .output
            .as_deref_mut()
            .ok_or_else(|| io::Error::other("this unit writes nowhere: nothing to switch"))?;
        *self.restart = true;
        Ok(std::mem::replace(out, next))
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
