use snap::raw::{decompress_len, Decoder as RawDecoder};

use crate::framing::decode_units;
use crate::{Decoder, Error};

/// Decodes snappy units. Stateless apart from snap's decoder object.
#[derive(Default)]
pub struct SnappyDecoder {
    dec: RawDecoder,
}

impl SnappyDecoder {
    /// A decoder; units need nothing from the ones before them.
    pub fn new() -> Self {
        SnappyDecoder {
            dec: RawDecoder::new(),
        }
    }
}

impl Decoder for SnappyDecoder {
    fn decompress(&mut self, src: &[u8], dst: &mut Vec<u8>, limit: usize) -> Result<usize, Error> {
        let dec = &mut self.dec;
        decode_units("snappy", src, dst, limit, |unit, out| {
            let n = decompress_len(unit).map_err(|e| e.to_string())?;
            if n != out.len() {
                return Err(format!(
                    "snappy block says {n} bytes, the unit header says {}",
                    out.len()
                ));
            }
            dec.decompress(unit, out).map_err(|e| e.to_string())
        })
    }
}
