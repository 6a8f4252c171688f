use snap::raw::{decompress_len, Decoder as RawDecoder};

use crate::framing::decode_chunks;
use crate::{Decoder, Error};

/// Decodes snappy chunks. Stateless apart from snap's decoder object.
#[derive(Default)]
pub struct SnappyDecoder {
    dec: RawDecoder,
}

impl SnappyDecoder {
    /// A decoder; chunks need nothing from the ones before them.
    pub fn new() -> Self {
        SnappyDecoder {
            dec: RawDecoder::new(),
        }
    }
}

impl Decoder for SnappyDecoder {
    fn decompress(&mut self, src: &[u8], dst: &mut Vec<u8>, limit: usize) -> Result<usize, Error> {
        let dec = &mut self.dec;
        decode_chunks("snappy", src, dst, limit, |chunk, out| {
            let n = decompress_len(chunk).map_err(|e| e.to_string())?;
            if n != out.len() {
                return Err(format!(
                    "snappy block says {n} bytes, the chunk header says {}",
                    out.len()
                ));
            }
            dec.decompress(chunk, out).map_err(|e| e.to_string())
        })
    }
}
