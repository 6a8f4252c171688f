//! The chunk framing of the block codecs (lz4, snappy).
//!
//! Block codecs have no stream state, so each non-empty slice of a push becomes one
//! chunk: `u32 raw_len (LE), u32 comp_len (LE), comp_len bytes`. The payload of one
//! COMPRESSED record is a sequence of chunks. Lengths come first so a decoder can
//! check them against its limit *before* it allocates (docs/FORMAT.md).

use crate::{Error, Input};

/// Bytes of the chunk header.
pub(crate) const CHUNK_HEADER: usize = 8;

/// Writes one chunk per non-empty slice of `input` into `dst`; `block` compresses
/// one slice into the given space and returns its length.
pub(crate) fn encode_chunks(
    input: Input<'_>,
    dst: &mut [u8],
    need: usize,
    mut block: impl FnMut(&[u8], &mut [u8]) -> Result<usize, Error>,
) -> Result<usize, Error> {
    if dst.len() < need {
        return Err(Error::DstTooSmall {
            need,
            have: dst.len(),
        });
    }
    let mut at = 0;
    for part in input.parts() {
        let body = &mut dst[at + CHUNK_HEADER..];
        let n = block(part, body)?;
        dst[at..at + 4].copy_from_slice(&(part.len() as u32).to_le_bytes());
        dst[at + 4..at + 8].copy_from_slice(&(n as u32).to_le_bytes());
        at += CHUNK_HEADER + n;
    }
    Ok(at)
}

/// Decodes a sequence of chunks, appending to `dst` at most `limit` bytes. `block`
/// decodes one chunk's bytes into an exactly `raw_len`-sized, zeroed slice and
/// returns how many bytes it produced. On error `dst` is left as it was.
pub(crate) fn decode_chunks(
    codec: &'static str,
    mut src: &[u8],
    dst: &mut Vec<u8>,
    limit: usize,
    mut block: impl FnMut(&[u8], &mut [u8]) -> Result<usize, String>,
) -> Result<usize, Error> {
    let start = dst.len();
    let res = (|| {
        while !src.is_empty() {
            if src.len() < CHUNK_HEADER {
                return Err(Error::Truncated {
                    codec,
                    what: format!(
                        "{} bytes left, a chunk header needs {CHUNK_HEADER}",
                        src.len()
                    ),
                });
            }
            let raw = u32::from_le_bytes(src[0..4].try_into().unwrap()) as usize;
            let comp = u32::from_le_bytes(src[4..8].try_into().unwrap()) as usize;
            src = &src[CHUNK_HEADER..];
            if comp > src.len() {
                return Err(Error::Truncated {
                    codec,
                    what: format!("chunk claims {comp} compressed bytes, {} remain", src.len()),
                });
            }
            let produced = dst.len() - start;
            if raw > limit - produced {
                return Err(Error::OutputLimit { limit });
            }
            let at = dst.len();
            dst.resize(at + raw, 0);
            let n = block(&src[..comp], &mut dst[at..])
                .map_err(|what| Error::Corrupt { codec, what })?;
            if n != raw {
                return Err(Error::Corrupt {
                    codec,
                    what: format!("chunk decoded to {n} bytes, its header says {raw}"),
                });
            }
            src = &src[comp..];
        }
        Ok(dst.len() - start)
    })();
    if res.is_err() {
        dst.truncate(start);
    }
    res
}
