//! `perfz recover --after`: perf 6.1's `-z --switch-output` outputs after
//! the first go on with the zstd stream of the ones before; rewritten here
//! as standalone files.

use std::path::Path;

use perfz_codecs::CodecId;

use crate::format::{FormatError, PerfReader};

/// What a repair did.
#[derive(Debug, serde::Serialize)]
pub struct Repaired {
    /// COMPRESSED records of the earlier files run through the decoder.
    pub primed_records: u64,
    /// Records read from the broken file, those inside COMPRESSED records included.
    pub records: u64,
    /// The file rewritten (in place: the broken file's path).
    pub output: String,
}

/// Repairs an output of perf 6.1's `-z --switch-output` after the first,
/// whose zstd stream goes on from the previous outputs without a frame
/// header (perf cannot read it: "Unknown frame descriptor"). Given those
/// earlier outputs in order, the decoder is primed with their compressed
/// data, and `broken` is rewritten (in place, through a temporary file) as
/// a standalone file compressed with a new stream at its own level.
pub fn repair_continuation(
    broken: &Path,
    previous: &[std::path::PathBuf],
) -> Result<Repaired, crate::convert::ConvertError> {
    let mut r = PerfReader::open(broken)?;
    let info = r.compressed().ok_or_else(|| {
        FormatError::Unsupported(format!(
            "{} is not compressed: nothing to repair",
            broken.display()
        ))
    })?;
    let mut primed = 0;
    for p in previous {
        primed += r.prime_with(p)?;
    }
    let level = info.level as i32;
    let spec: perfz_codecs::CodecSpec = match info.codec_id() {
        CodecId::ZSTD => format!("zstd:{}", level.max(1)),
        id => id.name().unwrap_or("none").to_string(),
    }
    .parse()
    .map_err(|e: perfz_codecs::Error| FormatError::Unsupported(e.to_string()))?;
    let tmp = broken.with_extension("perfz-repair");
    let s = crate::convert::convert_reader(r, broken, &tmp, &spec, Default::default(), false)?;
    std::fs::rename(&tmp, broken).map_err(FormatError::Io)?;
    Ok(Repaired {
        primed_records: primed,
        records: s.records,
        output: broken.display().to_string(),
    })
}
