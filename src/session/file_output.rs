//! The output of one drain unit on this thread: a perf.data file or a
//! pipe, begun with the side band, switched to a new file on
//! `--switch-output` and finished at the end. (Units on threads of their
//! own write a directory: `dir_output.rs`.)
//!
//! `--switch-output[=signal|SIZE|TIME]`: the supervisor answers
//! `Next::Switch`, the loop pushes everything waiting into the current
//! output and returns, and [`FileOutput::switch`] opens the next output
//! under a hidden temporary name beside OUTPUT. The unit finishes the
//! current output in place, with its own build ids, and goes on in the new
//! one (`Unit::switch`; an async sink lands its writes and retargets its
//! backend); the finished output is synced on a thread of its own. Only
//! then is it renamed `OUTPUT.<timestamp>` (`rotation.rs`) and the new one
//! renamed OUTPUT — perf's order: no name ever shows an unfinished file. On a
//! full disk the finish keeps what reading that output needs (a
//! [`Salvage`]), or else cuts it back to its own last checkpoint, and ends
//! the recording saying so.
//!
//! The codec restarts (`Codec::restart`: a new frame), so each output
//! decodes alone; perf 6.1's own `-z --switch-output` outputs do not, and
//! `perfz recover --after` repairs them by priming the decoder with the
//! earlier outputs. The new output's side band is /proc now plus every map
//! and comm record seen so far (`map_history.rs`): a process that exited at
//! the switch has nothing left in /proc.

use super::error::format_io;
use super::error::{Kept, RecordError};
use super::map_history::MapHistory;
use super::place::{self, Place};
use super::recording::{io_err_context, Recording, UnitWrites};
use super::rotation::Rotation;
use super::summary::Summary;
use super::supervisor::Ended;
use super::unit::Unit;
use crate::format::writer::{FileWriter, PipeWriter, Salvage};
use crate::notes::Notes;
use crate::push::Output;
use crate::synth::features::set_sample_time;
use crate::transform::scan::SampleTimes;

/// A file or pipe output being written, across its switches.
pub struct FileOutput {
    /// Bytes of the side band written (`--max-size` counts them).
    pub side_band_bytes: u64,
    rotation: Option<Rotation>,
    maps: MapHistory,
}

impl FileOutput {
    /// Opens the output (under a temporary name until the recording has
    /// started) and the drain unit writing to it, its side band written.
    pub fn begin(
        rec: &Recording<'_>,
        notes: &mut Notes,
    ) -> Result<(FileOutput, Place, Unit), RecordError> {
        let o = rec.options();
        // From here the output exists, under a temporary name until the
        // recording has started.
        let (out, file) = Place::open(&o.output).map_err(RecordError::Output)?;
        let attrs = rec.attrs();
        let writer = if out.is_pipe() {
            let mut f = rec.features().with_compressed(rec.announced_codec());
            // Features go first in a pipe: perf says no sample times there.
            set_sample_time(&mut f, SampleTimes::default());
            Output::Pipe(PipeWriter::new(file, attrs, &f)?)
        } else {
            Output::File(FileWriter::new(file, attrs)?)
        };
        // Build ids need the maps; so do switched outputs (their side band).
        let hits = (o.build_ids.table || o.switch_output.is_some()) && !out.is_pipe();
        let mut drain = rec.drain_unit(writer, UnitWrites { rounds: true, hits }, notes)?;

        let side_band = rec.side_band(notes);
        drain
            .write_plain(&side_band)
            .map_err(|e| RecordError::Output(io_err_context(e, "writing the side band")))?;
        let side_band_bytes = drain.report().bytes_written;
        let output = FileOutput {
            side_band_bytes,
            rotation: o
                .switch_output
                .map(|_| Rotation::new(&o.output, o.switch_max_files)),
            maps: MapHistory::new(&side_band),
        };
        Ok((output, out, drain))
    }

    /// One `--switch-output`: the recording goes on in a new output (a hidden
    /// temporary file beside OUTPUT, with a fresh side band and a new codec
    /// stream); the current output is finished in place (with the build ids of
    /// what it holds), and only then renamed `OUTPUT.<timestamp>`, and the new
    /// one renamed OUTPUT — perf's order: no name ever shows an unfinished
    /// file. If the features do not fit, only what reading needs is
    /// written; if finishing fails, the current output is cut back to its
    /// own last checkpoint (never another output's). Either way the
    /// recording ends and the error says what is kept.
    pub fn switch(
        &mut self,
        rec: &Recording<'_>,
        drain: &mut Unit,
        times: SampleTimes,
        notes: &mut Notes,
    ) -> Result<(), RecordError> {
        let Some(rotation) = self.rotation.as_mut() else {
            // A `snapshot` command without --switch-output: nothing to do.
            return Ok(());
        };
        let maps = &mut self.maps;
        let o = rec.options();
        let kept = drain.checkpoint_end();
        let tmp = tempfile::Builder::new()
            .prefix(".perfz-next-")
            .tempfile_in(place::dir_of(&o.output))
            .map_err(RecordError::Output)?;
        let failed = |err: std::io::Error| RecordError::WriteFailed {
            path: o.output.display().to_string(),
            err,
            kept: place::cut_back(&o.output, kept),
        };
        let next = tmp.as_file().try_clone().map_err(RecordError::Output)?;
        let (sb, salvage) = switch_to(rec, drain, next, maps, times, notes).map_err(failed)?;
        if !salvage.whole() {
            // The disk is full: the output so far is finished with what
            // reading it needs, and the recording ends (the next output,
            // a temporary, goes).
            let size = crate::format::size_on_disk(&o.output);
            return Err(RecordError::WriteFailed {
                path: o.output.display().to_string(),
                err: salvage.error(),
                kept: Some(Kept::salvaged(size, salvage)),
            });
        }
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
        maps.next_output(&sb);
        tmp.persist(&o.output)
            .map_err(|e| RecordError::Output(e.error))?;
        Ok(())
    }
}

/// Finishes the current output and goes on in `next` (its header only);
/// returns the next output's side band, to write once the current one is
/// named, and what the finish left out.
fn switch_to(
    rec: &Recording<'_>,
    drain: &mut Unit,
    next: std::fs::File,
    maps: &mut MapHistory,
    times: SampleTimes,
    notes: &mut Notes,
) -> std::io::Result<(Vec<u8>, Salvage)> {
    let mut f = rec.features().clone();
    set_sample_time(&mut f, times);
    let mut lent = drain.lend()?;
    if let Some(hits) = lent.take_hits() {
        maps.seen(hits);
        rec.add_build_ids(&mut f, &maps.output, notes);
    }
    let sb = rec.later_side_band(maps.all_maps(), notes);
    let salvage = lent.switch(next, rec.attrs(), &f).map_err(format_io)?;
    Ok((sb, salvage))
}

impl FileOutput {
    /// After the loop: LOST_SAMPLES, the features and the header, or the
    /// failed write said with what was kept; the last output sealed.
    pub fn finish(
        self,
        rec: &Recording<'_>,
        out: &Place,
        drain: Unit,
        mut ended: Ended,
        mut notes: Notes,
    ) -> Result<Summary, RecordError> {
        let FileOutput {
            side_band_bytes,
            mut rotation,
            mut maps,
        } = self;
        let (lost_recs, lost_samples) = rec.lost_samples();
        let error = ended.drained.write_error.take();
        let times = ended.drained.counts.times;
        let end = drain.end(error, &lost_recs, out.current_path(), |hits| {
            let mut f = rec.features().clone();
            set_sample_time(&mut f, times);
            if let Some(h) = hits.take() {
                maps.seen(h);
                rec.add_build_ids(&mut f, &maps.output, &mut notes);
            }
            f
        });
        if let Some((err, kept)) = end.failed {
            let path = out.display();
            return Err(RecordError::WriteFailed { path, err, kept });
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
            ..rec.summary(end.report, &mut ended, notes)
        })
    }
}
