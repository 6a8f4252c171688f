//! The destination of one drain unit on this thread: a perf.data file or
//! a pipe, begun with the side band, switched to a new file on
//! `--switch-output` and finished at the end. (Units on threads of their
//! own write a directory: `dir.rs`.)
//!
//! `--switch-output[=signal|SIZE|TIME]`: the supervisor answers
//! `Next::Switch`, the loop pushes everything waiting into the current
//! output and returns, and [`FileDestination::next`] opens the next output
//! under a hidden temporary name beside OUTPUT. The unit hands the current
//! output back and goes on in the new one (`Unit::hand_over`; an async sink
//! lands its writes and retargets its backend); the session closes the
//! handed-back output as it closes the last ([`FileDestination::close`]:
//! its own build ids, `finish.rs`; synced on a thread of its own). Only
//! then is it renamed `OUTPUT.<timestamp>` (`rotation.rs`, from
//! `close.rs`) and the new one, its side band written
//! ([`FileDestination::start`]), renamed OUTPUT — perf's order: no name
//! ever shows an unfinished file. On a full disk the finish keeps what
//! reading that output needs, or else cuts it back to its own last
//! checkpoint, and ends the recording saying so.
//!
//! The codec restarts (`Codec::restart`: a new frame), so each output
//! decodes alone; perf 6.1's own `-z --switch-output` outputs do not, and
//! `perfz recover --after` repairs them by priming the decoder with the
//! earlier outputs. The new output's side band is /proc now plus every map
//! and comm record seen so far (`map_history.rs`): a process that exited at
//! the switch has nothing left in /proc.

use std::io;
use std::path::Path;

use tempfile::NamedTempFile;

use crate::format::writer::{FileWriter, PipeWriter};
use crate::notes::Notes;
use crate::push::unit::Unit;
use crate::push::{HandedBack, Output};
use crate::session::error::io_err_context;
use crate::session::error::RecordError;
use crate::session::finish::{features_of, finish, Closing};
use crate::session::map_history::MapHistory;
use crate::session::place::{self, Place};
use crate::session::recording::Recording;
use crate::session::unit::Units;
use crate::transform::scan::SampleTimes;

/// A switch's next output and its side band, once the ended one is closed.
pub type Started = (NamedTempFile, Vec<u8>);

/// A file or pipe output being written, across its switches.
pub struct FileDestination {
    /// Bytes of the side band written (`--max-size` counts them).
    pub side_band_bytes: u64,
    maps: MapHistory,
    /// A switch's next output, until the ended one is sealed.
    next: Option<NamedTempFile>,
}

impl FileDestination {
    /// Opens the output (under a temporary name until the recording has
    /// started) and the drain unit writing to it, its side band written.
    pub fn begin(
        rec: &Recording<'_>,
        notes: &mut Notes,
    ) -> Result<(FileDestination, Place, Box<dyn Unit + Send>), RecordError> {
        let o = rec.options();
        // From here the output exists, under a temporary name until the
        // recording has started.
        let (out, file) = Place::open(&o.path).map_err(RecordError::Output)?;
        let attrs = rec.attrs();
        let writer = if out.is_pipe() {
            // Features go first in a pipe: perf says no sample times there.
            let (compressed, times) = (rec.announced_codec(), Some(SampleTimes::default()));
            let f = features_of(rec, None, false, compressed, times, notes);
            Output::Pipe(PipeWriter::new(file, attrs, &f)?)
        } else {
            Output::File(FileWriter::new(file, attrs)?)
        };
        // Build ids need the maps; so do switched outputs (their side band).
        let hits = (o.build_ids.table || o.switch_output.is_some()) && !out.is_pipe();
        let mut drain = rec.drain_unit(writer, true, hits, notes)?;

        let side_band = rec.side_band(notes);
        drain
            .write_plain(&side_band)
            .map_err(|e| RecordError::Output(io_err_context(e, "writing the side band")))?;
        let side_band_bytes = drain.report().bytes_written;
        let output = FileDestination {
            side_band_bytes,
            maps: MapHistory::new(&side_band),
            next: None,
        };
        Ok((output, out, drain))
    }

    /// A switch's next output: a hidden temporary file beside OUTPUT
    /// (kept here until the ended output is sealed) and the unit's output
    /// over it (a new codec stream).
    pub fn next(&mut self, rec: &Recording<'_>) -> Result<Vec<Output>, RecordError> {
        let tmp = tempfile::Builder::new()
            .prefix(".perfz-next-")
            .tempfile_in(place::dir_of(&rec.options().path))
            .map_err(RecordError::Output)?;
        let next = tmp.as_file().try_clone().map_err(RecordError::Output)?;
        let next = Output::File(FileWriter::new(next, rec.attrs())?);
        self.next = Some(tmp);
        Ok(vec![next])
    }

    /// After a switch's close: the next output and its side band (/proc
    /// now plus every map seen), for [`start`](Self::start).
    pub fn carry(&mut self, rec: &Recording<'_>, notes: &mut Notes) -> Option<Started> {
        let tmp = self.next.take()?;
        Some((tmp, rec.later_side_band(self.maps.all_maps(), notes)))
    }

    /// Once the ended output is sealed: the next one's side band written
    /// by its unit, and the next one named `output` — perf's order: no
    /// name ever shows an unfinished file.
    pub fn start(
        &mut self,
        (tmp, sb): Started,
        units: &mut dyn Units,
        output: &Path,
    ) -> io::Result<()> {
        units.write_side_band(&sb)?;
        self.maps.next_output(&sb);
        tmp.persist(output).map(drop).map_err(|e| e.error)
    }

    /// The output at `place` its unit `handed` back closed, at a switch or
    /// the end (`how`): LOST_SAMPLES at the end, the features (with the
    /// build ids of what it holds) and the header (`finish.rs`), or the
    /// failed write said with what was kept; the bytes written, where
    /// every write landed.
    pub fn close(
        &mut self,
        rec: &Recording<'_>,
        place: &Place,
        mut handed: HandedBack,
        how: Closing<'_>,
        notes: &mut Notes,
    ) -> Result<Option<u64>, RecordError> {
        let mut written = None;
        if let (Some(lost), None, Some(output)) = (how.lost, &handed.error, handed.output.as_mut())
        {
            // Every write landed: LOST_SAMPLES go last, and the numbers
            // count them.
            handed.error = output.write_records(lost).err();
            written = Some(output.data_size());
        }
        let maps = self.maps.seen_all(handed.hits.take());
        let f = features_of(rec, maps, false, None, how.times, notes);
        let (path, name) = (place.current_path(), place.display());
        finish(handed, &f, path, name, how.sync)?;
        Ok(written)
    }
}
