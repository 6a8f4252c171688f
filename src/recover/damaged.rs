//! A recording opened as it may be after a crash or a cut: recover repairs
//! it, export reads it up to the damage.

use std::path::Path;

use perfz_codecs::AnyDecoder;

use super::guess;
use crate::format::{CompressedInfo, FormatError, PerfReader};
use crate::push::records::declared_mmap_len;

/// A file-mode recording opened as it may be after a crash or a cut: its
/// records read to the end of the file, whatever the header says.
pub struct Damaged {
    /// A reader that goes on to the end of the file, whatever the header says.
    pub reader: PerfReader,
    /// The codec found by decoding the data (HEADER_COMPRESSED missing or
    /// naming none).
    pub guessed: Option<String>,
    /// The decode bound was raised to the codec's (an older lz4 header).
    pub widened: bool,
}

/// Opens `path` for reading what it holds (recover, and export of a cut
/// file): to the end of the file, with the codec that decodes its data.
pub fn open_damaged(path: &Path) -> Result<Damaged, FormatError> {
    let mut r = PerfReader::open_for_recovery(path)?;
    let data_offset = r.header.as_ref().map_or(0, |h| h.data.offset);
    let mut guessed = None;
    // No HEADER_COMPRESSED (never checkpointed), or one naming a codec that
    // does not exist (perf ignores the type and decodes zstd): find the
    // codec that decodes the data.
    let known = r
        .compressed()
        .is_some_and(|c| AnyDecoder::for_id(c.codec_id()).is_ok());
    if !known {
        if let Some(id) = guess::codec(path, data_offset)? {
            r.assume_compressed(CompressedInfo {
                version: 0,
                codec: id.0,
                level: 0,
                ratio: 0,
                mmap_len: declared_mmap_len(id, 0),
            });
            guessed = Some(id.name().unwrap_or("?").to_string());
        }
    }
    // lz4 records end where full and may decode to many MiB: a header
    // written before this bound was declared (or none at all) may name less.
    // Read with the codec's bound, and declare it.
    let mut widened = false;
    if let Some(mut c) = r.compressed() {
        let least = c.codec_id().declared_decode_min();
        if c.mmap_len < least {
            c.mmap_len = least;
            r.assume_compressed(c);
            widened = true;
        }
    }
    Ok(Damaged {
        reader: r,
        guessed,
        widened,
    })
}
