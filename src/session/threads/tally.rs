//! The `--threads` summary's numbers: each drain thread's line, and what
//! the threads did added up (their loops and their reports).

use super::job::ThreadEnd;
use crate::push::drain::DrainReport;
use crate::session::run::Drained;
use crate::session::summary::ThreadSummary;

/// What the threads did, added up.
pub struct ThreadsTally {
    /// Each thread's line.
    pub threads: Vec<ThreadSummary>,
    /// Their loops, added up.
    pub all: Drained,
    /// Their reports, added up.
    pub report: DrainReport,
}

/// Every thread's line of the summary, and what they did added up.
pub fn tally(ring_cpus: &[u32], ends: &[ThreadEnd]) -> ThreadsTally {
    let mut threads = Vec::new();
    let mut all = Drained::default();
    let mut report: Option<DrainReport> = None;
    for e in ends {
        let (g, path) = (&e.group, &e.path);
        let d = &e.drained;
        let error = e.handed.error.as_ref().map(|err| err.to_string());
        all.add(Drained {
            counts: d.counts,
            wakeups: d.wakeups,
            write_error: None,
            checkpoints: d.checkpoints.clone(),
            switch: false,
            cpu_wait: d.cpu_wait.clone(),
        });
        let r = &e.handed.report;
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
    }
}
