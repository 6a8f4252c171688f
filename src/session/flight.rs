//! `--flight-recorder SIZE`: the drain compresses into memory segments
//! (`push::MemorySink`) and keeps the newest SIZE bytes of compressed
//! trace; SIGUSR2, `--control` `snapshot`, or the end of the recording
//! write what it holds as `OUTPUT.<timestamp>`: header, attrs, a side band
//! for the window (processes as they are now, plus every mapping seen since
//! the start, so maps of processes created before the window or gone since
//! are there), the retained records, and the features.

use std::os::fd::{AsRawFd, RawFd};
use std::path::PathBuf;
use std::time::Instant;

use super::error::io_err;
use super::glue::{Glue, Writer};
use super::output::Output;
use super::run::{self, LoopOptions, SessionControl};
use super::setup::Prepared;
use super::{build_ids, RecordError, RecordOptions, Summary};
use crate::format::writer::{FileWriter, RecordSink};
use crate::format::FeatureSet;
use crate::push::scan::Hits;
use crate::synth;

/// What snapshots need across the recording.
struct Window {
    /// Every MMAP/MMAP2/FORK/COMM record seen, and the sample pages.
    hits: Hits,
    written: Vec<String>,
    bytes: u64,
}

/// Writes one snapshot; returns its path. It is written under a hidden
/// temporary name beside the output, finished and synced, and only then
/// named `OUTPUT.<timestamp>` (never over an existing file): a kill or a
/// full disk midway leaves no partial snapshot under a snapshot's name.
fn snapshot(
    o: &RecordOptions,
    prepared: &Prepared,
    drain: &mut (dyn super::drain::Drain + Send),
    features: &FeatureSet,
    w: &mut Window,
    notes: &mut Vec<String>,
) -> std::io::Result<PathBuf> {
    if let Some(h) = drain.take_hits() {
        w.hits.merge(h);
    }
    let dir = super::output::dir_of(&o.output);
    let tmp = tempfile::Builder::new()
        .prefix(".perfz-snapshot-")
        .tempfile_in(dir)?;
    let mut fw = FileWriter::new(tmp.as_file().try_clone()?, &prepared.set.attrs)
        .map_err(std::io::Error::other)?;
    fw.write_records(&super::later_side_band(o, prepared, &w.hits.maps, notes))?;
    fw.write_records(&drain.snapshot().unwrap_or_default())?;
    let mut f = features.clone();
    if let Some(c) = drain.report().compressed {
        f.set_compressed(c);
    }
    if o.build_ids.table {
        build_ids::add(&mut f, &w.hits, &o.build_ids, notes);
    }
    // The summary names the last snapshot: its own size, not all of them.
    w.bytes = fw.data_size();
    let file = fw.finish(&f).map_err(std::io::Error::other)?;
    file.sync_all()?;
    let path = super::rotation::stamped(&o.output);
    tmp.persist_noclobber(&path).map_err(|e| e.error)?;
    w.written.push(path.display().to_string());
    Ok(path)
}

pub fn record(
    o: &RecordOptions,
    cap: u64,
    mut prepared: Prepared,
    mut notes: Vec<String>,
    started: Instant,
    channel: Option<super::control::Channel>,
) -> Result<Summary, RecordError> {
    let ring_size = prepared.ring_size();
    let mut features = synth::features::session_features(&prepared.set.attrs, &o.argv);
    synth::features::event_features(&mut features, &o.events)
        .map_err(io_err("describing the events (tracefs)"))?;
    let (mut drain, glue_notes) = o.codec.visit(Glue {
        writer: Writer::Memory(cap),
        aio: o.aio,
        aio_backend: o.aio_backend,
        copy_meter: o.copy_meter,
        ring_size,
        stack_tail: prepared.stack_tail(o.keep_stack_padding, &mut notes),
        rounds: true,
        hits: true,
    })??;
    notes.extend(glue_notes);
    let side_band = super::side_band(o, &prepared, &mut notes);
    let mut w = Window {
        hits: super::side_band_hits(&side_band),
        written: Vec::new(),
        bytes: 0,
    };
    let mut out = Output::Memory {
        path: o.output.clone(),
    };
    let child = super::start(o, &mut prepared, &mut out)?;

    let event_fds: Vec<RawFd> = prepared.set.fds.iter().map(|f| f.fd.as_raw_fd()).collect();
    let mut rings = std::mem::take(&mut prepared.set.rings);
    let mut ctl = SessionControl::new(
        &prepared.set,
        child,
        o.status.then(super::status::StatusLine::new),
        super::switching(o, channel),
    );
    ctl.limits = super::limits(o);
    // SIGUSR2 asks for a snapshot, as perf's --switch-output does.
    ctl.limits.switch = Some(super::SwitchOutput::Signal);
    let opts = LoopOptions {
        min_bytes: o.mmap_flush.max(1) as u64,
        min_push: (ring_size / 16) as u64,
        checkpoint: None,
        features: &features,
    };
    let mut drained = run::Drained::default();
    loop {
        let d = run::drain_loop(drain.as_mut(), &mut rings, &event_fds, &mut ctl, &opts);
        drained.add(d);
        if drained.write_error.is_some() || !drained.switch {
            break;
        }
        drained.switch = false;
        if let Err(e) = snapshot(o, &prepared, drain.as_mut(), &features, &mut w, &mut notes) {
            drained.write_error = Some(e);
            break;
        }
    }
    let mut ended = ctl.end(drained);
    prepared.set.rings = rings;
    let failed = |err, w: &Window| RecordError::Io {
        what: format!(
            "writing a snapshot of {} failed (no partial snapshot is left){}",
            o.output.display(),
            if w.written.is_empty() {
                "; no snapshot was written before".to_string()
            } else {
                format!(
                    "; the snapshots written before are kept: {}",
                    w.written.join(", ")
                )
            }
        ),
        err,
    };
    if let Some(err) = ended.drained.write_error {
        return Err(failed(err, &w));
    }
    // The end writes what the recorder holds, like a last snapshot.
    let last = match snapshot(o, &prepared, drain.as_mut(), &features, &mut w, &mut notes) {
        Ok(p) => p,
        Err(err) => return Err(failed(err, &w)),
    };
    notes.extend(std::mem::take(&mut ended.notes));
    Ok(Summary {
        output: last.display().to_string(),
        side_band_bytes: side_band.len() as u64,
        bytes_written: w.bytes,
        outputs: w.written,
        ..super::drain_summary(o, drain.report(), &ended, &prepared, started, notes)
    })
}
