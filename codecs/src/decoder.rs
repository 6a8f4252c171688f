//! Runtime choice of a decoder by the id found in a file.
//!
//! Readers learn the codec from the file, so this is an enum matched per
//! payload: the read path is not the push path, and an enum keeps it free of
//! trait objects all the same.

use crate::{CodecId, Decoder, Error, NoneDecoder};

/// A decoder for any codec id this build knows.
pub enum AnyDecoder {
    /// Id 0 (`PERF_COMP_NONE`): payloads are the records themselves.
    None(NoneDecoder),
    /// Id 1 (`PERF_COMP_ZSTD`): one zstd stream for the whole file.
    #[cfg(feature = "zstd")]
    Zstd(crate::ZstdDecoder),
    /// [`CodecId::LZ4`]: one lz4 frame stream cut into records by output.
    #[cfg(feature = "lz4")]
    Lz4(crate::Lz4Decoder),
    /// [`CodecId::LZ4_LINKED_CHUNKS`]: older files, linked 64 KiB blocks in chunks.
    #[cfg(feature = "lz4")]
    Lz4Linked(crate::Lz4LinkedUnitsDecoder),
    /// [`CodecId::LZ4_CHUNKS_V1`]: older files, independent block chunks.
    #[cfg(feature = "lz4")]
    Lz4Units(crate::Lz4UnitsDecoder),
    /// [`CodecId::SNAPPY`]: snappy raw chunks.
    #[cfg(feature = "snappy")]
    Snappy(crate::SnappyDecoder),
}

impl AnyDecoder {
    /// The decoder for `id`, or why there is none.
    pub fn for_id(id: CodecId) -> Result<Self, Error> {
        match id {
            CodecId::NONE => Ok(AnyDecoder::None(NoneDecoder)),
            #[cfg(feature = "zstd")]
            CodecId::ZSTD => Ok(AnyDecoder::Zstd(crate::ZstdDecoder::new()?)),
            #[cfg(feature = "lz4")]
            CodecId::LZ4 => Ok(AnyDecoder::Lz4(crate::Lz4Decoder::new())),
            #[cfg(feature = "lz4")]
            CodecId::LZ4_LINKED_CHUNKS => {
                Ok(AnyDecoder::Lz4Linked(crate::Lz4LinkedUnitsDecoder::new()))
            }
            #[cfg(feature = "lz4")]
            CodecId::LZ4_CHUNKS_V1 => Ok(AnyDecoder::Lz4Units(crate::Lz4UnitsDecoder::new())),
            #[cfg(feature = "snappy")]
            CodecId::SNAPPY => Ok(AnyDecoder::Snappy(crate::SnappyDecoder::new())),
            other => match other.name() {
                Some(name) => Err(Error::NotBuilt(name)),
                None => Err(Error::UnknownId(other)),
            },
        }
    }
}

impl Decoder for AnyDecoder {
    fn decompress(&mut self, src: &[u8], dst: &mut Vec<u8>, limit: usize) -> Result<usize, Error> {
        match self {
            AnyDecoder::None(d) => d.decompress(src, dst, limit),
            #[cfg(feature = "zstd")]
            AnyDecoder::Zstd(d) => d.decompress(src, dst, limit),
            #[cfg(feature = "lz4")]
            AnyDecoder::Lz4(d) => d.decompress(src, dst, limit),
            #[cfg(feature = "lz4")]
            AnyDecoder::Lz4Linked(d) => d.decompress(src, dst, limit),
            #[cfg(feature = "lz4")]
            AnyDecoder::Lz4Units(d) => d.decompress(src, dst, limit),
            #[cfg(feature = "snappy")]
            AnyDecoder::Snappy(d) => d.decompress(src, dst, limit),
        }
    }
}
