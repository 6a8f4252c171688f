//! A `--threads` directory recovered: its `data` as a file, each `data.N`
//! cut after the last record perf steps over.

use std::fs::OpenOptions;
use std::path::Path;

use super::{plausible, recover_file, scan, Recovered};
use crate::format::{FormatError, PerfReader, RecordHeader, RecordType};

/// A `--threads` directory: `data` is recovered as a file (its checkpoint
/// from the start of the recording holds the side band and the features),
/// then every `data.N` loses its crash tail: the bytes after the last record
/// perf can step over by its size (a cut-off record, zeros, garbage). A
/// damaged record that perf still steps over (a COMPRESSED payload that
/// decodes only in part: perf keeps the part) is kept as it is, and so is
/// everything before it: there is no header saying what perf reads.
pub(super) fn recover_dir(dir: &Path) -> Result<Recovered, FormatError> {
    let main = dir.join("data");
    let streams = PerfReader::data_streams(dir)?;
    let mut before = 0;
    for (n, p) in &streams {
        before += count_stream_samples(&main, p, *n);
    }
    let mut total = recover_file(&main, false)?;
    total.samples_before += before;
    for (n, p) in streams {
        let mut r = PerfReader::open_data_stream(&main, &p, n)?;
        let s = scan(&mut r, 0);
        drop(r);
        let f = OpenOptions::new().read(true).write(true).open(&p)?;
        let len = f.metadata()?.len();
        let end = record_chain_end(&f, s.good_end, len)?;
        if end < len {
            f.set_len(end)?;
            f.sync_all()?;
        }
        total.data_bytes += end;
        total.records += s.records;
        total.samples += s.samples;
        total.dropped_bytes += len - end;
        if let Some(why) = s.stopped {
            let kept = if end > s.good_end {
                format!(
                    " (the {} bytes from there are kept: perf steps over them by their sizes)",
                    end - s.good_end
                )
            } else {
                String::new()
            };
            total
                .stopped_because
                .get_or_insert(format!("data.{n}: {why}{kept}"));
        }
    }
    Ok(total)
}

/// Samples perfz's reader reads whole in one `data.N` of a directory.
fn count_stream_samples(main: &Path, stream: &Path, n: u32) -> u64 {
    let Ok(mut r) = PerfReader::open_data_stream(main, stream, n) else {
        return 0;
    };
    let mut samples = 0;
    while let Ok(Some((rec, _))) = r.next_record() {
        samples += (rec.header.type_ == RecordType::SAMPLE) as u64;
    }
    samples
}

/// Where the chain of record headers starting at `from` ends: each header
/// of a plausible type and a size that fits before `len` is stepped over,
/// as perf steps over records (without looking inside them).
fn record_chain_end(f: &std::fs::File, from: u64, len: u64) -> Result<u64, FormatError> {
    use std::os::unix::fs::FileExt;
    let mut at = from;
    let mut h = [0u8; RecordHeader::SIZE];
    while at + RecordHeader::SIZE as u64 <= len {
        f.read_exact_at(&mut h, at)?;
        let header = RecordHeader::from_le(h);
        let size = header.size as u64;
        if size < RecordHeader::SIZE as u64 || at + size > len || !plausible(header.type_) {
            break;
        }
        at += size;
    }
    Ok(at)
}
