//! The codec of a recording whose HEADER_COMPRESSED is missing or names
//! none: the one that decodes its first COMPRESSED record.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use perfz_codecs::{AnyDecoder, CodecId, Decoder};

use super::plausible;
use crate::format::{FormatError, RecordHeader, RecordType};

/// Finds the first COMPRESSED record's payload and tells which codec decodes it.
pub(super) fn codec(path: &Path, data_offset: u64) -> Result<Option<CodecId>, FormatError> {
    let mut f = std::io::BufReader::new(std::fs::File::open(path)?);
    f.seek(SeekFrom::Start(data_offset))?;
    let mut h = [0u8; 8];
    for _ in 0..1_000_000 {
        if f.read_exact(&mut h).is_err() {
            return Ok(None);
        }
        let header = RecordHeader::from_le(h);
        let (t, size) = (header.type_, header.size as usize);
        if size < RecordHeader::SIZE || !plausible(t) {
            return Ok(None);
        }
        let mut body = vec![0u8; size - RecordHeader::SIZE];
        if f.read_exact(&mut body).is_err() {
            return Ok(None);
        }
        if t == RecordType::COMPRESSED {
            for id in [
                CodecId::ZSTD,
                CodecId::LZ4,
                CodecId::LZ4_LINKED_CHUNKS,
                CodecId::LZ4_CHUNKS_V1,
                CodecId::SNAPPY,
            ] {
                if let Ok(mut d) = AnyDecoder::for_id(id) {
                    let mut out = Vec::new();
                    if matches!(d.decompress(&body, &mut out, 64 << 20), Ok(n) if n >= 8) {
                        return Ok(Some(id));
                    }
                }
            }
            return Ok(None);
        }
    }
    Ok(None)
}
