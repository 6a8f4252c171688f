//! The one finish of an output a unit handed back, at a switch or at the
//! end, for every destination: with the features (plus HEADER_COMPRESSED
//! as the codec left it) where every write landed; on a full disk what
//! reading needs (a [`Salvage`](crate::format::writer::Salvage)); after a
//! failed write salvaged with what landed whole; where even that fails,
//! cut back to the output's own last checkpoint, which its header already
//! describes. An output with no checkpoint yet (a disk full right after
//! the side band, with no room even for what reading needs) holds a header
//! that says no data: it is removed, so a failure leaves a file perf reads
//! or none. What it could not keep whole fails the recording, saying what
//! is kept ([`Kept`]).
//!
//! At a switch the output is finished without waiting for the disk and
//! synced on a thread of its own: an fsync under write-back load took long
//! enough for the rings to overflow (docs/BENCHMARKS.md, "`--switch-output`
//! under write-back load"). At the end it is synced before the summary.

use std::io;
use std::path::Path;

use super::error::{format_io, Kept, RecordError};
use super::map_history::MapHistory;
use super::place::cut_back;
use super::recording::Recording;
use crate::format::{size_on_disk, CompressedInfo, FeatureSet};
use crate::notes::Notes;
use crate::push::output::sync_in_background;
use crate::push::{HandedBack, Output};
use crate::synth::features::{dir_features, set_sample_time};
use crate::transform::scan::SampleTimes;

/// The features of one output, assembled once for every kind (a unit's
/// file or pipe, a `--threads` directory's `data`, a snapshot): the
/// recording's, with what it holds (`dir`: it is a `--threads`
/// directory's `data`, HEADER_DIR_FORMAT; `compressed`: HEADER_COMPRESSED
/// as its units left it, None where raw or said by the unit's own output
/// when it is handed back; `times`: its first and last sample times, where
/// known), and the build ids of what its map history says it holds
/// (`maps`; None: no build ids, as for a pipe, whose features go first).
pub fn features_of(
    rec: &Recording<'_>,
    maps: Option<&MapHistory>,
    dir: bool,
    compressed: Option<CompressedInfo>,
    times: Option<SampleTimes>,
    notes: &mut Notes,
) -> FeatureSet {
    let mut f = if dir {
        dir_features(rec.features(), compressed)
    } else {
        rec.features().with_compressed(compressed)
    };
    if let Some(t) = times {
        set_sample_time(&mut f, t);
    }
    if let Some(m) = maps {
        rec.add_build_ids(&mut f, &m.output, notes);
    }
    f
}

/// How an output closes: at a switch (the units go on in the next one)
/// or at the end.
#[derive(Clone, Copy)]
pub struct Closing<'a> {
    /// A switch (the units went on in the next output), or the end.
    pub switch: bool,
    /// Background at a switch, Now at the end.
    pub sync: Sync,
    /// Its first and last sample times, where they are its own.
    pub times: Option<SampleTimes>,
    /// LOST_SAMPLES, after its last records (the end: perf's last output
    /// carries them).
    pub lost: Option<&'a [u8]>,
}

impl Closing<'_> {
    /// At a switch, with the output's sample times where known.
    pub fn switch(times: Option<SampleTimes>) -> Closing<'static> {
        Closing {
            switch: true,
            sync: Sync::Background,
            times,
            lost: None,
        }
    }

    /// At the end: `lost` after the last records.
    pub fn end(times: Option<SampleTimes>, lost: &[u8]) -> Closing<'_> {
        Closing {
            switch: false,
            sync: Sync::Now,
            times,
            lost: Some(lost),
        }
    }
}

/// When the finished output reaches the disk.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Sync {
    /// Before the finish returns (the end).
    Now,
    /// On a thread of its own (a switch: the drain goes on meanwhile).
    Background,
}

/// An output the session wrote itself (a `--threads` directory's `data`,
/// a snapshot), handed to [`finish`] as a unit's is: a failure cuts it
/// back to its own last checkpoint.
pub fn own(output: Output) -> HandedBack {
    let mut h = HandedBack::default();
    h.report.checkpoint_end = output.checkpoint_end();
    h.output = Some(output);
    h
}

/// Finishes `handed` with `features`. `file`: where it is on disk (None:
/// a pipe or memory, nothing to cut back); `name`: the output as the error
/// names it.
pub fn finish(
    mut handed: HandedBack,
    features: &FeatureSet,
    file: Option<&Path>,
    name: String,
    sync: Sync,
) -> Result<(), RecordError> {
    let kept_at = handed.report.checkpoint_end;
    let failed = |err, kept| RecordError::WriteFailed {
        path: name.clone(),
        err,
        kept,
    };
    if let Some(mut err) = handed.error.take() {
        let kept = file.and_then(|p| match handed.salvage(features) {
            Ok(s) => Some(Kept::salvaged(size_on_disk(p), s)),
            Err(_) => fall_back(p, kept_at, &mut err),
        });
        return Err(failed(err, kept));
    }
    let done = match sync {
        Sync::Now => handed.finish(features),
        Sync::Background => {
            let f = handed.features(features);
            match handed.output {
                Some(out) => out.finish_unsynced(&f).map(|(written, salvage)| {
                    sync_in_background(written);
                    salvage
                }),
                None => Ok(Default::default()),
            }
        }
    };
    match done {
        Ok(s) if s.whole() => Ok(()),
        // The features may not fit after the last records (a full disk
        // that the records' writes just missed): said as a failure.
        Ok(s) => {
            let size = file.map_or(0, size_on_disk);
            Err(failed(s.error(), Some(Kept::salvaged(size, s))))
        }
        Err(e) => {
            let mut err = format_io(e);
            let kept = file.and_then(|p| fall_back(p, kept_at, &mut err));
            Err(failed(err, kept))
        }
    }
}

/// Where nothing fit after the records: the output at `p` cut back to its
/// last checkpoint (`kept_at`), or, with none, removed (its header still
/// says no data: perf would read nothing of it, or fail); where even the
/// removal fails, `err` says so.
fn fall_back(p: &Path, kept_at: Option<u64>, err: &mut io::Error) -> Option<Kept> {
    if kept_at.is_some() {
        return cut_back(p, kept_at);
    }
    match std::fs::remove_file(p) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => {
            *err = io::Error::new(
                err.kind(),
                format!(
                    "{err}; {} holds no recording and could not be removed: {e}",
                    p.display()
                ),
            )
        }
    }
    None
}
