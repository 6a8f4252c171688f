//! perf 6.16's COMPRESSED2 records in a recovered file: perf before 6.16
//! stops at them, so `perfz recover` rewrites such a file with COMPRESSED
//! (type 81) records, which every perf reads.

use std::path::Path;

use crate::format::{FormatError, PerfReader, RecordType};

/// COMPRESSED2 records (perf 6.16's) in the file at `path`.
pub(super) fn records(path: &Path) -> u64 {
    let Ok(mut r) = PerfReader::open(path) else {
        return 0;
    };
    let mut n = 0;
    while let Ok(Some((rec, _))) = r.next_record() {
        n += (!rec.nested && rec.header.type_ == RecordType::COMPRESSED2) as u64;
    }
    n
}

/// Rewrites the zstd file at `path` with COMPRESSED records (type 81) at its
/// level, through `perfz recompress`'s conversion.
pub(super) fn rewrite_as_compressed(path: &Path) -> Result<(), FormatError> {
    let level = PerfReader::open(path)?
        .compressed()
        .map_or(1, |c| (c.level as i32).max(1));
    let spec = perfz_codecs::CodecSpec::Zstd(perfz_codecs::ZstdParams::level(level));
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let out = tempfile::Builder::new()
        .prefix(".perfz-recover-")
        .tempfile_in(dir)?
        .into_temp_path();
    // COMPRESSED records, which every perf reads.
    let compressed = crate::format::CompressedFormat::Compressed;
    crate::convert::convert(path, &out, &spec, compressed, false).map_err(|e| match e {
        crate::convert::ConvertError::Format(f) => f,
        other => FormatError::Unsupported(format!(
            "rewriting its COMPRESSED2 records as COMPRESSED: {other}"
        )),
    })?;
    out.persist(path).map_err(|e| FormatError::Io(e.error))
}
