//! `none`: the honest pass-through codec and the memcpy baseline.
//!
//! The recorder does not route `none` through COMPRESSED records at all (raw ring
//! bytes are written as they are); this codec exists so that the benches and
//! `perfz eval` have a baseline that runs the very same push path, and so that
//! generic code never needs an `Option<Codec>`.

use crate::{Codec, CodecId, Decoder, Error, Input};

/// Copies its input (the memcpy baseline).
#[derive(Debug, Default, Clone)]
pub struct NoneCodec;

impl NoneCodec {
    /// The pass-through codec; it holds no state.
    pub fn new() -> Self {
        NoneCodec
    }
}

impl Codec for NoneCodec {
    const ID: CodecId = CodecId::NONE;

    fn compress(&mut self, input: Input<'_>, dst: &mut [u8]) -> Result<usize, Error> {
        let n = input.len();
        if dst.len() < n {
            return Err(Error::DstTooSmall {
                need: n,
                have: dst.len(),
            });
        }
        dst[..input.first.len()].copy_from_slice(input.first);
        dst[input.first.len()..n].copy_from_slice(input.second);
        Ok(n)
    }

    fn bound(&self, len: usize) -> usize {
        len
    }

    fn state_size(&self) -> usize {
        0
    }
}

/// Appends its input.
#[derive(Debug, Default, Clone)]
pub struct NoneDecoder;

impl Decoder for NoneDecoder {
    fn decompress(&mut self, src: &[u8], dst: &mut Vec<u8>, limit: usize) -> Result<usize, Error> {
        if src.len() > limit {
            return Err(Error::OutputLimit { limit });
        }
        dst.extend_from_slice(src);
        Ok(src.len())
    }
}
