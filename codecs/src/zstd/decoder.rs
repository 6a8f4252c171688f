use zstd_safe::{DCtx, DParameter, InBuffer, OutBuffer};

use super::{zstd_err, MAX_WINDOW_LOG};
use crate::{Decoder, Error};

/// Output is produced in steps of at most this many bytes, so a lying payload
/// never makes us reserve more than the caller's limit plus one step.
const STEP: usize = 128 * 1024;

/// zstd streaming decompression through one `ZSTD_DCtx` for the whole stream
/// (never reset between records, like perf's reader): records may end in the
/// middle of a block and decoded perf records may straddle payloads.
///
/// Memory: the window is capped at 2^27 bytes (the limit perf's reader uses), so a
/// decoder holds at most 128 MiB of window plus its fixed tables, whatever a frame
/// header claims.
pub struct ZstdDecoder {
    dctx: DCtx<'static>,
}

impl ZstdDecoder {
    /// A decoder that accepts windows up to 2^27 bytes, as perf's reader does.
    pub fn new() -> Result<Self, Error> {
        Self::with_window_log_max(MAX_WINDOW_LOG)
    }

    /// A decoder that refuses frames whose window exceeds `2^wlog` bytes.
    pub fn with_window_log_max(wlog: u32) -> Result<Self, Error> {
        let mut dctx =
            DCtx::try_create().ok_or(Error::Zstd("cannot allocate a decompression context"))?;
        dctx.set_parameter(DParameter::WindowLogMax(wlog))
            .map_err(zstd_err)
            .map_err(Error::Zstd)?;
        Ok(ZstdDecoder { dctx })
    }

    /// Bytes held by the decoder's state (window included).
    pub fn state_size(&self) -> usize {
        self.dctx.sizeof()
    }
}

impl Decoder for ZstdDecoder {
    fn decompress(&mut self, src: &[u8], dst: &mut Vec<u8>, limit: usize) -> Result<usize, Error> {
        let start = dst.len();
        let mut inp = InBuffer::around(src);
        loop {
            let produced = dst.len() - start;
            // One byte past the limit tells "exactly at the limit" from "more to
            // come" without trusting any size the payload claims.
            let room = limit.saturating_add(1).saturating_sub(produced).min(STEP);
            reserve_within(dst, room, start.saturating_add(limit).saturating_add(1));
            let (before, len0) = (inp.pos(), dst.len());
            // Into the vector's spare capacity, which zstd-safe's OutBuffer
            // over a Vec fills and then takes into its length: nothing is
            // zeroed first (a resize per call cleared up to STEP bytes per
            // record, more than the decoding wrote).
            let res = {
                let mut out = OutBuffer::around_pos(dst, len0);
                self.dctx.decompress_stream(&mut out, &mut inp)
            };
            let written = dst.len() - len0;
            if let Err(code) = res {
                dst.truncate(start);
                return Err(Error::Corrupt {
                    codec: "zstd",
                    what: zstd_err(code).to_string(),
                });
            }
            if dst.len() - start > limit {
                dst.truncate(start);
                return Err(Error::OutputLimit { limit });
            }
            if inp.pos() == src.len() && dst.len() < dst.capacity() {
                return Ok(dst.len() - start);
            }
            if inp.pos() == before && written == 0 {
                dst.truncate(start);
                return Err(Error::Corrupt {
                    codec: "zstd",
                    what: "decoder made no progress".into(),
                });
            }
        }
    }
}

/// Reserves `room` more bytes, growing geometrically (amortized O(1)) but never
/// past `cap` bytes of length, so a bomb cannot double us past the limit.
fn reserve_within(dst: &mut Vec<u8>, room: usize, cap: usize) {
    let want = dst.len() + room;
    if want > dst.capacity() {
        let grown = dst.capacity().saturating_mul(2).min(cap).max(want);
        dst.reserve_exact(grown - dst.len());
    }
}
