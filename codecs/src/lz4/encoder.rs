use std::io::Write;

use lz4_flex::frame::{BlockMode, BlockSize, FrameEncoder, FrameInfo};

use crate::{Codec, CodecId, Error, Input, Step};

/// lz4 as one lz4 frame stream (the lz4 frame format) with 1 MiB *linked*
/// blocks, cut into records by output like zstd (`Codec::OUTPUT_DRIVEN`):
/// COMPRESSED payloads are consecutive pieces of the stream, a block may
/// span records, and pushes need not end a block — so blocks are as long as
/// `lz4 -b1`'s (which uses 4 MiB), where one block per push gave two thirds
/// of its ratio on dwarf streams. Only perfz reads this (perf has no lz4):
/// its decoder reads a block once all of it has arrived.
///
/// lz4_flex's frame encoder keeps the window and the hash table between
/// blocks; it copies its input into its own buffer (the window), as zstd's
/// streaming API does, and writes each block into `out`, from where
/// `stream` copies it into record windows. Input is taken so that at most
/// one block waits in `out`: every buffer is allocated at construction (a
/// warm-up frame), never while compressing.
pub struct Lz4Codec {
    enc: FrameEncoder<Vec<u8>>,
    /// Bytes of `enc`'s output already given out.
    sent: usize,
    /// Input in the encoder's current block (a full block is written by
    /// the next write or flush).
    filled: usize,
    /// End the frame at the next flush (a flight-recorder segment).
    end_frame: bool,
    /// A frame is open (input was taken since the last end).
    open: bool,
}

/// The block size: lz4's largest but one (4 MiB would double the memory
/// for a few per cent of ratio).
const BLOCK: usize = 1 << 20;

// The declared bound covers what the encoder may hold and a record of lz4
// at its largest ratio.
const _: () =
    assert!(CodecId::LZ4_RECORD_DECODE_MAX as usize >= 2 * BLOCK + 255 * crate::MAX_RECORD_PAYLOAD);

fn frame_info() -> FrameInfo {
    FrameInfo::new()
        .block_size(BlockSize::Max1MB)
        .block_mode(BlockMode::Linked)
}

impl Lz4Codec {
    /// An encoder with every buffer allocated (after a warm-up frame), no frame open.
    pub fn new() -> Self {
        let out = Vec::with_capacity(lz4_flex::block::get_maximum_output_size(BLOCK) + 64);
        let mut enc = FrameEncoder::with_frame_info(frame_info(), out);
        // Warm up: the first frame allocates the window and the block
        // buffer; the next frame reuses them (and starts from scratch).
        let warmed = enc.write_all(&[0]).is_ok() && enc.try_finish().is_ok();
        debug_assert!(warmed, "writing into a Vec cannot fail");
        enc.get_mut().clear();
        Lz4Codec {
            enc,
            sent: 0,
            filled: 0,
            end_frame: false,
            open: false,
        }
    }

    /// Copies waiting output into `dst`; returns how much.
    fn drain(&mut self, dst: &mut [u8]) -> usize {
        let out = self.enc.get_mut();
        let n = (out.len() - self.sent).min(dst.len());
        dst[..n].copy_from_slice(&out[self.sent..self.sent + n]);
        self.sent += n;
        if self.sent == out.len() {
            out.clear();
            self.sent = 0;
        }
        n
    }

    fn waiting(&self) -> usize {
        self.enc.get_ref().len() - self.sent
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
    const OUTPUT_DRIVEN: bool = true;
    // perfz's own decoder reads blocks across records: a record may end
    // anywhere (and decode to nothing).
    const BLOCK_ENDS_PER_RECORD: bool = false;
    // The block being filled, and one written block still waiting.
    const MAX_HELD: usize = 2 * BLOCK;

    fn stream(&mut self, input: Input<'_>, dst: &mut [u8], flush: bool) -> Result<Step, Error> {
        let mut produced = self.drain(dst);
        let mut consumed = 0;
        for part in input.parts() {
            let mut rest = part;
            while !rest.is_empty() {
                if self.waiting() > 0 {
                    // The window is full: the rest comes next call.
                    return Ok(Step {
                        consumed,
                        produced,
                        done: false,
                    });
                }
                // A full block is written by this write, before it takes
                // anything: take at most one block's worth.
                let room = if self.filled == BLOCK {
                    BLOCK
                } else {
                    BLOCK - self.filled
                };
                let n = rest.len().min(room);
                self.enc.write_all(&rest[..n]).map_err(io)?;
                self.open = true;
                self.filled = if self.filled == BLOCK {
                    n
                } else {
                    self.filled + n
                };
                consumed += n;
                rest = &rest[n..];
                produced += self.drain(&mut dst[produced..]);
            }
        }
        if flush && self.waiting() == 0 {
            self.enc.flush().map_err(io)?;
            self.filled = 0;
            if self.end_frame && self.open {
                self.enc.try_finish().map_err(|e| Error::Corrupt {
                    codec: "lz4",
                    what: format!("ending the frame: {e}"),
                })?;
                self.open = false;
            }
            self.end_frame = false;
            produced += self.drain(&mut dst[produced..]);
        }
        Ok(Step {
            consumed,
            produced,
            done: self.waiting() == 0 || !flush,
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
        let step = self.stream(input, dst, true)?;
        if !step.done || step.consumed != input.len() {
            return Err(Error::DstTooSmall {
                need,
                have: dst.len(),
            });
        }
        Ok(step.produced)
    }

    fn bound(&self, len: usize) -> usize {
        // A block is stored raw when compressing does not shrink it: at most
        // `len` bytes of blocks, a 4-byte header per block (blocks of at most
        // 1 MiB, two more where a flush and the one before cut them), a frame
        // header (at most 19 bytes) and an end mark.
        len + 4 * (len.div_ceil(BLOCK) + 2) + 19 + 4
    }

    fn state_size(&self) -> usize {
        // Window (2 blocks + 64 KiB), block buffer, output, hash table.
        (2 * BLOCK + (64 << 10)) + 2 * lz4_flex::block::get_maximum_output_size(BLOCK) + 4 * 4096
    }

    fn end_frame_at_flush(&mut self) {
        self.end_frame = true;
    }

    fn restart(&mut self) -> Result<(), Error> {
        // The end mark is not written anywhere: the next input starts a new
        // frame (which resets the window) in a new stream.
        if std::mem::take(&mut self.open) {
            self.enc.try_finish().map_err(|e| Error::Corrupt {
                codec: "lz4",
                what: format!("ending the frame: {e}"),
            })?;
        }
        self.enc.get_mut().clear();
        self.sent = 0;
        self.filled = 0;
        self.end_frame = false;
        Ok(())
    }

    const COPIES_INPUT: bool = true;
}
