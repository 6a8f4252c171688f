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

use std::fs::File;
use std::io;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::format::writer::FileWriter;
use crate::format::{AttrEntry, FeatureSet};
use crate::notes::Notes;
use crate::push::unit::UnitReport;
use crate::push::HandedBack;
use crate::session::error::{format_io, RecordError};
use crate::session::finish::{features_of, finish, own, Sync};
use crate::session::map_history::MapHistory;
use crate::session::place::{create_in, dir_of};
use crate::session::recording::Recording;
use crate::session::rotation::stamped;
use crate::session::unit::Units;

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
    /// The units run on drain threads: a snapshot is a directory.
    per_thread: bool,
}

impl FlightWindow {
    /// The window of a recording whose side band is `side_band`; its units
    /// run on drain threads (`per_thread`) or on this thread.
    pub fn new(side_band: &[u8], per_thread: bool) -> FlightWindow {
        FlightWindow {
            maps: MapHistory::new(side_band),
            written: Vec::new(),
            bytes: 0,
            side_band_bytes: side_band.len() as u64,
            per_thread,
        }
    }

    /// Writes one snapshot: the side band for the window (every map seen
    /// since the start), the `retained` records, then `last` (the end's
    /// LOST_SAMPLES, as perf writes them into its last output; empty for a
    /// snapshot while recording) and its features `f`; hidden under a temporary name beside
    /// the output until it is finished and synced, then named
    /// `OUTPUT.<timestamp>` (never over an existing file), so a kill or a
    /// full disk midway leaves no partial snapshot under a snapshot's name.
    pub fn write(
        &mut self,
        rec: &Recording<'_>,
        retained: Retained<'_>,
        last: &[u8],
        f: FeatureSet,
        notes: &mut Notes,
    ) -> io::Result<PathBuf> {
        let o = rec.options();
        let mut tmp = tempfile::Builder::new();
        tmp.prefix(".perfz-snapshot-");
        let side_band = rec.later_side_band(self.maps.all_maps(), notes);
        let attrs = rec.attrs();
        let path = match retained {
            Retained::InFile(records) => {
                let tmp = tmp.tempfile_in(dir_of(&o.path))?;
                let file = tmp.as_file().try_clone()?;
                // The summary names the last snapshot: its own size.
                self.bytes = perf_data(file, tmp.path(), attrs, &[&side_band, records, last], &f)?;
                let path = stamped(&o.path);
                tmp.persist_noclobber(&path).map_err(|e| e.error)?;
                path
            }
            Retained::PerThread(parts) => {
                let tmp = tmp.tempdir_in(dir_of(&o.path))?;
                let file = create_in(tmp.path(), "data")?;
                let data = tmp.path().join("data");
                let mut bytes = perf_data(file, &data, attrs, &[&side_band, last], &f)?;
                for (i, records) in parts {
                    let mut file = create_in(tmp.path(), &format!("data.{i}"))?;
                    file.write_all(records)?;
                    file.sync_all()?;
                    bytes += records.len() as u64;
                }
                let path = stamped(&o.path);
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
                rec.options().path.display(),
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

    /// SIGUSR2 or `snapshot`: a copy of what every unit retains, written.
    pub fn snapshot(
        &mut self,
        rec: &Recording<'_>,
        units: &mut dyn Units,
        notes: &mut Notes,
    ) -> Result<PathBuf, RecordError> {
        let replies = units.snapshot()?;
        self.write_replies(rec, replies, &[], notes)
    }

    /// Writes a snapshot of the units' answers: their hits into the map
    /// history, their records in a file (one unit on this thread) or a
    /// `data.N` each (drain threads); `last` after them (see [`write`](Self::write)).
    fn write_replies(
        &mut self,
        rec: &Recording<'_>,
        copies: Vec<Option<io::Result<HandedBack>>>,
        last: &[u8],
        notes: &mut Notes,
    ) -> Result<PathBuf, RecordError> {
        let mut replies = Vec::with_capacity(copies.len());
        for (i, c) in copies.into_iter().enumerate() {
            if let Some(c) = c {
                replies.push((i, c.map_err(|err| self.failed(rec, err))?));
            }
        }
        for h in replies.iter_mut().filter_map(|(_, r)| r.hits.take()) {
            self.maps.seen(h);
        }
        let reports: Vec<UnitReport> = replies.iter().map(|(_, r)| r.report.clone()).collect();
        let compressed = if self.per_thread {
            UnitReport::combined_compressed(&reports)
        } else {
            reports.first().and_then(|r| r.compressed)
        };
        let (maps, dir) = (Some(&self.maps), self.per_thread);
        let f = features_of(rec, maps, dir, compressed, None, notes);
        let written = if self.per_thread {
            let parts: Vec<(usize, Vec<u8>)> =
                replies.into_iter().map(|(i, r)| (i, r.retained)).collect();
            self.write(rec, Retained::PerThread(&parts), last, f, notes)
        } else {
            let records = replies.first().map_or(&[][..], |(_, r)| &r.retained);
            self.write(rec, Retained::InFile(records), last, f, notes)
        };
        written.map_err(|err| self.failed(rec, err))
    }

    /// The end, with the outputs the units handed back: what they retain
    /// written like a last snapshot, with `lost` (LOST_SAMPLES, as perf's
    /// last output) after it (a snapshot that failed ended the recording,
    /// said with the snapshots kept); the bytes of the last.
    pub fn close(
        &mut self,
        rec: &Recording<'_>,
        handed: Vec<HandedBack>,
        lost: &[u8],
        notes: &mut Notes,
    ) -> Result<u64, RecordError> {
        let replies = handed.into_iter().map(|h| Some(h.into_copy())).collect();
        self.write_replies(rec, replies, lost, notes)?;
        Ok(self.bytes)
    }
}

/// A snapshot's perf.data (its file, or its directory's `data`), at
/// `path` in `file`: `parts` of records, finished with `f` like every
/// output (`finish.rs`); returns its bytes of records.
fn perf_data(
    file: File,
    path: &Path,
    attrs: &[AttrEntry],
    parts: &[&[u8]],
    f: &FeatureSet,
) -> io::Result<u64> {
    let mut fw = FileWriter::new(file, attrs).map_err(format_io)?;
    for p in parts {
        fw.write_records(p)?;
    }
    let bytes = fw.data_size();
    let name = path.display().to_string();
    match finish(own(fw.into()), f, Some(path), name, Sync::Now) {
        Ok(()) => Ok(bytes),
        Err(RecordError::WriteFailed { err, .. }) => Err(err),
        Err(other) => Err(io::Error::other(other.to_string())),
    }
}
