//! Where a recording goes, owned by the session from its begin to its
//! finish: a perf.data file or a pipe (`destination/file.rs`), a `--threads`
//! directory (`destination/dir.rs`), or the flight recorder's memory
//! (`destination/flight.rs`). Each kind keeps what differs: where the next
//! output comes from, what `data` holds, how a snapshot is written. A
//! strategy reaches its drain units through [`Units`] at a switch, and
//! gives the outputs they handed back at the end; every perf.data is
//! finished by `finish.rs` (its features assembled there once), for every
//! kind. The core seals each `--switch-output` output once
//! (`Rotation::seal_and_start` at a switch, `seal_last` at the end) and
//! says the outputs, the side band and the samples lost in the summary
//! once; the kinds say what they wrote.
//!
//! ```text
//! begin ─ (Recording::start commits the place) ─ switch … switch ─ finish
//!                          (each switch and the finish: one close, close.rs)
//! ```

mod close;
mod dir;
mod file;
mod flight;

use std::path::{Path, PathBuf};

use super::error::RecordError;
use super::finish::Closing;
use super::place::{create_in, Place};
use super::recording::Recording;
use super::rotation::Rotation;
use super::summary::Summary;
use super::supervisor::Ended;
use crate::format::data_stream::DataStreamWriter;
use crate::notes::Notes;
use crate::push::unit::Unit;
use crate::push::{HandedBack, Output, Segments};
use dir::DirDestination;
use file::FileDestination;
use flight::FlightWindow;

/// Where a recording goes.
pub struct Destination {
    kind: Kind,
    /// Where it is on disk (memory: only the path snapshots are named after).
    place: Place,
    /// `--switch-output`'s names, for a file or a directory: each output
    /// sealed once, at a switch or the end.
    rotation: Option<Rotation>,
}

enum Kind {
    /// A perf.data file or a pipe, written by the unit on this thread.
    File(FileDestination),
    /// A `--threads` directory: `data` written here, a `data.N` per drain
    /// thread.
    Dir(Box<DirDestination>),
    /// `--flight-recorder`: the units keep the newest records in memory;
    /// each snapshot is written out as a file (or directory) of its own.
    Memory(FlightWindow),
}

impl Destination {
    /// For one unit on this thread: the output (a file under a temporary
    /// name until the recording has started, a pipe, or memory) and the
    /// unit writing to it, its side band written.
    pub fn begin(
        rec: &Recording<'_>,
        notes: &mut Notes,
    ) -> Result<(Self, Box<dyn Unit + Send>), RecordError> {
        let o = rec.options();
        if let Some(cap) = o.flight_recorder {
            let unit = rec.drain_unit(Segments::new(cap).into(), true, true, notes)?;
            // The side band is the window's: each snapshot writes it first.
            let window = FlightWindow::new(&rec.side_band(notes), false);
            let place = Place::Memory {
                path: o.path.clone(),
            };
            return Ok((Destination::of(rec, Kind::Memory(window), place), unit));
        }
        let (out, place, unit) = FileDestination::begin(rec, notes)?;
        Ok((Destination::of(rec, Kind::File(out), place), unit))
    }

    /// For units on drain threads: the directory (under a temporary name
    /// until the recording has started, `data` with the side band whole
    /// from here), or the flight recorder's memory.
    pub fn begin_for_threads(rec: &Recording<'_>, notes: &mut Notes) -> Result<Self, RecordError> {
        let o = rec.options();
        if o.flight_recorder.is_some() {
            let window = FlightWindow::new(&rec.side_band(notes), true);
            let place = Place::Memory {
                path: o.path.clone(),
            };
            return Ok(Destination::of(rec, Kind::Memory(window), place));
        }
        let (dir, place) = DirDestination::create(rec, notes)?;
        Ok(Destination::of(rec, Kind::Dir(Box::new(dir)), place))
    }

    fn of(rec: &Recording<'_>, kind: Kind, place: Place) -> Self {
        let o = rec.options();
        let rotation = (o.switch_output.is_some() && !matches!(kind, Kind::Memory(_)))
            .then(|| Rotation::new(&o.path, o.switch_max_files));
        Destination {
            kind,
            place,
            rotation,
        }
    }

    /// The output of drain thread `i` of `n`: its `data.i`, or its share of
    /// the flight recorder's memory.
    pub fn thread_output(
        &self,
        rec: &Recording<'_>,
        i: usize,
        n: usize,
    ) -> Result<Output, RecordError> {
        Ok(match &self.kind {
            Kind::Memory(_) => {
                let cap = rec.options().flight_recorder.unwrap_or(0);
                Segments::new((cap / n as u64).max(16 << 10)).into()
            }
            _ => Output::Stream(DataStreamWriter::new(
                create_in(self.dir()?, &format!("data.{i}")).map_err(RecordError::Output)?,
            )),
        })
    }

    /// The directory the drain threads' files are in (its final name once
    /// the recording has started).
    fn dir(&self) -> Result<&Path, RecordError> {
        self.place
            .current_path()
            .ok_or_else(|| RecordError::Usage("this output is not a directory".into()))
    }

    /// Where the drain threads' files are, once the recording has started
    /// (memory: none).
    pub fn threads_dir(&self) -> PathBuf {
        match self.kind {
            Kind::Memory(_) => PathBuf::new(),
            _ => self.dir().map(Path::to_path_buf).unwrap_or_default(),
        }
    }

    /// Whether the units gather what the build-id pass and later side
    /// bands need.
    pub fn wants_hits(&self, rec: &Recording<'_>) -> bool {
        rec.options().build_ids.table || matches!(self.kind, Kind::Memory(_))
    }

    /// Where it is on disk, for the start to commit.
    pub fn place_mut(&mut self) -> &mut Place {
        &mut self.place
    }

    /// Bytes of the side band written (`--max-size` counts them).
    pub fn side_band_bytes(&self) -> u64 {
        match &self.kind {
            Kind::File(f) => f.side_band_bytes,
            Kind::Dir(d) => d.side_band_bytes,
            Kind::Memory(w) => w.side_band_bytes,
        }
    }

    /// The end, with the outputs every unit handed back (in the units'
    /// order): LOST_SAMPLES, the features and the header written (the
    /// flight recorder: its last snapshot), or after a failed write the
    /// output salvaged and the error said with what it kept; the last
    /// output named like the others; the summary.
    pub fn finish(
        self,
        rec: &Recording<'_>,
        handed: Vec<HandedBack>,
        mut ended: Ended,
        notes: Notes,
    ) -> Result<Summary, RecordError> {
        let report = handed
            .iter()
            .map(|h| h.report.clone())
            .reduce(|all, r| all.combined(&r))
            .unwrap_or_default();
        let times = ended.drained.counts.times;
        let mut summary = rec.summary(report, &mut ended, notes);
        let mut notes = Notes::new();
        summary.side_band_bytes = self.side_band_bytes();
        // The last output carries LOST_SAMPLES, as perf's.
        let (lost, lost_samples) = rec.lost_samples();
        summary.lost_samples = lost_samples;
        let place = self.place.display();
        let (written, outputs) =
            self.end(rec, handed, Closing::end(Some(times), &lost), &mut notes)?;
        summary.bytes_written = written.unwrap_or(summary.bytes_written);
        // Switched: the last output has its timestamped name by now.
        summary.path = outputs.last().cloned().unwrap_or(place);
        summary.outputs = outputs;
        summary.notes.extend(notes.into_vec());
        Ok(summary)
    }

    /// The last output closed (`how`) and sealed like the others (perf's
    /// "Dump"): the bytes written where known, and every output named.
    fn end(
        mut self,
        rec: &Recording<'_>,
        handed: Vec<HandedBack>,
        how: Closing<'_>,
        notes: &mut Notes,
    ) -> Result<(Option<u64>, Vec<String>), RecordError> {
        let handed = handed.into_iter().map(Some).collect();
        let written = self.close(rec, handed, None, how, notes)?;
        let outputs = match (self.rotation, self.kind) {
            (Some(r), _) => r.written,
            (None, Kind::Memory(w)) => w.written,
            (None, Kind::File(_) | Kind::Dir(_)) => Vec::new(),
        };
        Ok((written, outputs))
    }
}
