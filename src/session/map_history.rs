//! The map history a recording keeps across its outputs: what the current
//! output holds (its side band's maps and what its drains saw, with the
//! sample pages: its build ids), and every map record seen since the start
//! (bounded by `scan::MAX_MAP_BYTES`): the side band of an output begun
//! later (a switched output, a flight-recorder snapshot), where a process
//! gone by then has nothing left in /proc but its samples are there. One
//! history for every strategy: the serial file, the `--threads` directory,
//! the flight recorder.

use crate::transform::scan::{scan_hits, Hits};

/// Maps and sample pages across a recording's outputs.
pub struct MapHistory {
    /// What the current output holds.
    pub output: Hits,
    /// Every map record seen so far (its `maps` only).
    all: Hits,
}

impl MapHistory {
    /// The history of a recording whose first output begins with `side_band`.
    pub fn new(side_band: &[u8]) -> MapHistory {
        let output = side_band_hits(side_band);
        MapHistory {
            all: maps_of(&output),
            output,
        }
    }

    /// What a drain saw in the current output.
    pub fn seen(&mut self, hits: Hits) {
        self.all.merge(maps_of(&hits));
        self.output.merge(hits);
    }

    /// What a drain gathered for the current output, where it did: the
    /// history, for that output's build ids (None: nothing gathered).
    pub fn seen_all(&mut self, hits: Option<Hits>) -> Option<&MapHistory> {
        let h = hits?;
        self.seen(h);
        Some(self)
    }

    /// Every map record seen so far, for a later output's side band.
    pub fn all_maps(&self) -> &[u8] {
        &self.all.maps
    }

    /// The current output ended; the next begins with `side_band`.
    pub fn next_output(&mut self, side_band: &[u8]) {
        self.output = side_band_hits(side_band);
    }
}

/// The map records of `h` alone.
fn maps_of(h: &Hits) -> Hits {
    Hits {
        maps: h.maps.clone(),
        ..Default::default()
    }
}

/// The maps of a side band, for the build-id pass.
fn side_band_hits(side_band: &[u8]) -> Hits {
    let mut h = Hits::default();
    scan_hits(
        perfz_codecs::Input::one(side_band),
        &mut Default::default(),
        Some(&mut h),
    );
    h
}
