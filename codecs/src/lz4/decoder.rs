use lz4_flex::block::decompress_into;

use crate::framing::decode_units;
use crate::{Decoder, Error};

/// Decodes lz4 units. Stateless: every unit stands alone.
#[derive(Debug, Default)]
pub struct Lz4Decoder;

impl Lz4Decoder {
    pub fn new() -> Self {
        Lz4Decoder
    }
}

impl Decoder for Lz4Decoder {
    fn decompress(&mut self, src: &[u8], dst: &mut Vec<u8>, limit: usize) -> Result<usize, Error> {
        decode_units("lz4", src, dst, limit, |unit, out| {
            decompress_into(unit, out).map_err(|e| e.to_string())
        })
    }
}
