//! The serial strategy: every ring drained by one unit on this thread into
//! one output (a file or a pipe), switched to a new file on
//! `--switch-output`.

use super::destination::{self, Destination};
use super::error::format_io;
use super::error::Kept;
use super::error::RecordError;
use super::glue::Writer;
use super::recording::{io_err_context, side_band_hits, Recording, Unit};
use super::rotation::Rotation;
use super::run;
use super::summary::Summary;
use super::supervisor::Ended;
use crate::format::writer::{FileWriter, PipeWriter};
use crate::push::drain::Drain;
use crate::push::scan::Hits;

/// Build ids and side bands across outputs: the maps of the output being
/// written (its side band and what its drain saw), and every map record
/// seen so far, for the side band of the next output.
#[derive(Default)]
struct Maps {
    file: Hits,
    history: Hits,
}

pub fn record(mut rec: Recording<'_>, mut notes: Vec<String>) -> Result<Summary, RecordError> {
    let o = rec.o;
    // From here the output exists, under a temporary name until the
    // recording has started.
    let (mut out, file) = Destination::open(&o.output).map_err(RecordError::Output)?;
    let attrs = &rec.prepared.set.attrs;
    let writer = if out.is_pipe() {
        let mut f = rec.features.clone();
        if let Some(c) = rec.announced_codec() {
            f.set_compressed(c);
        }
        Writer::Pipe(PipeWriter::new(file, attrs, &f)?)
    } else {
        Writer::File(FileWriter::new(file, attrs)?)
    };
    // Build ids need the maps; so do switched outputs (their side band).
    let hits = (o.build_ids.table || o.switch_output.is_some()) && !out.is_pipe();
    let (mut drain, glue_notes) = rec.drain_unit(writer, true, hits)?;
    notes.extend(glue_notes);

    let side_band = rec.side_band(&mut notes);
    drain
        .write_plain(&side_band)
        .map_err(|e| RecordError::Output(io_err_context(e, "writing the side band")))?;
    let side_band_bytes = drain.report().bytes_written;
    let child = rec.start(&mut out)?;

    let (mut rings, event_fds) = rec.take_rings();
    let mut rotation = o
        .switch_output
        .map(|_| Rotation::new(&o.output, o.switch_max_files));
    let file_hits = side_band_hits(&side_band);
    let mut maps = Maps {
        history: Hits {
            maps: file_hits.maps.clone(),
            ..Default::default()
        },
        file: file_hits,
    };
    let features = rec.features.clone();
    let loop_options = rec.loop_options(&features, o.checkpoint);
    let channel = rec.channel.take();
    let mut ctl = rec.control(channel, child, true);
    let mut switch_failed = None;
    let on_switch = |drain: &mut (dyn Drain + Send), _: &mut run::Drained| {
        let Some(r) = rotation.as_mut() else {
            return true;
        };
        let switched = switch_output(&rec, drain, r, &mut maps, &mut notes);
        switch_failed = switched.err();
        switch_failed.is_none()
    };
    let drained = run::drain_all(
        drain.as_mut(),
        &mut rings,
        &event_fds,
        &mut ctl,
        &loop_options,
        on_switch,
    );
    let ended = ctl.end(drained);
    if let Some(e) = switch_failed {
        return Err(e);
    }
    rec.prepared.set.rings = rings;
    finish(
        &rec,
        &out,
        drain,
        ended,
        notes,
        (side_band_bytes, maps.file),
        rotation,
    )
}

/// One `--switch-output`: the recording goes on in a new output (a hidden
/// temporary file beside OUTPUT, with a fresh side band and a new codec
/// stream); the current output is finished in place (with the build ids of
/// what it holds), and only then renamed `OUTPUT.<timestamp>`, and the new
/// one renamed OUTPUT — perf's order: no name ever shows an unfinished
/// file. If finishing fails, the current output is cut back to its own
/// last checkpoint (never another output's) and the error says what is kept.
fn switch_output(
    rec: &Recording<'_>,
    drain: &mut (dyn Drain + Send),
    rotation: &mut Rotation,
    maps: &mut Maps,
    notes: &mut Vec<String>,
) -> Result<(), RecordError> {
    let o = rec.o;
    let kept = drain.checkpoint_end();
    let tmp = tempfile::Builder::new()
        .prefix(".perfz-next-")
        .tempfile_in(destination::dir_of(&o.output))
        .map_err(RecordError::Output)?;
    let failed = |err: std::io::Error| RecordError::WriteFailed {
        path: o.output.display().to_string(),
        err,
        kept: destination::cut_back(&o.output, kept),
    };
    let next = tmp.as_file().try_clone().map_err(RecordError::Output)?;
    let sb = switch_to(rec, drain, next, maps, notes).map_err(failed)?;
    // The current output is finished: from here a failure concerns only
    // the next one, whose temporary is removed.
    let sealed = rotation.seal(notes).map_err(RecordError::Output)?;
    drain.write_plain(&sb).map_err(|err| RecordError::Io {
        what: match sealed {
            Some(p) => format!(
                "--switch-output: starting the next output failed ({} is finished and opens in perf)",
                p.display()
            ),
            None => "--switch-output: starting the next output failed".to_string(),
        },
        err,
    })?;
    maps.file = side_band_hits(&sb);
    tmp.persist(&o.output)
        .map_err(|e| RecordError::Output(e.error))?;
    Ok(())
}

/// Finishes the current output and goes on in `next` (its header only);
/// returns the next output's side band, to write once the current one is
/// named.
fn switch_to(
    rec: &Recording<'_>,
    drain: &mut (dyn Drain + Send),
    next: std::fs::File,
    maps: &mut Maps,
    notes: &mut Vec<String>,
) -> std::io::Result<Vec<u8>> {
    let mut f = rec.features.clone();
    if let Some(mut hits) = drain.take_hits() {
        // Bounded (Hits::merge trims the oldest).
        maps.history.merge(Hits {
            maps: hits.maps.clone(),
            ..Default::default()
        });
        hits.merge(std::mem::take(&mut maps.file));
        rec.add_build_ids(&mut f, &hits, notes);
    }
    let sb = rec.later_side_band(&maps.history.maps, notes);
    drain
        .switch_output(next, &rec.prepared.set.attrs, &f)
        .map_err(format_io)?;
    Ok(sb)
}

/// After the loop: salvage or roll back a failed write, or write
/// LOST_SAMPLES, the features and the header.
fn finish(
    rec: &Recording<'_>,
    out: &Destination,
    mut drain: Unit,
    mut ended: Ended,
    mut notes: Vec<String>,
    (side_band_bytes, sb_hits): (u64, Hits),
    mut rotation: Option<Rotation>,
) -> Result<Summary, RecordError> {
    let features = &rec.features;
    let failed = |err, kept| RecordError::WriteFailed {
        path: out.display(),
        err,
        kept,
    };
    if let Some(err) = ended.drained.write_error.take() {
        let kept = drain.checkpoint_end();
        if !out.is_pipe() && drain.salvage(features).is_ok() {
            return Err(failed(err, Some(Kept::Everything(out.size()))));
        }
        return Err(failed(err, out.roll_back(kept)));
    }
    let (lost_recs, lost_samples) = rec.lost_samples();
    if !lost_recs.is_empty() {
        if let Err(e) = drain.write_plain(&lost_recs) {
            let kept = drain.checkpoint_end();
            drop(drain);
            return Err(failed(e, out.roll_back(kept)));
        }
    }
    // Held bytes out first: the summary's sizes count the last record.
    if let Err(e) = drain.flush() {
        let kept = drain.checkpoint_end();
        drop(drain);
        return Err(failed(e, out.roll_back(kept)));
    }
    debug_assert!(!drain.holds(), "the summary's sizes miss held bytes");
    let report = drain.report();
    let mut features = features.clone();
    if let Some(mut hits) = drain.take_hits() {
        hits.merge(sb_hits);
        rec.add_build_ids(&mut features, &hits, &mut notes);
    }
    let kept = drain.checkpoint_end();
    if let Err(e) = drain.finish(&features) {
        return Err(failed(format_io(e), out.roll_back(kept)));
    }
    // The last output is sealed like the others (perf's "Dump" at the end).
    let mut outputs = Vec::new();
    if let Some(r) = rotation.as_mut() {
        r.seal_last(&mut notes);
        outputs = std::mem::take(&mut r.written);
    }
    Ok(Summary {
        // Switched: the last output has its timestamped name by now.
        output: outputs.last().cloned().unwrap_or_else(|| out.display()),
        lost_samples,
        side_band_bytes,
        outputs,
        ..rec.summary(report, &mut ended, notes)
    })
}
