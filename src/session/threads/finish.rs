//! After the drain threads: LOST_SAMPLES and the features into `data`, and
//! the summary of every thread.

use std::io;
use std::path::PathBuf;

use super::job::ThreadEnd;
use super::outputs::{combined_compressed, dir_features, Dest, Dir};
use crate::format::writer::RecordSink;
use crate::format::FeatureSet;
use crate::format::FormatError;
use crate::push::drain::DrainReport;
use crate::push::scan::Hits;
use crate::push::Copies;
use crate::session::destination::cut_back;
use crate::session::error::RecordError;
use crate::session::error::{format_io, Kept};
use crate::session::flight_window::{FlightWindow, Retained};
use crate::session::layout::DrainGroup;
use crate::session::recording::Recording;
use crate::session::run::Drained;
use crate::session::summary::{Summary, ThreadSummary};

fn add_copies(a: Option<Copies>, b: Option<Copies>) -> Option<Copies> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Copies {
            ring_bytes: a.ring_bytes + b.ring_bytes,
            memcpy_bytes: a.memcpy_bytes + b.memcpy_bytes,
            codec_in_bytes: a.codec_in_bytes + b.codec_in_bytes,
            written_bytes: a.written_bytes + b.written_bytes,
        }),
        (a, b) => a.or(b),
    }
}

/// What the threads did, added up.
struct ThreadsTally {
    threads: Vec<ThreadSummary>,
    all: Drained,
    report: DrainReport,
    /// The first write error of a thread, and what the threads that failed
    /// kept (None as soon as one kept nothing).
    failure: Option<io::Error>,
    kept_all: Option<Kept>,
}

fn tally(ring_cpus: &[u32], ends: &[(DrainGroup, PathBuf, ThreadEnd)]) -> ThreadsTally {
    let mut failure: Option<io::Error> = None;
    let mut kept_all = Some(Kept::Everything(0));
    let mut threads = Vec::new();
    let mut all = Drained::default();
    let mut report: Option<DrainReport> = None;
    for (g, path, e) in ends {
        let d = &e.drained;
        let error = match (&d.write_error, &e.finish_error) {
            (Some(err), _) => {
                failure.get_or_insert(io::Error::new(
                    err.kind(),
                    format!("{}: {err}", path.display()),
                ));
                kept_all = match (kept_all, e.kept) {
                    (Some(Kept::Everything(_)), Some(k)) => Some(k),
                    (k, Some(_)) => k,
                    (_, None) => None,
                };
                Some(format!("{err}; kept: {:?}", e.kept))
            }
            (None, Some(err)) => {
                failure.get_or_insert(io::Error::new(
                    err.kind(),
                    format!("{}: {err}", path.display()),
                ));
                kept_all = None;
                Some(err.to_string())
            }
            (None, None) => None,
        };
        all.add(Drained {
            counts: d.counts,
            wakeups: d.wakeups,
            write_error: None,
            checkpoints: d.checkpoints.clone(),
            switch: false,
            cpu_wait: d.cpu_wait.clone(),
        });
        report = Some(match report {
            None => e.report.clone(),
            Some(r) => add_reports(r, &e.report),
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
            ring_bytes: e.report.ring_bytes,
            bytes_written: e.report.bytes_written,
            compressed_bytes: e.report.compressed_bytes,
            cpu_seconds: e.cpu_seconds,
            max_ring_fill: e.report.max_fill,
            near_full_pushes: e.report.near_full_pushes,
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
    let reports: Vec<DrainReport> = ends.iter().map(|(_, _, e)| e.report.clone()).collect();
    let mut t = tally(ring_cpus, &ends);
    let mut hits = match &dest {
        Dest::Dir(d) => d.file_hits.clone(),
        Dest::Memory(w) => w.hits.clone(),
    };
    for (_, _, e) in &ends {
        if let Some(h) = &e.hits {
            hits.merge(h.clone());
        }
    }
    let (output, outputs, side_band_bytes, bytes_written) = match dest {
        Dest::Memory(w) => {
            // The end writes what the threads hold, like a last snapshot.
            let parts: Vec<(usize, Vec<u8>)> = ends
                .iter()
                .enumerate()
                .map(|(i, (_, _, e))| (i, e.retained.clone().unwrap_or_default()))
                .collect();
            last_snapshot(rec, w, hits, &parts, &reports, &mut notes)?
        }
        Dest::Dir(d) => {
            let mut dir_f = dir_features(&rec.features, combined_compressed(&reports));
            rec.add_build_ids(&mut dir_f, &hits, &mut notes);
            let written = finish_dir(*d, &dir_f, &lost_recs, &mut t, &mut notes)?;
            let (output, outputs, side_band_bytes) = written;
            let bytes = side_band_bytes + t.report.bytes_written;
            (output, outputs, side_band_bytes, bytes)
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

/// What an end wrote: the output (the last one), every output, the side
/// band's bytes and all bytes.
type Written = (String, Vec<String>, u64, u64);

/// The flight recorder's end: what the threads hold written like a last
/// snapshot.
fn last_snapshot(
    rec: &Recording<'_>,
    mut w: FlightWindow,
    hits: Hits,
    parts: &[(usize, Vec<u8>)],
    reports: &[DrainReport],
    notes: &mut Vec<String>,
) -> Result<Written, RecordError> {
    w.hits = hits;
    let f = dir_features(&rec.features, combined_compressed(reports));
    let last = w
        .write(rec, Retained::PerThread(parts), f, notes)
        .map_err(|err| w.failed(rec, err))?;
    Ok((
        last.display().to_string(),
        std::mem::take(&mut w.written),
        w.side_band_bytes,
        w.bytes,
    ))
}

/// The directory's end: LOST_SAMPLES and the features `dir_f` into `data`,
/// synced; a thread's write error said with what was kept; the last output
/// sealed like the others. Returns the output, every output and the side
/// band's bytes.
fn finish_dir(
    mut d: Dir,
    dir_f: &FeatureSet,
    lost_recs: &[u8],
    t: &mut ThreadsTally,
    notes: &mut Vec<String>,
) -> Result<(String, Vec<String>, u64), RecordError> {
    let main_kept = d.main.checkpoint_end();
    let side_band_bytes = d.side_band_bytes;
    let out = &d.out;
    let main_done = d
        .main
        .write_records(lost_recs)
        .map_err(FormatError::Io)
        .and_then(|()| d.main.finish(dir_f))
        .and_then(|f| f.sync_all().map_err(FormatError::Io));
    // Sizes said are the directory's.
    let whole = |k: Kept| match k {
        Kept::Everything(_) => Kept::Everything(out.size()),
        Kept::Checkpoint(_) => Kept::Checkpoint(out.size()),
    };
    if let Err(e) = main_done {
        // data keeps its checkpoint from the start: the directory opens,
        // with every data.N.
        let data = out.current_path().map(|d| d.join("data"));
        return Err(RecordError::WriteFailed {
            path: out.display(),
            err: format_io(e),
            kept: data.and_then(|p| cut_back(&p, main_kept)).map(whole),
        });
    }
    if let Some(err) = t.failure.take() {
        return Err(RecordError::WriteFailed {
            path: out.display(),
            err,
            kept: t.kept_all.map(whole),
        });
    }
    let mut outputs = Vec::new();
    if let Some(r) = d.rotation.as_mut() {
        // The last output is sealed like the others.
        r.seal_last(notes);
        outputs = std::mem::take(&mut r.written);
    }
    let output = outputs.last().cloned().unwrap_or_else(|| d.out.display());
    Ok((output, outputs, side_band_bytes))
}

/// Two threads' reports as one: sums, the fullest ring, the first's sink.
fn add_reports(a: DrainReport, b: &DrainReport) -> DrainReport {
    DrainReport {
        ring_bytes: a.ring_bytes + b.ring_bytes,
        compressed_bytes: a.compressed_bytes + b.compressed_bytes,
        compressed: a.compressed.or(b.compressed),
        bytes_written: a.bytes_written + b.bytes_written,
        copies: add_copies(a.copies, b.copies),
        codec_copies_input: a.codec_copies_input,
        codec_state_bytes: a.codec_state_bytes + b.codec_state_bytes,
        sink: a.sink,
        stack_bytes_cleared: a.stack_bytes_cleared + b.stack_bytes_cleared,
        stack_samples_uncut: a.stack_samples_uncut + b.stack_samples_uncut,
        max_fill: a.max_fill.max(b.max_fill),
        near_full_pushes: a.near_full_pushes + b.near_full_pushes,
        stack_use: {
            let mut u = a.stack_use;
            u.merge(&b.stack_use);
            u
        },
    }
}
