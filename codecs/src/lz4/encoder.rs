use std::io::Write;

use lz4_flex::frame::{BlockMode, BlockSize, FrameEncoder, FrameInfo};

use crate::framing::UNIT_HEADER;
use crate::{Codec, CodecId, Error, Input};

/// lz4 in the lz4 frame format with *linked* blocks: every block may refer
/// to the 64 KiB before it, across pushes, so small units compress as one
/// stream does (unlinked 64 KiB units got half the ratio of `lz4 -b1`).
/// One unit per push (`u32 raw_len, u32 comp_len`, then the frame bytes the
/// push produced: the frame header first in a stream, then its blocks, and
/// the end mark where a frame ends), every push flushed so its unit decodes
/// given the ones before it.
///
/// lz4_flex's frame encoder keeps the window and the hash table between
/// blocks; it copies its input into its own buffer (the window), as zstd's
/// streaming API does, and stages each block before writing it: both
/// buffers are allocated once, at construction (a warm-up frame), never
/// while compressing.
pub struct Lz4Codec {
    enc: FrameEncoder<Vec<u8>>,
    /// End the frame after the next push's flush (a flight-recorder segment).
    end_frame: bool,
    /// A frame is open (a unit was written since the last end).
    open: bool,
}

/// The largest input of one unit: a record's worth (see `bound`).
const MAX_UNIT_INPUT: usize = 64 << 10;

fn frame_info() -> FrameInfo {
    FrameInfo::new()
        .block_size(BlockSize::Max64KB)
        .block_mode(BlockMode::Linked)
}

impl Lz4Codec {
    pub fn new() -> Self {
        let out = Vec::with_capacity(2 * UNIT_HEADER + 2 * MAX_UNIT_INPUT + 64);
        let mut enc = FrameEncoder::with_frame_info(frame_info(), out);
        // Warm up: the first frame allocates the window and the block
        // buffer; the next frame reuses them (and starts from scratch).
        let warmed = enc.write_all(&[0]).is_ok() && enc.try_finish().is_ok();
        debug_assert!(warmed, "writing into a Vec cannot fail");
        enc.get_mut().clear();
        Lz4Codec {
            enc,
            end_frame: false,
            open: false,
        }
    }
}

impl Default for Lz4Codec {
    fn default() -> Self {
        Self::new()
    }
}

fn io(e: std::io::Error) -> Error {
    Error::Corrupt {
        codec: "lz4",
        what: format!("the frame encoder failed: {e}"),
    }
}

impl Codec for Lz4Codec {
    const ID: CodecId = CodecId::LZ4;

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
        self.enc.get_mut().clear();
        for part in input.parts() {
            self.enc.write_all(part).map_err(io)?;
        }
        self.enc.flush().map_err(io)?;
        self.open = true;
        if std::mem::take(&mut self.end_frame) {
            self.open = false;
            self.enc.try_finish().map_err(|e| Error::Corrupt {
                codec: "lz4",
                what: format!("ending the frame: {e}"),
            })?;
        }
        let out = self.enc.get_ref();
        let n = out.len();
        dst[..4].copy_from_slice(&(input.len() as u32).to_le_bytes());
        dst[4..8].copy_from_slice(&(n as u32).to_le_bytes());
        dst[UNIT_HEADER..UNIT_HEADER + n].copy_from_slice(out);
        Ok(UNIT_HEADER + n)
    }

    fn bound(&self, len: usize) -> usize {
        // A block is stored raw when compressing does not shrink it: at most
        // `len` bytes of blocks, a 4-byte header per 64 KiB block, a frame
        // header (at most 19 bytes) and an end mark.
        UNIT_HEADER + len + 4 * len.div_ceil(64 << 10).max(1) + 19 + 4
    }

    fn state_size(&self) -> usize {
        // Window (2 blocks + 64 KiB), block buffer, hash table (4 Ki u32).
        (2 * (64 << 10) + (64 << 10))
            + lz4_flex::block::get_maximum_output_size(64 << 10)
            + 4 * 4096
    }

    fn end_frame_at_flush(&mut self) {
        self.end_frame = true;
    }

    fn restart(&mut self) -> Result<(), Error> {
        // The end mark is not written anywhere: the next unit starts a new
        // frame (which resets the window) in a new stream.
        if std::mem::take(&mut self.open) {
            self.enc.try_finish().map_err(|e| Error::Corrupt {
                codec: "lz4",
                what: format!("ending the frame: {e}"),
            })?;
        }
        self.enc.get_mut().clear();
        self.end_frame = false;
        Ok(())
    }

    const COPIES_INPUT: bool = true;
}
