//! What the flight recorder keeps across its snapshots, in every strategy,
//! and the one writer of a snapshot. SIGUSR2, `--control` `snapshot` and the
//! end write `OUTPUT.<timestamp>`: header, attrs, a side band for the window
//! (processes as they are now, plus every map seen since the start, so maps
//! of processes created before the window or gone since are there), the
//! retained segments in order, and the features (HEADER_COMPRESSED as
//! recorded, the build ids of what was seen). It is written under a hidden
//! temporary name, finished and synced, and only then given its name (a
//! file never over an existing one), so a kill or a full disk leaves a
//! whole snapshot or none.
//!
//! With `--threads` each drain thread keeps SIZE/threads of segments (at
//! least 16 KiB); a snapshot asks every thread for what it retains (a
//! thread that has ended takes no request) and writes a directory: `data`
//! with the side band and features, a `data.N` per thread.

use std::io;
use std::io::Write;
use std::path::PathBuf;

use super::error::{format_io, RecordError};
use super::mailbox::Reply;
use super::map_history::MapHistory;
use super::place::{create_in, dir_of};
use super::recording::Recording;
use super::rotation::stamped;
use super::summary::Summary;
use super::supervisor::Ended;
use super::unit::Unit;
use crate::format::writer::FileWriter;
use crate::format::FeatureSet;
use crate::notes::Notes;
use crate::push::drain::DrainReport;
use crate::synth::features::dir_features;

/// What a snapshot holds besides its side band: the drain's retained
/// records (in the snapshot's file), or each drain thread's (`--threads`:
/// thread index, records; a directory's `data.N`).
pub enum Retained<'a> {
    /// One drain's records, after the side band in the file.
    InFile(&'a [u8]),
    /// Each drain thread's records, a `data.N` each.
    PerThread(&'a [(usize, Vec<u8>)]),
}

/// The flight recorder across the recording.
pub struct FlightWindow {
    /// Every MMAP/MMAP2/FORK/COMM record seen, and the sample pages (one
    /// output, never switched: a snapshot holds the window's records).
    pub maps: MapHistory,
    pub written: Vec<String>,
    /// Bytes of records in the last snapshot.
    pub bytes: u64,
    pub side_band_bytes: u64,
}

impl FlightWindow {
    pub fn new(side_band: &[u8]) -> FlightWindow {
        FlightWindow {
            maps: MapHistory::new(side_band),
            written: Vec::new(),
            bytes: 0,
            side_band_bytes: side_band.len() as u64,
        }
    }

    /// Writes one snapshot: the side band for the window (every map seen
    /// since the start), the `retained` records and the features `f` with
    /// the build ids of what it holds; hidden under a temporary name beside
    /// the output until it is finished and synced, then named
    /// `OUTPUT.<timestamp>` (never over an existing file), so a kill or a
    /// full disk midway leaves no partial snapshot under a snapshot's name.
    pub fn write(
        &mut self,
        rec: &Recording<'_>,
        retained: Retained<'_>,
        mut f: FeatureSet,
        notes: &mut Notes,
    ) -> io::Result<PathBuf> {
        let o = rec.options();
        let mut tmp = tempfile::Builder::new();
        tmp.prefix(".perfz-snapshot-");
        let side_band = rec.later_side_band(self.maps.all_maps(), notes);
        rec.add_build_ids(&mut f, &self.maps.output, notes);
        let attrs = rec.attrs();
        let path = match retained {
            Retained::InFile(records) => {
                let tmp = tmp.tempfile_in(dir_of(&o.output))?;
                let mut fw =
                    FileWriter::new(tmp.as_file().try_clone()?, attrs).map_err(format_io)?;
                fw.write_records(&side_band)?;
                fw.write_records(records)?;
                // The summary names the last snapshot: its own size.
                self.bytes = fw.data_size();
                fw.finish(&f).map_err(format_io)?.sync_all()?;
                let path = stamped(&o.output);
                tmp.persist_noclobber(&path).map_err(|e| e.error)?;
                path
            }
            Retained::PerThread(parts) => {
                let tmp = tmp.tempdir_in(dir_of(&o.output))?;
                let mut fw =
                    FileWriter::new(create_in(tmp.path(), "data")?, attrs).map_err(format_io)?;
                fw.write_records(&side_band)?;
                let mut bytes = fw.data_size();
                fw.finish(&f).map_err(format_io)?.sync_all()?;
                for (i, records) in parts {
                    let mut file = create_in(tmp.path(), &format!("data.{i}"))?;
                    file.write_all(records)?;
                    file.sync_all()?;
                    bytes += records.len() as u64;
                }
                let path = stamped(&o.output);
                std::fs::rename(tmp.path(), &path)?;
                let _ = tmp.keep();
                self.bytes = bytes;
                path
            }
        };
        self.written.push(path.display().to_string());
        Ok(path)
    }

    /// A write of a snapshot failed: what is kept.
    pub fn failed(&self, rec: &Recording<'_>, err: io::Error) -> RecordError {
        RecordError::Io {
            what: format!(
                "writing a snapshot of {} failed (no partial snapshot is left){}",
                rec.options().output.display(),
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

    /// A snapshot of units on threads of their own: `parts` are each
    /// unit's retained records (index, records), `reports` their numbers.
    pub fn snapshot_units(
        &mut self,
        rec: &Recording<'_>,
        parts: &[(usize, Vec<u8>)],
        reports: &[DrainReport],
        notes: &mut Notes,
    ) -> Result<PathBuf, RecordError> {
        let f = dir_features(rec.features(), DrainReport::combined_compressed(reports));
        self.write(rec, Retained::PerThread(parts), f, notes)
            .map_err(|err| self.failed(rec, err))
    }

    /// SIGUSR2 or `snapshot` with units on threads: their answers.
    pub fn snapshot_answers(
        &mut self,
        rec: &Recording<'_>,
        answers: Vec<Reply>,
        notes: &mut Notes,
    ) -> Result<PathBuf, RecordError> {
        let mut parts = Vec::new();
        let mut reports = Vec::new();
        for r in answers {
            if let Some(h) = r.hits {
                self.maps.seen(h);
            }
            parts.push((r.index, r.records));
            reports.push(r.report);
        }
        self.snapshot_units(rec, &parts, &reports, notes)
    }

    /// A snapshot of one drain unit on this thread: what it retains.
    pub fn snapshot_unit(
        &mut self,
        rec: &Recording<'_>,
        drain: &mut Unit,
        notes: &mut Notes,
    ) -> io::Result<PathBuf> {
        let mut lent = drain.lend()?;
        if let Some(h) = lent.take_hits() {
            self.maps.seen(h);
        }
        let f = lent.features(rec.features());
        let records = lent.snapshot().unwrap_or_default();
        self.write(rec, Retained::InFile(&records), f, notes)
    }
}

impl FlightWindow {
    /// The end of a recording whose unit runs on this thread: what it
    /// holds written like a last snapshot (a snapshot that failed ended the
    /// recording, said with the snapshots kept), and the summary.
    pub fn finish(
        mut self,
        rec: &Recording<'_>,
        mut drain: Unit,
        mut ended: Ended,
        mut notes: Notes,
    ) -> Result<Summary, RecordError> {
        if let Some(err) = ended.drained.write_error.take() {
            return Err(self.failed(rec, err));
        }
        let last = match self.snapshot_unit(rec, &mut drain, &mut notes) {
            Ok(p) => p,
            Err(err) => return Err(self.failed(rec, err)),
        };
        Ok(Summary {
            output: last.display().to_string(),
            side_band_bytes: self.side_band_bytes,
            bytes_written: self.bytes,
            outputs: std::mem::take(&mut self.written),
            ..rec.summary(drain.report(), &mut ended, notes)
        })
    }
}
