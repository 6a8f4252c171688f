//! Where a recording goes, owned by the session from its begin to its
//! finish: a perf.data file or a pipe (`file_output.rs`), a `--threads`
//! directory (`dir_output.rs`), or the flight recorder's memory
//! (`flight_window.rs`). Each kind's begin, switch (`--switch-output`, or a
//! flight-recorder snapshot), finish and salvage are this type's methods;
//! a strategy only says where its drain units run ([`Units`]) and hands
//! them over.
//!
//! ```text
//! begin ─ (Recording::start commits the place) ─ switch … switch ─ finish
//! ```

use std::path::{Path, PathBuf};

use super::dir_output::{Dir, DirEnd};
use super::error::RecordError;
use super::file_output::FileOutput;
use super::flight_window::FlightWindow;
use super::mailbox::Request;
use super::place::{create_in, Place};
use super::recording::{Recording, UnitWrites};
use super::summary::Summary;
use super::supervisor::Ended;
use super::thread_tally::tally;
use super::threads::job::{Pool, ThreadEnd};
use super::unit::Unit;
use crate::format::data_stream::DataStreamWriter;
use crate::notes::Notes;
use crate::push::drain::DrainReport;
use crate::push::{Output, Segments};
use crate::transform::scan::SampleTimes;

/// Where a recording goes.
pub struct Destination {
    kind: Kind,
    /// Where it is on disk (memory: only the path snapshots are named after).
    place: Place,
}

enum Kind {
    /// A perf.data file or a pipe, written by the unit on this thread.
    File(FileOutput),
    /// A `--threads` directory: `data` written here, a `data.N` per drain
    /// thread.
    Dir(Box<Dir>),
    /// `--flight-recorder`: the units keep the newest records in memory;
    /// each snapshot is written out as a file (or directory) of its own.
    Memory(FlightWindow),
}

/// The drain units as the destination reaches them.
pub enum Units<'a> {
    /// The one unit, on this thread.
    Here(&'a mut Unit),
    /// One unit per drain thread, asked through its mailbox.
    Threads(&'a Pool),
}

/// How the drain units ended.
pub enum UnitsEnd {
    /// The one unit on this thread, its loop ended.
    Here(Unit),
    /// Each drain thread's end, with its rings' group and file; `ring_cpus`
    /// gives each ring's CPU.
    Threads {
        ring_cpus: Vec<u32>,
        ends: Vec<ThreadEnd>,
    },
}

impl Destination {
    /// For one unit on this thread: the output (a file under a temporary
    /// name until the recording has started, a pipe, or memory) and the
    /// unit writing to it, its side band written.
    pub fn begin(rec: &Recording<'_>, notes: &mut Notes) -> Result<(Self, Unit), RecordError> {
        let o = rec.options();
        if let Some(cap) = o.flight_recorder {
            let writes = UnitWrites {
                rounds: true,
                hits: true,
            };
            let unit = rec.drain_unit(Segments::new(cap).into(), writes, notes)?;
            // The side band is the window's: each snapshot writes it first.
            let window = FlightWindow::new(&rec.side_band(notes));
            let place = Place::Memory {
                path: o.output.clone(),
            };
            return Ok((Destination::of(Kind::Memory(window), place), unit));
        }
        let (out, place, unit) = FileOutput::begin(rec, notes)?;
        Ok((Destination::of(Kind::File(out), place), unit))
    }

    /// For units on drain threads: the directory (under a temporary name
    /// until the recording has started, `data` with the side band whole
    /// from here), or the flight recorder's memory.
    pub fn begin_for_threads(rec: &Recording<'_>, notes: &mut Notes) -> Result<Self, RecordError> {
        let o = rec.options();
        if o.flight_recorder.is_some() {
            let window = FlightWindow::new(&rec.side_band(notes));
            let place = Place::Memory {
                path: o.output.clone(),
            };
            return Ok(Destination::of(Kind::Memory(window), place));
        }
        let (dir, place) = Dir::create(rec, notes)?;
        Ok(Destination::of(Kind::Dir(Box::new(dir)), place))
    }

    fn of(kind: Kind, place: Place) -> Self {
        Destination { kind, place }
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
        rec.options().build_ids.table || self.is_memory()
    }

    /// Whether the recording keeps memory (a switch is a snapshot; SIGUSR2
    /// asks for one).
    pub fn is_memory(&self) -> bool {
        matches!(self.kind, Kind::Memory(_))
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

    /// One switch: `--switch-output` goes on in a new file or directory
    /// (the one so far finished and named `OUTPUT.<timestamp>`); the flight
    /// recorder writes a snapshot. `times`: the current output's first and
    /// last sample times (one unit on this thread).
    pub fn switch(
        &mut self,
        rec: &Recording<'_>,
        units: Units<'_>,
        times: SampleTimes,
        notes: &mut Notes,
    ) -> Result<(), RecordError> {
        match (&mut self.kind, units) {
            (Kind::File(f), Units::Here(u)) => f.switch(rec, u, times, notes),
            (Kind::Memory(w), Units::Here(u)) => {
                (w.snapshot_unit(rec, u, notes).map(drop)).map_err(|err| w.failed(rec, err))
            }
            (Kind::Dir(d), Units::Threads(pool)) => {
                d.switch(rec, pool.threads(), |r| pool.ask(r), notes)
            }
            (Kind::Memory(w), Units::Threads(pool)) => {
                let requests = (0..pool.threads()).map(|_| Request::Snapshot).collect();
                w.snapshot_answers(rec, pool.ask(requests)?, notes)
                    .map(drop)
            }
            _ => unreachable!("a file is written on this thread, a directory by drain threads"),
        }
    }

    /// The end: the units' last records and LOST_SAMPLES in, the features
    /// and the header written (the flight recorder: its last snapshot), or
    /// after a failed write the output salvaged and the error said with what
    /// it kept; the last output named like the others; the summary.
    pub fn finish(
        self,
        rec: &Recording<'_>,
        end: UnitsEnd,
        ended: Ended,
        notes: Notes,
    ) -> Result<Summary, RecordError> {
        let Destination { kind, place } = self;
        match (kind, end) {
            (Kind::File(f), UnitsEnd::Here(u)) => f.finish(rec, &place, u, ended, notes),
            (Kind::Memory(w), UnitsEnd::Here(u)) => w.finish(rec, u, ended, notes),
            (kind, UnitsEnd::Threads { ring_cpus, ends }) => {
                finish_threads(rec, kind, &place, &ring_cpus, ends, ended, notes)
            }
            _ => unreachable!("a file or memory is written on this thread"),
        }
    }
}

/// After the drain threads: the last output finished (LOST_SAMPLES,
/// features and build ids into `data`; or the flight recorder's last
/// snapshot), and the summary with every thread's line.
fn finish_threads(
    rec: &Recording<'_>,
    kind: Kind,
    place: &Place,
    ring_cpus: &[u32],
    ends: Vec<ThreadEnd>,
    mut ended: Ended,
    mut notes: Notes,
) -> Result<Summary, RecordError> {
    let (lost_recs, lost_samples) = rec.lost_samples();
    let reports: Vec<DrainReport> = ends.iter().map(|e| e.end.report.clone()).collect();
    let mut t = tally(ring_cpus, &ends);
    let hits = ends.iter().filter_map(|e| e.end.hits.clone());
    let (output, outputs, side_band_bytes, bytes_written) = match kind {
        Kind::Memory(mut w) => {
            hits.for_each(|h| w.maps.seen(h));
            // The end writes what the threads hold, like a last snapshot.
            let parts: Vec<(usize, Vec<u8>)> = ends
                .iter()
                .enumerate()
                .map(|(i, e)| (i, e.end.retained.clone().unwrap_or_default()))
                .collect();
            let last = w.snapshot_units(rec, &parts, &reports, &mut notes)?;
            let written = std::mem::take(&mut w.written);
            let (sb, bytes) = (w.side_band_bytes, w.bytes);
            (last.display().to_string(), written, sb, bytes)
        }
        Kind::Dir(mut d) => {
            hits.for_each(|h| d.maps.seen(h));
            let failure = t.failure.take().map(|e| (e, t.kept_all));
            // The threads' sample times span every output of the
            // recording: they are this directory's only if it is the one.
            let times = (rec.options().switch_output.is_none()).then_some(t.all.counts.times);
            let end = DirEnd {
                reports: &reports,
                lost_recs: &lost_recs,
                times,
                failure,
            };
            let (output, outputs, sb) = d.finish(rec, place, end, &mut notes)?;
            (output, outputs, sb, sb + t.report.bytes_written)
        }
        Kind::File(_) => unreachable!("drain threads write a directory or memory"),
    };
    let sink = format!("{} ({} threads)", t.report.sink, ends.len());
    ended.drained = t.all;
    Ok(Summary {
        output,
        outputs,
        lost_samples,
        side_band_bytes,
        bytes_written,
        rings: ring_cpus.len(),
        sink,
        threads: t.threads,
        ..rec.summary(t.report, &mut ended, notes)
    })
}
