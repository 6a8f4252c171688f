//! `perfz recover`: makes a crashed recording readable again, in a copy beside it: every record
//! up to the first one cut off or not a record (COMPRESSED ones decoded to be sure; the codec
//! guessed, guess.rs, where the header lost it), then the features and the header rewritten after
//! them. The copy replaces the file only when it reads back whole with at least the samples the
//! file gave before. COMPRESSED2 records become COMPRESSED (compressed2.rs); a `--threads`
//! directory's `data` is recovered as a file and each `data.N` cut after its last whole record
//! (dir.rs).

use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use crate::format::header::{FileHeader, Section};
use crate::format::writer::feature_block;
use crate::format::{feat, FeatureSet, FormatError, Meta, PerfReader, RecordType};

mod compressed2;
mod continuation;
mod damaged;
mod dir;
mod guess;
mod live;
pub use continuation::repair_continuation;
pub use damaged::{open_damaged, Damaged};

/// What recovery found and kept.
#[derive(Debug, serde::Serialize)]
pub struct Recovered {
    /// Bytes of records kept (from `data.offset`).
    pub data_bytes: u64,
    /// Records kept, those inside COMPRESSED records included.
    pub records: u64,
    /// Samples the recovered file holds, read back whole.
    pub samples: u64,
    /// Samples perfz's reader read in the input before recovery.
    pub samples_before: u64,
    /// Features rebuilt because the input had lost them.
    pub rebuilt: Vec<String>,
    /// Bytes after the kept records that were dropped.
    pub dropped_bytes: u64,
    /// Why the scan stopped before the end of the file, if it did.
    pub stopped_because: Option<String>,
    /// The codec, when it had to be guessed from the data.
    pub guessed_codec: Option<String>,
    /// Decompressed bytes of the last record, cut off where the recorder
    /// stopped before flushing its codec: dropped, as perf drops them.
    pub cut_off: usize,
    /// perf 6.16's COMPRESSED2 records, rewritten as COMPRESSED (type 81)
    /// records, which perf before 6.16 reads too.
    pub rewritten_compressed2: u64,
}

/// Record types a sane recording contains (kernel 1..=21, perf's 64..=83).
fn plausible(t: RecordType) -> bool {
    (1..=21).contains(&t.0) || (64..=83).contains(&t.0)
}

/// How far a record stream is whole.
struct Scan {
    /// Where the kept records end.
    good_end: u64,
    records: u64,
    samples: u64,
    stopped: Option<String>,
}

/// Reads records from `start` until the stream ends or breaks (decoding
/// COMPRESSED records to be sure) and says where the whole part ends. An
/// outer record is kept when the stream broke after it (the error's offset
/// is at or past its end: the features, a zero tail, a cut-off header) and
/// dropped when it broke inside it (its payload does not decode, or a
/// record decoded from it is not one); samples count only in kept records.
fn scan(r: &mut PerfReader, start: u64) -> Scan {
    let mut good_end = start;
    let (mut records, mut samples) = (0u64, 0u64);
    // The outer record being read: (offset, end), and what it holds.
    let mut outer = (start, start);
    let (mut pending_records, mut pending_samples) = (0u64, 0u64);
    let mut stopped = None;
    let mut inside = false;
    loop {
        match r.next_record() {
            Ok(Some((rec, _))) => {
                if !plausible(rec.header.type_) {
                    stopped = Some(format!(
                        "a record of unknown type {} at {:#x}",
                        rec.header.type_.0, rec.offset
                    ));
                    inside = true;
                    if !rec.nested {
                        // Not a record: the stream ends before it.
                        records += pending_records;
                        samples += pending_samples;
                        good_end = outer.1;
                        inside = false;
                    }
                    break;
                }
                if !rec.nested {
                    // The previous outer record was read whole.
                    records += pending_records;
                    samples += pending_samples;
                    good_end = outer.1;
                    outer = (rec.offset, rec.offset + rec.bytes.len() as u64);
                    pending_records = 0;
                    pending_samples = 0;
                }
                pending_records += 1;
                pending_samples += (rec.header.type_ == RecordType::SAMPLE) as u64;
            }
            Ok(None) => break,
            Err(e) => {
                inside = error_offset(&e).is_some_and(|o| o < outer.1);
                stopped = Some(e.to_string());
                break;
            }
        }
    }
    if !inside {
        records += pending_records;
        samples += pending_samples;
        good_end = outer.1;
    }
    Scan {
        good_end,
        records,
        samples,
        stopped,
    }
}

/// The file offset a reader error names.
fn error_offset(e: &FormatError) -> Option<u64> {
    match e {
        FormatError::Truncated { offset, .. }
        | FormatError::Invalid { offset, .. }
        | FormatError::Codec { offset, .. } => Some(*offset),
        _ => None,
    }
}

/// Samples perfz's reader reads in `path`, and the error that stopped it
/// before the end, if one did.
fn count_samples(path: &Path) -> (u64, Option<FormatError>, usize) {
    let mut r = match PerfReader::open(path) {
        Ok(r) => r,
        Err(e) => return (0, Some(e), 0),
    };
    let mut n = 0;
    loop {
        match r.next_record() {
            Ok(Some((rec, _))) => n += (rec.header.type_ == RecordType::SAMPLE) as u64,
            Ok(None) => return (n, None, r.cut_off()),
            Err(e) => return (n, Some(e), r.cut_off()),
        }
    }
}

/// Recovers a crashed recording. A file is recovered in a copy beside it;
/// the copy replaces it only when it reads whole and holds at least the
/// samples the input gave before (`Recovered::samples` is that verified
/// count); otherwise the input is left untouched and the error says why.
pub fn recover(path: &Path) -> Result<Recovered, FormatError> {
    let meta = live::refuse_unsafe(path)?;
    if meta.is_dir() {
        return dir::recover_dir(path);
    }
    recover_file(path, true)
}

/// [`recover`] of a file: a recording of its own (`alone`), or the `data`
/// of a directory (whose samples are in the `data.N` beside it).
fn recover_file(path: &Path, alone: bool) -> Result<Recovered, FormatError> {
    let (before, ..) = count_samples(path);
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".perfz-recover-")
        .tempfile_in(dir)?;
    std::io::copy(&mut std::fs::File::open(path)?, tmp.as_file_mut())?;
    let mut got = recover_in_place(tmp.path())?;
    let (after, cut_off) = match count_samples(tmp.path()) {
        (n, None, cut) => (n, cut),
        (_, Some(e), _) => {
            return Err(FormatError::Unsupported(format!(
                "the recovered copy does not read whole ({e}); {} is left untouched",
                path.display()
            )))
        }
    };
    if alone && after == 0 && got.dropped_bytes > 0 {
        return Err(FormatError::Unsupported(format!(
            "recovery reads no sample in {}: it would keep {} bytes of data and drop {} ({}); \
             left untouched",
            path.display(),
            got.data_bytes,
            got.dropped_bytes,
            got.stopped_because.as_deref().unwrap_or("no reason given")
        )));
    }
    if after < before {
        return Err(FormatError::Unsupported(format!(
            "recovery would not improve {}: perfz reads {before} samples in it now and {after} \
             after recovery; left untouched",
            path.display()
        )));
    }
    // perf before 6.16 stops at a COMPRESSED2 record: a file of perf 6.16's
    // (its records' sizes repaired as they are read) is rewritten as
    // COMPRESSED records, which every perf reads.
    if alone {
        got.rewritten_compressed2 = compressed2::records(tmp.path());
        if got.rewritten_compressed2 > 0 {
            compressed2::rewrite_as_compressed(tmp.path())?;
        }
    }
    // Keep the input's permissions on the copy that replaces it.
    let perm = std::fs::metadata(path)?.permissions();
    std::fs::set_permissions(tmp.path(), perm)?;
    tmp.persist(path).map_err(|e| FormatError::Io(e.error))?;
    got.samples = after;
    got.samples_before = before;
    got.cut_off = cut_off;
    Ok(got)
}

/// [`recover`] on `path` itself, rewritten in place.
fn recover_in_place(path: &Path) -> Result<Recovered, FormatError> {
    let Damaged {
        mut reader,
        guessed,
        widened,
    } = open_damaged(path)?;
    let r = &mut reader;
    let header = r.header.clone().expect("file mode");
    let data_offset = header.data.offset;
    let scan = scan(r, data_offset);
    let Scan {
        good_end,
        records,
        samples,
        stopped,
    } = scan;
    let (features, rebuilt) = recovered_features(r, guessed.is_some() || widened);
    drop(reader);

    // A header that already describes records inside the file (a finished
    // or checkpointed recording): perf reads that section — past a damaged
    // record too — so keeping less than it would lose samples perf reads.
    let file_len = std::fs::metadata(path)?.len();
    let claimed = data_offset.saturating_add(header.data.size);
    if header.data.size > 0 && claimed <= file_len && good_end < claimed {
        return Err(FormatError::Unsupported(format!(
            "the records stop making sense at byte {good_end} ({}), but the header already \
             describes records up to byte {claimed}, which perf reads: recovering would keep \
             less; the file is left untouched",
            stopped.as_deref().unwrap_or("no reason given")
        )));
    }

    // The records end where the header says: what follows is the file's
    // own feature section (rewritten below), nothing dropped.
    let whole = header.data.size > 0 && good_end == claimed;

    // Rewrite: features right after the kept records, then the header.
    rewrite_tail(path, &features, &header, good_end)?;
    Ok(Recovered {
        data_bytes: good_end - data_offset,
        records,
        samples,
        dropped_bytes: if whole {
            0
        } else {
            file_len.saturating_sub(good_end)
        },
        stopped_because: if whole { None } else { stopped },
        guessed_codec: guessed,
        samples_before: 0,
        rebuilt,
        cut_off: 0,
        rewritten_compressed2: 0,
    })
}

/// The features of the recovered file: the input's, with its codec where it
/// was guessed or widened (`set_codec`), and those lost with the end of the
/// file rebuilt where they can be; with what was rebuilt.
fn recovered_features(r: &Meta, set_codec: bool) -> (FeatureSet, Vec<String>) {
    let mut features = r.features.clone();
    features.remove(0);
    if set_codec {
        if let Some(c) = r.compressed() {
            features.set_compressed(c);
        }
    }
    let mut rebuilt = Vec::new();
    if features.get(feat::EVENT_DESC).is_none() {
        // Lost with the features at the end: the names of built-in events
        // come back from their attrs (what perf would call them).
        let named: Vec<crate::format::AttrEntry> = r
            .attrs
            .iter()
            .map(|a| {
                let mut a = a.clone();
                a.name = a.name.or_else(|| {
                    crate::event::events::name_of(a.attr.type_(), a.attr.config()).map(String::from)
                });
                a
            })
            .collect();
        if named.iter().all(|a| a.name.is_some()) {
            features.set(feat::EVENT_DESC, crate::synth::features::event_desc(&named));
            rebuilt.push("HEADER_EVENT_DESC (event names from their attrs)".to_string());
        }
    }
    if features.get(feat::TRACING_DATA).is_none() {
        if let Some(t) = tracing_data_for(&r.attrs) {
            features.set(feat::TRACING_DATA, t);
            rebuilt.push("HEADER_TRACING_DATA (from this kernel's tracefs)".to_string());
        }
    }
    (features, rebuilt)
}

/// Writes `features` right after the records kept (up to `good_end`), cuts
/// the file there, then rewrites `header` to describe both, and syncs.
fn rewrite_tail(
    path: &Path,
    features: &FeatureSet,
    header: &FileHeader,
    good_end: u64,
) -> Result<(), FormatError> {
    let data_offset = header.data.offset;
    let mut f = OpenOptions::new().read(true).write(true).open(path)?;
    let (block, bitmap) = feature_block(features, good_end);
    f.seek(SeekFrom::Start(good_end))?;
    f.write_all(&block)?;
    f.set_len(good_end + block.len() as u64)?;
    let mut h = header.clone();
    h.data = Section {
        offset: data_offset,
        size: good_end - data_offset,
    };
    h.features = bitmap;
    f.seek(SeekFrom::Start(0))?;
    f.write_all(&h.to_le())?;
    f.sync_all()?;
    Ok(())
}

/// HEADER_TRACING_DATA for the tracepoint events among `attrs`, from this
/// machine's tracefs (perf needs it to read a tracepoint's samples), where
/// every one of them is found there by its id.
fn tracing_data_for(attrs: &[crate::format::AttrEntry]) -> Option<Vec<u8>> {
    use crate::format::attr::TYPE_TRACEPOINT;
    let ids: Vec<u64> = attrs
        .iter()
        .filter(|a| a.attr.type_() == TYPE_TRACEPOINT)
        .map(|a| a.attr.config())
        .collect();
    if ids.is_empty() {
        return None;
    }
    let root = crate::event::tracefs::root().ok()?;
    let all = crate::event::tracefs::resolve(&root, "*", "*");
    let tps: Vec<&crate::event::tracefs::Tracepoint> = ids
        .iter()
        .map(|id| all.iter().find(|t| t.id == *id))
        .collect::<Option<_>>()?;
    crate::synth::tracing::tracing_data(&root, &tps).ok()
}
