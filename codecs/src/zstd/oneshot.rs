use zstd_safe::CCtx;

use super::zstd_err;
use crate::{Codec, CodecId, Error, Input, ZstdParams};

/// zstd one-shot: every slice of a push becomes one complete frame
/// (`ZSTD_compress2`), with no window carried between pushes.
///
/// The streaming codec copies its input into zstd's window buffer — one more
/// pass over every byte — and in exchange matches across pushes. One-shot
/// compresses straight from the ring with no internal copy of the input, at a
/// lower ratio on small pushes. Measured side by side in docs/BENCHMARKS.md.
///
/// perf 6.1 reads one frame per COMPRESSED record, but not two frame ends in
/// one record, so the record layer splits pushes at the ring's wrap for this
/// codec ([`Codec::FRAME_PER_SLICE`]).
pub struct ZstdOneShotCodec {
    cctx: CCtx<'static>,
    level: i32,
}

impl ZstdOneShotCodec {
    /// A `ZSTD_CCtx` with `params` set, its workspace sized for the largest
    /// chunk, so that pushes never allocate.
    pub fn new(params: &ZstdParams) -> Result<Self, Error> {
        let mut cctx = super::context(params)?;
        // Size the workspace for the largest chunk now, so pushes never allocate.
        let warm = vec![0u8; crate::MAX_RECORD_PAYLOAD];
        let mut out = vec![0u8; zstd_safe::compress_bound(warm.len()) + 64];
        cctx.compress2(&mut out[..], &warm)
            .map_err(zstd_err)
            .map_err(Error::Zstd)?;
        Ok(ZstdOneShotCodec {
            cctx,
            level: params.level,
        })
    }
}

impl Codec for ZstdOneShotCodec {
    const ID: CodecId = CodecId::ZSTD;
    const FRAME_PER_SLICE: bool = true;

    fn compress(&mut self, input: Input<'_>, dst: &mut [u8]) -> Result<usize, Error> {
        let need = self.bound(input.len());
        if dst.len() < need {
            return Err(Error::DstTooSmall {
                need,
                have: dst.len(),
            });
        }
        let mut at = 0;
        for part in input.parts() {
            let n = self
                .cctx
                .compress2(&mut dst[at..], part)
                .map_err(zstd_err)
                .map_err(Error::Zstd)?;
            at += n;
        }
        Ok(at)
    }

    fn bound(&self, len: usize) -> usize {
        // Up to two frames: compressBound each, plus a frame header (≤ 18
        // bytes, content size included) and a little slack for the split.
        zstd_safe::compress_bound(len) + 2 * 18 + 32
    }

    fn state_size(&self) -> usize {
        self.cctx.sizeof()
    }

    fn level(&self) -> i32 {
        self.level
    }
}
