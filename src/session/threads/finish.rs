//! After the drain threads: LOST_SAMPLES and the features into `data`, and
//! the summary of every thread.

use std::io;
use std::path::PathBuf;

use super::job::ThreadEnd;
use crate::push::drain::DrainReport;
use crate::session::dir_output::Dest;
use crate::session::error::{Kept, RecordError};
use crate::session::layout::DrainGroup;
use crate::session::recording::Recording;
use crate::session::run::Drained;
use crate::session::summary::{Summary, ThreadSummary};

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

/// What the threads did, added up.
pub struct ThreadsTally {
    /// Each thread's line.
    pub threads: Vec<ThreadSummary>,
    /// Their loops, added up.
    pub all: Drained,
    /// Their reports, added up.
    pub report: DrainReport,
    /// The first write error of a thread, and what the threads that failed
    /// kept (None as soon as one kept nothing).
    pub failure: Option<io::Error>,
    /// What the failed threads kept.
    pub kept_all: Option<Kept>,
}

/// Every thread's line of the summary, and what they did added up.
pub fn tally(ring_cpus: &[u32], ends: &[(DrainGroup, PathBuf, ThreadEnd)]) -> ThreadsTally {
    let mut failure: Option<io::Error> = None;
    let mut kept_all = Some(Kept::Everything(0));
    let mut threads = Vec::new();
    let mut all = Drained::default();
    let mut report: Option<DrainReport> = None;
    for (g, path, e) in ends {
        let d = &e.drained;
        let error = e.end.failed.as_ref().map(|(err, kept)| {
            failure.get_or_insert(io::Error::new(
                err.kind(),
                format!("{}: {err}", path.display()),
            ));
            kept_all = match (kept_all, kept) {
                (Some(Kept::Everything(_)), Some(k)) => Some(*k),
                (k, Some(_)) => k,
                (_, None) => None,
            };
            format!("{err}; kept: {kept:?}")
        });
        all.add(Drained {
            counts: d.counts,
            wakeups: d.wakeups,
            write_error: None,
            checkpoints: d.checkpoints.clone(),
            switch: false,
            cpu_wait: d.cpu_wait.clone(),
        });
        let r = &e.end.report;
        report = Some(match report {
            None => r.clone(),
            Some(all) => all.combined(r),
        });
        threads.push(ThreadSummary {
            file: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            cpus: g
                .rings
                .iter()
                .map(|&r| ring_cpus[r])
                .filter(|&c| c != crate::event::open::ANY_CPU)
                .collect(),
            rings: g.rings.len(),
            affinity: g.affinity.clone(),
            wakeups: d.wakeups,
            samples: d.counts.samples,
            records: d.counts.records,
            lost_events: d.counts.lost_events,
            ring_bytes: r.ring_bytes,
            bytes_written: r.bytes_written,
            compressed_bytes: r.compressed_bytes,
            cpu_seconds: e.cpu_seconds,
            max_ring_fill: r.max_fill,
            near_full_pushes: r.near_full_pushes,
            checkpoints: d.checkpoints.count,
            error,
        });
    }
    ThreadsTally {
        threads,
        all,
        report: report.unwrap_or_default(),
        failure,
        kept_all,
    }
}
