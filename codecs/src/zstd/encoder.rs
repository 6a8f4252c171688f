use zstd_safe::zstd_sys::ZSTD_EndDirective;
use zstd_safe::{CCtx, InBuffer, OutBuffer, ResetDirective};

use super::zstd_err;
use crate::{Codec, CodecId, Error, Input, Step, ZstdParams};

/// Largest zstd frame header (magic 4 + descriptor 1 + window 1 + dict id 4 +
/// content size 8); only the first chunk of a stream carries one.
const FRAME_HEADER_MAX: usize = 18;

/// zstd streaming compression through one `ZSTD_CCtx` kept for the whole stream.
///
/// Each [`compress`](Codec::compress) feeds the slices with `ZSTD_e_continue` and
/// then flushes until nothing is pending (never `ZSTD_e_end`): the session is one
/// endless frame, as perf writes it, and every chunk decodes completely once read.
/// No pledged size, no checksum, window log ≤ 27, so perf 6.1 can read the stream.
pub struct ZstdCodec {
    cctx: CCtx<'static>,
    level: i32,
    /// The next flush ends the frame (`Codec::end_frame_at_flush`).
    end_frame: bool,
}

impl ZstdCodec {
    /// A `ZSTD_CCtx` with `params` set and its workspace allocated (by one
    /// warm-up call), so that pushes never allocate.
    pub fn new(params: &ZstdParams) -> Result<Self, Error> {
        // zstd's own block size (128 KiB): the record cutter ends blocks
        // with flushes where a record needs one (perfz src/push/cutter.rs).
        let mut cctx = super::context(params)?;
        // libzstd sizes and allocates its workspace on the first streaming call.
        // Make that call now, then forget the session (keeping the parameters and
        // the workspace), so that no push ever allocates.
        let mut scratch = [0u8; 64];
        let mut out = OutBuffer::around(&mut scratch[..]);
        let mut inp = InBuffer::around(&[0u8]);
        cctx.compress_stream2(&mut out, &mut inp, ZSTD_EndDirective::ZSTD_e_flush)
            .map_err(zstd_err)
            .map_err(Error::Zstd)?;
        cctx.reset(ResetDirective::SessionOnly)
            .map_err(zstd_err)
            .map_err(Error::Zstd)?;
        Ok(ZstdCodec {
            cctx,
            level: params.level,
            end_frame: false,
        })
    }
}

impl Codec for ZstdCodec {
    const ID: CodecId = CodecId::ZSTD;
    // ZSTD_compressStream2 copies its input into the window buffer.
    const COPIES_INPUT: bool = true;
    const OUTPUT_DRIVEN: bool = true;

    fn stream(&mut self, input: Input<'_>, dst: &mut [u8], flush: bool) -> Result<Step, Error> {
        let mut out = OutBuffer::around(dst);
        let mut consumed = 0;
        for part in input.parts() {
            let mut inp = InBuffer::around(part);
            while inp.pos() < part.len() && out.pos() < out.capacity() {
                self.cctx
                    .compress_stream2(&mut out, &mut inp, ZSTD_EndDirective::ZSTD_e_continue)
                    .map_err(zstd_err)
                    .map_err(Error::Zstd)?;
            }
            consumed += inp.pos();
            if inp.pos() < part.len() {
                // The window is full; the rest of the input comes next call.
                return Ok(Step {
                    consumed,
                    produced: out.pos(),
                    done: false,
                });
            }
        }
        if !flush {
            return Ok(Step {
                consumed,
                produced: out.pos(),
                done: true,
            });
        }
        // All consumed: flush (one block end per push, as perf does), or
        // end the frame where asked (the next chunk starts a new one).
        while out.pos() < out.capacity() {
            let pending = if self.end_frame {
                self.cctx.end_stream(&mut out)
            } else {
                self.cctx.flush_stream(&mut out)
            }
            .map_err(zstd_err)
            .map_err(Error::Zstd)?;
            if pending == 0 {
                self.end_frame = false;
                return Ok(Step {
                    consumed,
                    produced: out.pos(),
                    done: true,
                });
            }
        }
        Ok(Step {
            consumed,
            produced: out.pos(),
            done: false,
        })
    }

    fn compress(&mut self, input: Input<'_>, dst: &mut [u8]) -> Result<usize, Error> {
        if input.is_empty() {
            return Ok(0);
        }
        let need = self.bound(input.len());
        if dst.len() < need {
            return Err(Error::DstTooSmall {
                need,
                have: dst.len(),
            });
        }
        // One whole chunk: everything consumed and flushed into `dst`.
        let have = dst.len();
        let step = self.stream(input, dst, true)?;
        if !step.done {
            return Err(Error::DstTooSmall { need, have });
        }
        Ok(step.produced)
    }

    fn bound(&self, len: usize) -> usize {
        // compressBound covers a whole frame of `len` bytes. A flush may cut the
        // input into at most two blocks when zstd's input buffer wraps (3 bytes of
        // block header each), and the first chunk carries the frame header.
        zstd_safe::compress_bound(len) + FRAME_HEADER_MAX + 6
    }

    fn state_size(&self) -> usize {
        self.cctx.sizeof()
    }

    fn end_frame_at_flush(&mut self) {
        self.end_frame = true;
    }

    fn restart(&mut self) -> Result<(), Error> {
        // A new frame, header included; parameters and workspace stay, so
        // this allocates nothing.
        self.cctx
            .reset(ResetDirective::SessionOnly)
            .map(drop)
            .map_err(zstd_err)
            .map_err(Error::Zstd)
    }

    fn level(&self) -> i32 {
        self.level
    }
}
