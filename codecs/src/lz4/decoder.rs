use std::io::Read;

use lz4_flex::block::decompress_into;
use lz4_flex::frame::FrameDecoder;

use crate::framing::decode_units;
use crate::{Decoder, Error};

/// Decodes perfz's first lz4 format ([`CodecId::LZ4_UNITS_V1`](crate::CodecId::LZ4_UNITS_V1)):
/// independent block units. Stateless: every unit stands alone.
#[derive(Debug, Default)]
pub struct Lz4UnitsDecoder;

impl Lz4UnitsDecoder {
    pub fn new() -> Self {
        Lz4UnitsDecoder
    }
}

impl Decoder for Lz4UnitsDecoder {
    fn decompress(&mut self, src: &[u8], dst: &mut Vec<u8>, limit: usize) -> Result<usize, Error> {
        decode_units("lz4", src, dst, limit, |unit, out| {
            decompress_into(unit, out).map_err(|e| e.to_string())
        })
    }
}

/// The frame bytes given so far and not yet read by the frame decoder.
#[derive(Debug, Default)]
struct Feed {
    buf: Vec<u8>,
    pos: usize,
}

impl Read for Feed {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Decodes [`Lz4Codec`](crate::Lz4Codec)'s units: one lz4 frame stream,
/// linked blocks, cut into units at push boundaries. Keeps the frame
/// decoder (and its 64 KiB window) between calls: units decode in order.
pub struct Lz4Decoder {
    dec: FrameDecoder<Feed>,
}

impl Lz4Decoder {
    pub fn new() -> Self {
        Lz4Decoder {
            dec: FrameDecoder::new(Feed::default()),
        }
    }
}

impl Default for Lz4Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder for Lz4Decoder {
    fn decompress(&mut self, src: &[u8], dst: &mut Vec<u8>, limit: usize) -> Result<usize, Error> {
        let dec = &mut self.dec;
        decode_units("lz4", src, dst, limit, |unit, out| {
            let feed = dec.get_mut();
            feed.buf.drain(..feed.pos);
            feed.pos = 0;
            feed.buf.extend_from_slice(unit);
            let mut got = 0;
            // A frame's end mark reads as 0 bytes once; the next frame
            // follows it.
            let mut ends = 0;
            while got < out.len() {
                match dec.read(&mut out[got..]) {
                    Ok(0) => {
                        ends += 1;
                        let f = dec.get_ref();
                        if ends > 1 || f.pos == f.buf.len() {
                            return Err(format!(
                                "the unit ends after {got} of its {} bytes",
                                out.len()
                            ));
                        }
                    }
                    Ok(n) => {
                        got += n;
                        ends = 0;
                    }
                    Err(e) => return Err(e.to_string()),
                }
            }
            Ok(got)
        })
    }
}
