//! The codec of a recording whose HEADER_COMPRESSED is missing or names
//! none: the one that decodes its first COMPRESSED (or COMPRESSED2) record.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use perfz_codecs::{AnyDecoder, CodecId, Decoder};

use super::plausible;
use crate::format::{FormatError, RecordHeader, RecordType};

/// Finds the first COMPRESSED or COMPRESSED2 record's payload and tells
/// which codec decodes it.
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
        if t.is_compressed() {
            // COMPRESSED2: u64 data_size, then the codec's bytes.
            let body = if t == RecordType::COMPRESSED {
                &body[..]
            } else {
                let n = body
                    .get(..8)
                    .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap()));
                let Some(data) = body.get(8..).and_then(|d| d.get(..n as usize)) else {
                    return Ok(None);
                };
                data
            };
            for id in [
                CodecId::ZSTD,
                CodecId::LZ4,
                CodecId::LZ4_LINKED_CHUNKS,
                CodecId::LZ4_CHUNKS_V1,
                CodecId::SNAPPY,
            ] {
                if let Ok(mut d) = AnyDecoder::for_id(id) {
                    let mut out = Vec::new();
                    if matches!(d.decompress(body, &mut out, 64 << 20), Ok(n) if n >= 8) {
                        return Ok(Some(id));
                    }
                }
            }
            return Ok(None);
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use crate::format::CompressedFormat;

    /// A file whose first record is a COMPRESSED2 of zstd bytes (as
    /// `perfz record --compressed-format compressed2` writes) is known as
    /// zstd, as one of COMPRESSED records is.
    #[test]
    fn the_codec_of_compressed2_records_is_found() {
        let records = vec![0x5au8; 4096];
        let z = zstd_oracle::bulk::compress(&records, 1).unwrap();
        let dir = tempfile::tempdir().unwrap();
        for format in [CompressedFormat::Compressed, CompressedFormat::Compressed2] {
            let mut rec = vec![0u8; format.prefix() + z.len() + 8];
            rec[format.prefix()..][..z.len()].copy_from_slice(&z);
            let size = format.seal(&mut rec, z.len());
            let path = dir.path().join(format.name());
            std::fs::write(&path, &rec[..size]).unwrap();
            let id = super::codec(&path, 0).unwrap();
            assert_eq!(id, Some(perfz_codecs::CodecId::ZSTD), "{format}");
        }
    }
}
