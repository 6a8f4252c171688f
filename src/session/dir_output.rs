//! The directory output of drain units on threads of their own: a
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
//! every thread finishes its `data.N` and goes on in its new file (a new
//! codec stream); the ended `data` gets its features and build ids, and
//! only then does OUTPUT become `OUTPUT.<timestamp>` and the hidden
//! directory OUTPUT.

use std::fs::File;
use std::io;

use super::error::{format_io, Kept, RecordError};
use super::mailbox::{Reply, Request};
use super::map_history::MapHistory;
use super::place::{create_in, cut_back, dir_of, Place};
use super::recording::{io_err_context, Recording};
use super::rotation::Rotation;
use crate::format::writer::FileWriter;
use crate::format::FormatError;
use crate::notes::Notes;
use crate::push::drain::DrainReport;
use crate::synth::features::dir_features;
use crate::transform::scan::SampleTimes;

/// How the drain threads of a directory ended, for its finish.
pub struct DirEnd<'a> {
    /// Each thread's numbers.
    pub reports: &'a [DrainReport],
    /// LOST_SAMPLES records, for `data`.
    pub lost_recs: &'a [u8],
    /// The first and last sample times, where they are this directory's.
    pub times: Option<SampleTimes>,
    /// The first thread's write error, and what the failed threads kept.
    pub failure: Option<(io::Error, Option<Kept>)>,
}

/// A directory output being written.
pub struct Dir {
    /// The current directory's `data`.
    pub main: FileWriter<File>,
    /// Bytes of its side band.
    pub side_band_bytes: u64,
    /// `--switch-output`.
    pub rotation: Option<Rotation>,
    /// The current output's maps and pages, and every map seen.
    pub maps: MapHistory,
}

impl Dir {
    /// The directory (under a temporary name until the start), `data` with
    /// the side band, whole from here: a crash leaves a directory perf opens.
    pub fn create(rec: &Recording<'_>, notes: &mut Notes) -> Result<(Dir, Place), RecordError> {
        let o = rec.options();
        let out = Place::open_dir(&o.output).map_err(RecordError::Output)?;
        let dir = out.current_path().expect("a directory");
        let mut main = FileWriter::new(
            create_in(dir, "data").map_err(RecordError::Output)?,
            rec.attrs(),
        )?;
        let sb = rec.side_band(notes);
        begin(rec, &mut main, &sb).map_err(RecordError::Output)?;
        let dir = Dir {
            side_band_bytes: main.data_size(),
            main,
            rotation: o
                .switch_output
                .map(|_| Rotation::new(&o.output, o.switch_max_files)),
            maps: MapHistory::new(&sb),
        };
        Ok((dir, out))
    }

    /// One `--switch-output`, in the order that leaves every name whole:
    /// the next directory (hidden beside OUTPUT) gets `data` with the side
    /// band of the processes live now, made whole; only then does every
    /// thread finish its data.N and go on in the next directory's; the map
    /// records the threads saw in the ended output follow the side band
    /// (processes gone since, maps made while it was taken); the ended
    /// `data` gets its features and build ids; then OUTPUT becomes
    /// `OUTPUT.<timestamp>` and the next directory OUTPUT.
    /// `units` drain units are asked through `ask`.
    pub fn switch(
        &mut self,
        rec: &Recording<'_>,
        units: usize,
        ask: impl FnOnce(Vec<Request>) -> Result<Vec<Reply>, RecordError>,
        notes: &mut Notes,
    ) -> Result<(), RecordError> {
        let o = rec.options();
        let Some(rotation) = self.rotation.as_mut() else {
            // A `snapshot` command without --switch-output: nothing to do.
            return Ok(());
        };
        let failed = |what: &str, err| RecordError::Io {
            what: format!("--switch-output: {what}"),
            err,
        };
        let next = tempfile::Builder::new()
            .prefix(".perfz-next-")
            .tempdir_in(dir_of(&o.output))
            .map_err(RecordError::Output)?;
        let mut new_main = FileWriter::new(
            create_in(next.path(), "data").map_err(RecordError::Output)?,
            rec.attrs(),
        )?;
        let mut sb = rec.later_side_band(self.maps.all_maps(), notes);
        begin(rec, &mut new_main, &sb).map_err(|e| failed("starting the next output", e))?;
        let mut files = Vec::with_capacity(units);
        for i in 0..units {
            files.push(create_in(next.path(), &format!("data.{i}")).map_err(RecordError::Output)?);
        }
        let answers = ask(files.into_iter().map(Request::Switch).collect())?;
        if answers.is_empty() {
            // Every thread has ended (the recording is ending): the current
            // output is the last, finished by the end; nothing switched.
            return Ok(());
        }
        let (seen, reports) = gather(answers, &mut self.maps)?;
        if !seen.is_empty() {
            new_main
                .write_records(&seen)
                .and_then(|_| {
                    new_main.checkpoint(&dir_features(rec.features(), rec.announced_codec()))
                })
                .map_err(|e| failed("writing the next output's side band", e))?;
            sb.extend_from_slice(&seen);
        }
        // A thread that ended before the switch reported nothing here; its
        // data.N is compressed all the same.
        let compressed = DrainReport::combined_compressed(&reports).or(rec.announced_codec());
        let mut f = dir_features(rec.features(), compressed);
        rec.add_build_ids(&mut f, &self.maps.output, notes);
        let side_band_bytes = new_main.data_size();
        let done = std::mem::replace(&mut self.main, new_main)
            .finish(&f)
            .map_err(format_io)
            .and_then(|f| f.sync_all());
        done.map_err(|e| failed("finishing data", e))?;
        self.side_band_bytes = side_band_bytes;
        self.maps.next_output(&sb);
        let sealed = rotation
            .seal(notes)
            .map_err(|e| failed("naming the finished output", e))?;
        std::fs::rename(next.path(), &o.output).map_err(|e| {
            let what = match &sealed {
                Some(p) => format!("starting the next output ({} is finished)", p.display()),
                None => "starting the next output".to_string(),
            };
            failed(&what, e)
        })?;
        let _ = next.keep();
        Ok(())
    }

    /// The directory's end: LOST_SAMPLES and the features (with the build
    /// ids of what it holds, and its first and last sample times, where
    /// known) into `data`, synced; a unit's failure said as the
    /// directory's; the last output sealed like the others. Returns the
    /// output, every output and the side band's bytes.
    pub fn finish(
        mut self,
        rec: &Recording<'_>,
        out: &Place,
        end: DirEnd<'_>,
        notes: &mut Notes,
    ) -> Result<(String, Vec<String>, u64), RecordError> {
        let DirEnd {
            reports,
            lost_recs,
            times,
            failure,
        } = end;
        let mut dir_f = dir_features(rec.features(), DrainReport::combined_compressed(reports));
        if let Some(t) = times {
            crate::synth::features::set_sample_time(&mut dir_f, t);
        }
        rec.add_build_ids(&mut dir_f, &self.maps.output, notes);
        let main_kept = self.main.checkpoint_end();
        let side_band_bytes = self.side_band_bytes;
        let main_done = self
            .main
            .write_records(lost_recs)
            .map_err(FormatError::Io)
            .and_then(|()| self.main.finish(&dir_f))
            .and_then(|f| f.sync_all().map_err(FormatError::Io));
        // Sizes said are the directory's.
        let whole = |k: Kept| k.with_size(out.size());
        if let Err(e) = main_done {
            // data keeps its checkpoint from the start: the directory opens,
            // with every data.N.
            let data = out.current_path().map(|d| d.join("data"));
            return Err(RecordError::WriteFailed {
                path: out.display(),
                err: format_io(e),
                kept: data.and_then(|p| cut_back(&p, main_kept)).map(whole),
            });
        }
        if let Some((err, kept)) = failure {
            return Err(RecordError::WriteFailed {
                path: out.display(),
                err,
                kept: kept.map(whole),
            });
        }
        let mut outputs = Vec::new();
        if let Some(r) = self.rotation.as_mut() {
            // The last output is sealed like the others.
            r.seal_last(notes);
            outputs = std::mem::take(&mut r.written);
        }
        let output = outputs.last().cloned().unwrap_or_else(|| out.display());
        Ok((output, outputs, side_band_bytes))
    }
}

/// The units' answers to a switch: their hits added to `maps`, the map
/// records they saw in the ended output, and their reports; the first unit
/// that failed to finish its data.N fails the switch.
fn gather(
    answers: Vec<Reply>,
    maps: &mut MapHistory,
) -> Result<(Vec<u8>, Vec<DrainReport>), RecordError> {
    let mut seen = Vec::new();
    let mut reports = Vec::new();
    for r in answers {
        if let Some(e) = r.error {
            return Err(RecordError::Io {
                what: format!("--switch-output: finishing data.{} failed", r.index),
                err: e,
            });
        }
        if let Some(h) = r.hits {
            seen.extend_from_slice(&h.maps);
            maps.seen(h);
        }
        reports.push(r.report);
    }
    Ok((seen, reports))
}

/// Writes the side band `sb` into a directory's `data` and makes it whole.
fn begin(rec: &Recording<'_>, main: &mut FileWriter<File>, sb: &[u8]) -> io::Result<()> {
    main.write_records(sb)
        .map_err(|e| io_err_context(e, "writing the side band"))?;
    main.checkpoint(&dir_features(rec.features(), rec.announced_codec()))
        .map_err(|e| io_err_context(e, "writing data"))?;
    Ok(())
}
