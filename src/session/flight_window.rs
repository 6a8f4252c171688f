//! What the flight recorder keeps across its snapshots, in every strategy.

use std::io;

use super::error::RecordError;
use super::recording::{side_band_hits, Recording};
use crate::push::scan::Hits;

/// The flight recorder across the recording.
pub struct FlightWindow {
    /// Every MMAP/MMAP2/FORK/COMM record seen, and the sample pages.
    pub hits: Hits,
    pub written: Vec<String>,
    /// Bytes of records in the last snapshot.
    pub bytes: u64,
    pub side_band_bytes: u64,
}

impl FlightWindow {
    pub fn new(side_band: &[u8]) -> FlightWindow {
        FlightWindow {
            hits: side_band_hits(side_band),
            written: Vec::new(),
            bytes: 0,
            side_band_bytes: side_band.len() as u64,
        }
    }

    /// A write of a snapshot failed: what is kept.
    pub fn failed(&self, rec: &Recording<'_>, err: io::Error) -> RecordError {
        RecordError::Io {
            what: format!(
                "writing a snapshot of {} failed (no partial snapshot is left){}",
                rec.o.output.display(),
                if self.written.is_empty() {
                    "; no snapshot was written before".to_string()
                } else {
                    format!(
                        "; the snapshots written before are kept: {}",
                        self.written.join(", ")
                    )
                }
            ),
            err,
        }
    }
}
