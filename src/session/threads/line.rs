//! A drain thread's line of the `--threads` summary ([`ThreadSummary`]),
//! made by the thread itself from its loop, its output handed back and the
//! CPU it used.

use crate::push::HandedBack;
use crate::session::layout::DrainGroup;
use crate::session::run::Drained;
use crate::session::summary::ThreadSummary;

/// The line of the thread that drained `group` (the rings of `cpus`) into
/// `file`: its loop `d`, its output handed back `h`, `cpu_seconds` used.
pub fn line(
    file: String,
    cpus: Vec<u32>,
    group: DrainGroup,
    d: &Drained,
    h: &HandedBack,
    cpu_seconds: f64,
) -> ThreadSummary {
    let r = &h.report;
    ThreadSummary {
        file,
        cpus,
        rings: group.rings.len(),
        affinity: group.affinity,
        wakeups: d.wakeups,
        samples: d.counts.samples,
        records: d.counts.records,
        lost_events: d.counts.lost_events,
        ring_bytes: r.ring_bytes,
        bytes_written: r.bytes_written,
        compressed_bytes: r.compressed_bytes,
        cpu_seconds,
        max_ring_fill: r.max_fill,
        near_full_pushes: r.near_full_pushes,
        checkpoints: d.checkpoints,
        error: h.error.as_ref().map(|err| err.to_string()),
    }
}
