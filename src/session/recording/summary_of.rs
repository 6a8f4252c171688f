//! The summary of a recording: what one drain unit reported and how its
//! loop ended, with the recording's own numbers (rings, pages, time, the
//! workload's exit code) and the advice on losses.

use super::Recording;
use crate::notes::Notes;
use crate::push::unit::UnitReport;
use crate::session::summary::Summary;
use crate::session::supervisor::Ended;

impl Recording<'_> {
    /// A summary from one drain unit's report and how its loop ended; the
    /// strategy sets what differs.
    pub fn summary(&self, report: UnitReport, ended: &mut Ended, notes: Notes) -> Summary {
        let o = self.o;
        let mut notes = notes;
        if let Some(e) = &ended.wait_error {
            notes.push(format!(
                "waiting for the workload failed ({e}); the recording ended there"
            ));
        }
        notes.append(&mut ended.notes);
        let c = ended.drained.counts;
        Summary {
            path: o.path.display().to_string(),
            codec: o.codec.to_string(),
            wakeups: ended.drained.wakeups,
            samples: c.samples - report.samples_filtered.unwrap_or(0).min(c.samples),
            records: c.records,
            lost_events: c.lost_events,
            lost_samples: 0,
            ring_bytes: report.ring_bytes,
            side_band_bytes: 0,
            bytes_written: report.bytes_written,
            compressed_bytes: report.compressed_bytes,
            pages: self.prepared.set.pages,
            rings: self
                .prepared
                .set
                .fds
                .iter()
                .map(|f| f.ring)
                .max()
                .map_or(0, |r| r + 1),
            seconds: self.started.elapsed().as_secs_f64(),
            stop_signal: ended.stop_signal,
            workload_exit: exit_code(
                ended.exit_status,
                ended.stop_signal.is_none() && ended.ended_workload,
            ),
            writes: report.writes.to_string(),
            checkpoints: ended.drained.checkpoints,
            checkpoint_bytes: ended.drained.checkpoint_bytes,
            checkpoint_seconds: ended.drained.checkpoint_seconds,
            copies: report.copies,
            codec_copies_input: report.codec_copies_input,
            codec_state_bytes: report.codec_state_bytes,
            stack_bytes_cleared: report.stack_bytes_cleared,
            stack_samples_uncut: report.stack_samples_uncut,
            max_ring_fill: report.max_fill,
            near_full_pushes: report.near_full_pushes,
            stack_use: report.stack_use,
            largest_loss: c.max_lost,
            advice: self.advice(&report, ended),
            off_cpu: report.off_cpu,
            sample_filter: self.filter_summary(report.samples_filtered),
            threads: Vec::new(),
            outputs: Vec::new(),
            notes: notes.into_vec(),
        }
    }
    /// When samples were lost: what would have held the stream, from the
    /// rings' timing and the loop's CPU waits.
    fn advice(&self, report: &UnitReport, ended: &Ended) -> Option<crate::advice::Advice> {
        let c = ended.drained.counts;
        (c.lost_events > 0).then(|| {
            let ring = (self.prepared.set.pages * crate::event::ring::page_size()) as u64;
            let rings = self.prepared.set.rings.len().max(1) as f64;
            let secs = self.started.elapsed().as_secs_f64().max(1e-3);
            let waits_ms: Vec<f64> = ended
                .drained
                .cpu_waits
                .iter()
                .map(|&w| w as f64 / 1e6)
                .collect();
            let timing = crate::advice::RingTiming {
                ring_bytes: ring,
                rate: report.ring_bytes as f64 / secs / rings,
                max_fill: report.max_fill,
                cpu_waits_ms: &waits_ms,
                dwarf_size: match self.o.call_graph {
                    crate::event::events::CallGraph::Dwarf(n) => n as u64,
                    _ => 0,
                },
            };
            let mix = crate::advice::Mix::of(report.ring_bytes, c.records, c.samples);
            crate::advice::advise(&report.stack_use, Some(timing), c.max_lost, mix)
        })
    }
}

/// A workload's exit code; 128 + the signal that killed it, as a shell
/// says. Not where perfz ended it (`ended_by_perfz`: a limit, `--control
/// stop`); stopped by a signal, perfz ends it with SIGTERM and its status
/// says so (143), as perf's.
fn exit_code(status: Option<std::process::ExitStatus>, ended_by_perfz: bool) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    let s = status?;
    let own = s.signal().filter(|_| !ended_by_perfz);
    s.code().or(own.map(|sig| 128 + sig))
}
