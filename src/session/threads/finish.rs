//! After the drain threads: LOST_SAMPLES and the features into `data`, and
//! the summary of every thread.

use std::path::PathBuf;

use super::job::ThreadEnd;
use crate::push::drain::DrainReport;
use crate::session::dir_output::Dest;
use crate::session::error::RecordError;
use crate::session::layout::DrainGroup;
use crate::session::recording::Recording;
use crate::session::summary::Summary;
use crate::session::thread_tally::tally;

/// After the threads: the last output finished (LOST_SAMPLES, features and
/// build ids into `data`; or the flight recorder's last snapshot), and the
/// summary.
pub fn finish(
    rec: &Recording<'_>,
    dest: Dest,
    ring_cpus: &[u32],
    ends: Vec<(DrainGroup, PathBuf, ThreadEnd)>,
    mut ended: crate::session::supervisor::Ended,
    mut notes: Vec<String>,
) -> Result<Summary, RecordError> {
    let (lost_recs, lost_samples) = rec.lost_samples();
    let reports: Vec<DrainReport> = ends.iter().map(|(_, _, e)| e.end.report.clone()).collect();
    let mut t = tally(ring_cpus, &ends);
    let hits = ends.iter().filter_map(|(_, _, e)| e.end.hits.clone());
    let (output, outputs, side_band_bytes, bytes_written) = match dest {
        Dest::Memory(mut w) => {
            hits.for_each(|h| w.maps.seen(h));
            // The end writes what the threads hold, like a last snapshot.
            let parts: Vec<(usize, Vec<u8>)> = ends
                .iter()
                .enumerate()
                .map(|(i, (_, _, e))| (i, e.end.retained.clone().unwrap_or_default()))
                .collect();
            let last = w.snapshot_units(rec, &parts, &reports, &mut notes)?;
            let written = std::mem::take(&mut w.written);
            (
                last.display().to_string(),
                written,
                w.side_band_bytes,
                w.bytes,
            )
        }
        Dest::Dir(mut d) => {
            hits.for_each(|h| d.maps.seen(h));
            let failure = t.failure.take().map(|e| (e, t.kept_all));
            // The threads' sample times span every output of the
            // recording: they are this directory's only if it is the one.
            let times = rec
                .options()
                .switch_output
                .is_none()
                .then_some(t.all.counts.times);
            let (output, outputs, sb) =
                d.finish(rec, &reports, &lost_recs, times, failure, &mut notes)?;
            (output, outputs, sb, sb + t.report.bytes_written)
        }
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
