//! After the drain threads: LOST_SAMPLES and the features into `data`, and
//! the summary of every thread.

use std::io;
use std::path::PathBuf;

use serde::Serialize;

use super::job::ThreadEnd;
use crate::format::writer::{FileWriter, RecordSink};
use crate::format::{feat, CompressedInfo, FeatureSet, FormatError};
use crate::push::Copies;
use crate::session::drain::DrainReport;
use crate::session::error::Kept;
use crate::session::layout::Group;
use crate::session::output::{cut_back, Output};
use crate::session::recording::Recording;
use crate::session::run::{self, Drained};
use crate::session::{RecordError, Summary};

/// What one drain thread did, for the summary and `--stats-json`.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadSummary {
    /// Its data file, `data.N`.
    pub file: String,
    /// The CPUs whose rings it drained (empty for per-thread rings).
    pub cpus: Vec<u32>,
    pub rings: usize,
    /// The CPUs it was pinned to (empty: not pinned).
    pub affinity: Vec<u32>,
    pub wakeups: u64,
    pub samples: u64,
    pub records: u64,
    pub lost_events: u64,
    pub ring_bytes: u64,
    pub bytes_written: u64,
    pub compressed_bytes: u64,
    /// CPU time the thread used (user + system).
    pub cpu_seconds: f64,
    pub max_ring_fill: f64,
    pub near_full_pushes: u64,
    pub checkpoints: u64,
    /// Its write error, if it had one, and what it kept.
    pub error: Option<String>,
}

/// HEADER_COMPRESSED for `data`, from every thread's stream: the same codec
/// and level, the largest mmap_len, the ratio over all of them.
fn combined_compressed(reports: &[DrainReport]) -> Option<CompressedInfo> {
    let mut info = reports.iter().find_map(|r| r.compressed)?;
    let raw: u64 = reports.iter().map(|r| r.ring_bytes).sum();
    let comp: u64 = reports.iter().map(|r| r.compressed_bytes).sum();
    info.mmap_len = reports
        .iter()
        .filter_map(|r| r.compressed.map(|c| c.mmap_len))
        .max()
        .unwrap_or(info.mmap_len);
    info.ratio = if comp == 0 {
        0
    } else {
        (raw as f64 / comp as f64 + 0.5) as u32
    };
    Some(info)
}

pub fn dir_features(features: &FeatureSet, compressed: Option<CompressedInfo>) -> FeatureSet {
    let mut f = features.clone();
    f.set(feat::DIR_FORMAT, 1u64.to_le_bytes().to_vec());
    if let Some(c) = compressed {
        f.set_compressed(c);
    }
    f
}

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

/// After the threads: LOST_SAMPLES and the features into `data`, the summary.
#[allow(clippy::too_many_arguments)]
pub fn finish(
    rec: &Recording<'_>,
    out: &Output,
    mut main: FileWriter<std::fs::File>,
    ring_cpus: &[u32],
    ends: Vec<(Group, PathBuf, ThreadEnd)>,
    mut ended: run::Ended,
    mut notes: Vec<String>,
    (side_band_bytes, sb_hits): (u64, crate::push::scan::Hits),
) -> Result<Summary, RecordError> {
    let (lost_recs, lost_samples) = rec.lost_samples();
    let reports: Vec<DrainReport> = ends.iter().map(|(_, _, e)| e.report.clone()).collect();
    let mut dir_f = dir_features(&rec.features, combined_compressed(&reports));
    let mut hits = sb_hits;
    for (_, _, e) in &ends {
        if let Some(h) = &e.hits {
            hits.merge(h.clone());
        }
    }
    rec.add_build_ids(&mut dir_f, &hits, &mut notes);
    let main_kept = main.checkpoint_end();
    let main_done = main
        .write_records(&lost_recs)
        .map_err(FormatError::Io)
        .and_then(|()| main.finish(&dir_f))
        .and_then(|f| f.sync_all().map_err(FormatError::Io));
    // The first write error of a thread, and what the threads that failed
    // kept (None as soon as one kept nothing).
    let mut failure: Option<io::Error> = None;
    let mut kept_all = Some(Kept::Everything(0));
    let mut threads = Vec::new();
    let mut all = Drained::default();
    let mut report: Option<DrainReport> = None;
    for (g, path, e) in &ends {
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
    if let Err(e) = main_done {
        let err = match e {
            FormatError::Io(e) => e,
            other => io::Error::other(other),
        };
        // data keeps its checkpoint from the start: the directory opens.
        let data = out.current_path().map(|d| d.join("data"));
        return Err(RecordError::WriteFailed {
            path: out.display(),
            err,
            kept: data.and_then(|p| cut_back(&p, main_kept)),
        });
    }
    if let Some(err) = failure {
        let size = out.size();
        return Err(RecordError::WriteFailed {
            path: out.display(),
            err,
            kept: kept_all.map(|k| match k {
                Kept::Everything(_) => Kept::Everything(size),
                Kept::Checkpoint(_) => Kept::Checkpoint(size),
            }),
        });
    }
    let report = report.unwrap_or_default();
    let sink = format!("{} ({} threads)", report.sink, ends.len());
    ended.drained = all;
    Ok(Summary {
        output: out.display(),
        lost_samples,
        side_band_bytes,
        bytes_written: side_band_bytes + report.bytes_written,
        rings: ring_cpus.len(),
        sink,
        threads,
        ..rec.summary(report, &mut ended, notes)
    })
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
    }
}
