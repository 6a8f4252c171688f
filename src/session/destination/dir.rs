//! The directory destination of drain units on threads of their own: a
//! directory perf reads (`data` with the header, side band and features,
//! `data.N` per unit), begun whole, switched to a new directory on
//! `--switch-output` and finished at the end; the new name appears only
//! once the directory under it is finished. (With `--flight-recorder` the
//! units keep memory instead, written out by the flight window.)
//!
//! `data` is made whole (checkpointed) once, right after its side band, so
//! a crash leaves a directory perf opens; each `data.N` checkpoints on its
//! own thread. A switch makes the next directory hidden beside OUTPUT,
//! with `data` (/proc now plus the map history) and a `data.N` per thread;
//! every thread hands its `data.N` back and goes on in its new file (a
//! new codec stream); the ended directory is closed as at the end (each
//! `data.N`, then `data` with its features and build ids), and only then
//! does OUTPUT become `OUTPUT.<timestamp>` and the hidden directory OUTPUT
//! (`close.rs`).

use std::fs::File;
use std::io;
use std::path::Path;

use crate::format::data_stream::DataStreamWriter;
use crate::format::writer::FileWriter;
use crate::format::FeatureSet;
use crate::notes::Notes;
use crate::push::unit::UnitReport;
use crate::push::{HandedBack, Output};
use crate::session::error::io_err_context;
use crate::session::error::{Kept, RecordError};
use crate::session::finish::{features_of, finish, own, Closing, Sync};
use crate::session::map_history::MapHistory;
use crate::session::place::{create_in, dir_of, Place};
use crate::session::recording::Recording;

/// A directory output being written.
pub struct DirDestination {
    /// The current directory's `data` (None: finished at the end).
    pub main: Option<FileWriter<File>>,
    /// A switch's next directory, until the ended one is sealed.
    next: Option<NextDir>,
    /// The map records the units saw in the directory closed at a switch,
    /// for the next one's side band.
    seen: Vec<u8>,
    /// Bytes of its side band.
    pub side_band_bytes: u64,
    /// The current output's maps and pages, and every map seen.
    pub maps: MapHistory,
}

/// A switch's next directory: hidden beside OUTPUT, with its `data` (taken
/// up when the ended one closes) and the side band in it.
struct NextDir {
    dir: tempfile::TempDir,
    main: Option<FileWriter<File>>,
    sb: Vec<u8>,
}

impl DirDestination {
    /// The directory (under a temporary name until the start), `data` with
    /// the side band, whole from here: a crash leaves a directory perf opens.
    pub fn create(
        rec: &Recording<'_>,
        notes: &mut Notes,
    ) -> Result<(DirDestination, Place), RecordError> {
        let o = rec.options();
        let out = Place::open_dir(&o.path).map_err(RecordError::Output)?;
        let dir = out.current_path().expect("a directory");
        let mut main = FileWriter::new(
            create_in(dir, "data").map_err(RecordError::Output)?,
            rec.attrs(),
        )?;
        let sb = rec.side_band(notes);
        begin(rec, &mut main, &sb, notes).map_err(RecordError::Output)?;
        let dir = DirDestination {
            side_band_bytes: main.data_size(),
            main: Some(main),
            maps: MapHistory::new(&sb),
            next: None,
            seen: Vec::new(),
        };
        Ok((dir, out))
    }

    /// A switch's next outputs, in the order that leaves every name
    /// whole: the next directory (hidden beside OUTPUT, kept here until
    /// the ended one is sealed) gets `data` with the side band of the
    /// processes live now, made whole; a data.N in it for each of the
    /// `units`.
    pub fn next(
        &mut self,
        rec: &Recording<'_>,
        units: usize,
        notes: &mut Notes,
    ) -> Result<Vec<Output>, RecordError> {
        let o = rec.options();
        let dir = tempfile::Builder::new()
            .prefix(".perfz-next-")
            .tempdir_in(dir_of(&o.path))
            .map_err(RecordError::Output)?;
        let mut main = FileWriter::new(
            create_in(dir.path(), "data").map_err(RecordError::Output)?,
            rec.attrs(),
        )?;
        let sb = rec.later_side_band(self.maps.all_maps(), notes);
        begin(rec, &mut main, &sb, notes).map_err(|e| failed("starting the next output", e))?;
        let mut streams = Vec::with_capacity(units);
        for i in 0..units {
            let file = create_in(dir.path(), &format!("data.{i}")).map_err(RecordError::Output)?;
            streams.push(Output::Stream(DataStreamWriter::new(file)));
        }
        self.next = Some(NextDir {
            dir,
            main: Some(main),
            sb,
        });
        Ok(streams)
    }

    /// After a switch's close: the map records the units saw in the ended
    /// directory follow the next one's side band (processes gone since,
    /// maps made while it was taken), and the map history goes on with it.
    /// Returns the next directory, to be named OUTPUT once the ended one
    /// is sealed.
    pub fn carry(
        &mut self,
        rec: &Recording<'_>,
        notes: &mut Notes,
    ) -> Result<Option<tempfile::TempDir>, RecordError> {
        let Some(NextDir { dir, mut sb, .. }) = self.next.take() else {
            return Ok(None);
        };
        let seen = std::mem::take(&mut self.seen);
        if let (false, Some(main)) = (seen.is_empty(), self.main.as_mut()) {
            let f = announced(rec, notes);
            main.write_records(&seen)
                .and_then(|_| main.checkpoint(&f))
                .map_err(|e| failed("writing the next output's side band", e))?;
            sb.extend_from_slice(&seen);
        }
        self.side_band_bytes = self.main.as_ref().map_or(0, FileWriter::data_size);
        self.maps.next_output(&sb);
        Ok(Some(dir))
    }

    /// The current directory at `place` closed, at a switch (the next
    /// one's `data` current from here) or the end (`how`): each data.N
    /// its unit `handed` back finished (none: the unit had ended), its
    /// hits into the map history (the map records for the next side band
    /// kept for [`carry`](Self::carry)); then its `data`, with
    /// LOST_SAMPLES at the end and the features of what the directory
    /// holds (`finish.rs`). A failure is the directory's, said with what
    /// every part kept (at a switch, as the switch's). Returns the bytes it
    /// holds.
    pub fn close(
        &mut self,
        rec: &Recording<'_>,
        place: &Place,
        handed: Vec<Option<HandedBack>>,
        how: Closing<'_>,
        notes: &mut Notes,
    ) -> Result<u64, RecordError> {
        // Where the current outputs are: the place, or, after a switch
        // whose close failed, the next directory the units went on in
        // (hidden, removed at the end: the place keeps what it had).
        let dir = match &self.next {
            Some(next) if next.main.is_none() => next.dir.path().to_path_buf(),
            _ => place
                .current_path()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
        };
        let ended = match (how.switch, self.next.as_mut()) {
            (true, Some(next)) => std::mem::replace(&mut self.main, next.main.take()),
            _ => self.main.take(),
        };
        let reports: Vec<UnitReport> = handed.iter().flatten().map(|h| h.report.clone()).collect();
        let written = self.side_band_bytes + reports.iter().map(|r| r.bytes_written).sum::<u64>();
        let (mut seen, mut failure) = (Vec::new(), None);
        for (i, h) in handed.into_iter().enumerate() {
            let Some(h) = h else { continue };
            match self.finish_stream(&dir.join(format!("data.{i}")), h, how.sync) {
                Ok(saw) => seen.extend_from_slice(&saw),
                Err(e) => failure = first_failure(failure, e),
            }
        }
        self.seen = seen;
        // At a switch a failure is the switch's.
        let said = |e| if how.switch { switch_failed(e) } else { e };
        if let Some(main) = ended {
            let data = (&*dir.join("data"), place.display());
            self.finish_data(rec, data, main, &reports, how, notes)
                .map_err(|e| said(sized(e, place)))?;
        }
        match failure {
            Some(RecordError::WriteFailed { err, kept, .. }) => {
                let path = place.display();
                Err(said(sized(
                    RecordError::WriteFailed { path, err, kept },
                    place,
                )))
            }
            Some(other) => Err(said(other)),
            None => Ok(written),
        }
    }
}

/// A failure, what it kept sized as the directory at `place`.
fn sized(e: RecordError, place: &Place) -> RecordError {
    match e {
        RecordError::WriteFailed { path, err, kept } => RecordError::WriteFailed {
            path,
            err,
            kept: kept.map(|k| k.with_size(place.size())),
        },
        other => other,
    }
}

/// A failure of `--switch-output` outside the units' outputs.
fn failed(what: &str, err: io::Error) -> RecordError {
    RecordError::Io {
        what: format!("--switch-output: {what}"),
        err,
    }
}

/// A close at a switch that failed: said as the switch's failure (the
/// recording goes on to its end in the current output).
fn switch_failed(e: RecordError) -> RecordError {
    match e {
        RecordError::WriteFailed { err, .. } => RecordError::Io {
            what: "--switch-output: finishing the output failed".into(),
            err,
        },
        other => other,
    }
}

impl DirDestination {
    /// The ended `data`: LOST_SAMPLES at the end (`how`), the features of
    /// the units' `reports` (with the build ids of what it holds and its
    /// sample times, where known); after a failure salvaged, or cut back
    /// to its checkpoint from the start (the directory opens, with every
    /// data.N).
    fn finish_data(
        &self,
        rec: &Recording<'_>,
        (data, name): (&Path, String),
        main: FileWriter<File>,
        reports: &[UnitReport],
        how: Closing<'_>,
        notes: &mut Notes,
    ) -> Result<(), RecordError> {
        // A unit that ended before a switch handed nothing back there; its
        // data.N is compressed all the same.
        let compressed = UnitReport::combined_compressed(reports).or(rec.announced_codec());
        // The units' sample times span every output of the recording:
        // they are this directory's only if it is the one.
        let times = how.times.filter(|_| rec.options().switch_output.is_none());
        let f = features_of(rec, Some(&self.maps), true, compressed, times, notes);
        let mut h = own(Output::File(main));
        if let (Some(lost), Some(o)) = (how.lost, h.output.as_mut()) {
            h.error = o.write_records(lost).err();
        }
        finish(h, &f, Some(data), name, how.sync)
    }

    /// Finishes one data.N a unit handed back, at `path` (data.N has no
    /// features of its own: they are in `data`); its hits go into the map
    /// history. Returns the map records it saw in the ended output.
    fn finish_stream(
        &mut self,
        path: &Path,
        mut h: HandedBack,
        sync: Sync,
    ) -> Result<Vec<u8>, RecordError> {
        let mut seen = Vec::new();
        if let Some(hits) = h.hits.take() {
            seen.extend_from_slice(&hits.maps);
            self.maps.seen(hits);
        }
        let name = path.display().to_string();
        finish(h, &FeatureSet::default(), Some(path), name, sync)?;
        Ok(seen)
    }
}

/// The first failure of the units' outputs at the end, named by its
/// data.N, with what every failed one kept (none as soon as one kept
/// nothing), after `e`.
fn first_failure(first: Option<RecordError>, e: RecordError) -> Option<RecordError> {
    let RecordError::WriteFailed { path, err, kept } = e else {
        return first.or(Some(e));
    };
    Some(match first {
        None => RecordError::WriteFailed {
            err: io::Error::new(err.kind(), format!("{path}: {err}")),
            path,
            kept,
        },
        Some(RecordError::WriteFailed {
            path,
            err,
            kept: before,
        }) => RecordError::WriteFailed {
            path,
            err,
            kept: match (before, kept) {
                (Some(Kept::Everything(_)), Some(k)) => Some(k),
                (k, Some(_)) => k,
                (_, None) => None,
            },
        },
        Some(other) => other,
    })
}

/// The features of a directory's `data` before its end: HEADER_COMPRESSED
/// as announced (the ratio is known at the end), no build ids.
fn announced(rec: &Recording<'_>, notes: &mut Notes) -> FeatureSet {
    features_of(rec, None, true, rec.announced_codec(), None, notes)
}

/// Writes the side band `sb` into a directory's `data` and makes it whole.
fn begin(
    rec: &Recording<'_>,
    main: &mut FileWriter<File>,
    sb: &[u8],
    notes: &mut Notes,
) -> io::Result<()> {
    main.write_records(sb)
        .map_err(|e| io_err_context(e, "writing the side band"))?;
    main.checkpoint(&announced(rec, notes))
        .map_err(|e| io_err_context(e, "writing data"))?;
    Ok(())
}
