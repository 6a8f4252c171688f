//! Where the drain threads' bytes go: a directory perf reads (`data` with
//! the header, side band and features, `data.N` per thread), switched to a
//! new directory on `--switch-output`; or, with `--flight-recorder`, memory
//! per thread, written out as a snapshot directory on SIGUSR2, `snapshot`
//! and at the end. Either way the new name appears only once the directory
//! under it is finished.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use super::job::{Pool, Request};
use crate::format::writer::{FileWriter, RecordSink};
use crate::format::{feat, CompressedInfo, FeatureSet};
use crate::push::drain::DrainReport;
use crate::push::scan::Hits;
use crate::session::destination::{create_in, dir_of, Destination};
use crate::session::error::format_io;
use crate::session::error::RecordError;
use crate::session::flight_window::{FlightWindow, Retained};
use crate::session::recording::{io_err_context, side_band_hits, Recording};
use crate::session::rotation::Rotation;

/// Where the threads' compressed bytes go.
pub enum Dest {
    Dir(Box<Dir>),
    Memory(FlightWindow),
}

impl Dest {
    /// Bytes of the side band written (`--max-size` counts them).
    pub fn side_band_bytes(&self) -> u64 {
        match self {
            Dest::Dir(d) => d.side_band_bytes,
            Dest::Memory(w) => w.side_band_bytes,
        }
    }
}

/// HEADER_COMPRESSED for `data`, from every thread's stream: the same codec
/// and level, the largest mmap_len, the ratio over all of them.
pub fn combined_compressed(reports: &[DrainReport]) -> Option<CompressedInfo> {
    let mut info = reports.iter().find_map(|r| r.compressed)?;
    let raw: u64 = reports.iter().map(|r| r.ring_bytes).sum();
    let comp: u64 = reports.iter().map(|r| r.compressed_bytes).sum();
    info.mmap_len = reports
        .iter()
        .filter_map(|r| r.compressed.map(|c| c.mmap_len))
        .max()
        .unwrap_or(info.mmap_len);
    info.ratio = if comp == 0 {
        0
    } else {
        (raw as f64 / comp as f64 + 0.5) as u32
    };
    Some(info)
}

pub fn dir_features(features: &FeatureSet, compressed: Option<CompressedInfo>) -> FeatureSet {
    let mut f = features.clone();
    f.set(feat::DIR_FORMAT, 1u64.to_le_bytes().to_vec());
    if let Some(c) = compressed {
        f.set_compressed(c);
    }
    f
}

/// A directory output being written.
pub struct Dir {
    pub out: Destination,
    /// The current directory's `data`.
    pub main: FileWriter<File>,
    /// Bytes of its side band.
    pub side_band_bytes: u64,
    /// `--switch-output`.
    pub rotation: Option<Rotation>,
    /// The maps of the current output's side band.
    pub file_hits: Hits,
}

impl Dir {
    /// The directory (under a temporary name until the start), `data` with
    /// the side band, whole from here: a crash leaves a directory perf opens.
    pub fn create(rec: &Recording<'_>, notes: &mut Vec<String>) -> Result<Dir, RecordError> {
        let o = rec.o;
        let out = Destination::open_dir(&o.output).map_err(RecordError::Output)?;
        let dir = out.current_path().expect("a directory");
        let mut main = FileWriter::new(
            create_in(dir, "data").map_err(RecordError::Output)?,
            &rec.prepared.set.attrs,
        )?;
        let sb = rec.side_band(notes);
        begin(rec, &mut main, &sb).map_err(RecordError::Output)?;
        Ok(Dir {
            out,
            side_band_bytes: main.data_size(),
            main,
            rotation: o
                .switch_output
                .map(|_| Rotation::new(&o.output, o.switch_max_files)),
            file_hits: side_band_hits(&sb),
        })
    }

    /// The current directory (its final name once the recording started).
    pub fn path(&self) -> &Path {
        self.out.current_path().expect("a directory")
    }

    /// One `--switch-output`, in the order that leaves every name whole:
    /// the next directory (hidden beside OUTPUT) gets `data` with the side
    /// band of the processes live now, made whole; only then does every
    /// thread finish its data.N and go on in the next directory's; the map
    /// records the threads saw in the ended output follow the side band
    /// (processes gone since, maps made while it was taken); the ended
    /// `data` gets its features and build ids; then OUTPUT becomes
    /// `OUTPUT.<timestamp>` and the next directory OUTPUT.
    pub fn switch(
        &mut self,
        rec: &Recording<'_>,
        pool: &Pool,
        notes: &mut Vec<String>,
    ) -> Result<(), RecordError> {
        let o = rec.o;
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
            &rec.prepared.set.attrs,
        )?;
        let mut sb = rec.later_side_band(&[], notes);
        begin(rec, &mut new_main, &sb).map_err(|e| failed("starting the next output", e))?;
        let mut files = Vec::with_capacity(pool.threads());
        for i in 0..pool.threads() {
            files.push(create_in(next.path(), &format!("data.{i}")).map_err(RecordError::Output)?);
        }
        let requests = files.into_iter().map(Request::Switch).collect();
        let answers = pool.ask(requests)?;
        if answers.is_empty() {
            // Every thread has ended (the recording is ending): the current
            // output is the last, finished by the end; nothing switched.
            return Ok(());
        }
        let mut hits = std::mem::take(&mut self.file_hits);
        let (seen, reports) = gather(answers, &mut hits)?;
        if !seen.maps.is_empty() {
            new_main
                .write_records(&seen.maps)
                .and_then(|_| {
                    new_main.checkpoint(&dir_features(&rec.features, rec.announced_codec()))
                })
                .map_err(|e| failed("writing the next output's side band", e))?;
            sb.extend_from_slice(&seen.maps);
        }
        // A thread that ended before the switch reported nothing here; its
        // data.N is compressed all the same.
        let compressed = combined_compressed(&reports).or(rec.announced_codec());
        let mut f = dir_features(&rec.features, compressed);
        rec.add_build_ids(&mut f, &hits, notes);
        let side_band_bytes = new_main.data_size();
        let done = std::mem::replace(&mut self.main, new_main)
            .finish(&f)
            .map_err(format_io)
            .and_then(|f| f.sync_all());
        done.map_err(|e| failed("finishing data", e))?;
        self.side_band_bytes = side_band_bytes;
        self.file_hits = side_band_hits(&sb);
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
}

/// The threads' answers to a switch: their hits merged into `hits`, the
/// map records they saw in the ended output, and their reports; the first
/// thread that failed to finish its data.N fails the switch.
fn gather(
    answers: Vec<super::job::Reply>,
    hits: &mut Hits,
) -> Result<(Hits, Vec<DrainReport>), RecordError> {
    let mut seen = Hits::default();
    let mut reports = Vec::new();
    for r in answers {
        if let Some(e) = r.error {
            return Err(RecordError::Io {
                what: format!("--switch-output: finishing data.{} failed", r.index),
                err: e,
            });
        }
        if let Some(h) = r.hits {
            seen.merge(Hits {
                maps: h.maps.clone(),
                ..Default::default()
            });
            hits.merge(h);
        }
        reports.push(r.report);
    }
    Ok((seen, reports))
}

/// Writes the side band `sb` into a directory's `data` and makes it whole.
fn begin(rec: &Recording<'_>, main: &mut FileWriter<File>, sb: &[u8]) -> io::Result<()> {
    main.write_records(sb)
        .map_err(|e| io_err_context(e, "writing the side band"))?;
    main.checkpoint(&dir_features(&rec.features, rec.announced_codec()))
        .map_err(|e| io_err_context(e, "writing data"))?;
    Ok(())
}

/// What the flight recorder does with a `--threads` recording's memory.
impl FlightWindow {
    /// SIGUSR2 or `snapshot`: every thread hands over what it retains.
    pub fn snapshot(
        &mut self,
        rec: &Recording<'_>,
        pool: &Pool,
        notes: &mut Vec<String>,
    ) -> Result<PathBuf, RecordError> {
        let requests = (0..pool.threads()).map(|_| Request::Snapshot).collect();
        let mut parts = Vec::new();
        let mut reports = Vec::new();
        for r in pool.ask(requests)? {
            if let Some(h) = r.hits {
                self.hits.merge(h);
            }
            parts.push((r.index, r.records));
            reports.push(r.report);
        }
        let f = dir_features(&rec.features, combined_compressed(&reports));
        self.write(rec, Retained::PerThread(&parts), f, notes)
            .map_err(|err| self.failed(rec, err))
    }
}
