//! The `--threads` summary's numbers: each drain thread's line, and what
//! the threads did added up (their loops, their reports, the first write
//! error and what the failed threads kept).

use std::io;

use super::error::Kept;
use super::run::Drained;
use super::summary::ThreadSummary;
use super::threads::job::ThreadEnd;
use crate::push::drain::DrainReport;

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
pub fn tally(ring_cpus: &[u32], ends: &[ThreadEnd]) -> ThreadsTally {
    let mut failure: Option<io::Error> = None;
    let mut kept_all = Some(Kept::Everything(0));
    let mut threads = Vec::new();
    let mut all = Drained::default();
    let mut report: Option<DrainReport> = None;
    for e in ends {
        let (g, path) = (&e.group, &e.path);
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
