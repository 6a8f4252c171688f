//! The record cutter of output-driven codecs (streaming zstd, lz4): the
//! codec takes the push slice by slice and its output fills a record window
//! the compressor keeps; records are cut wherever it is full — by output, as
//! perf does (format notes 5.7b) — so a record holds up to 64 KiB of
//! *compressed* data, not the compression of at most 64 KiB of input.
//!
//! perf 6.1's rules: every record holds a block end (a record that decodes
//! to nothing is fatal), no record holds two frame ends, none decodes to
//! more than `mmap_len`. The cutter keeps them while letting zstd make
//! blocks as large as a record allows, without capping its block size:
//!
//! - Block ends are the cutter's: it flushes the codec once a block has
//!   taken its *allowance*, the most input whose output (`Codec::bound`)
//!   still ends in this window when the window holds no block end yet, or
//!   in the next one when it does. So a window filled up holds a block end,
//!   and the next one holds the end of the block it continues. (zstd's own
//!   block ends, 128 KiB apart, only add ends.) perf's own code lacks this
//!   guarantee.
//! - Pushes need not end with a flush (`Compressor::set_hold`): the window
//!   and zstd's input stay open across pushes, so blocks stay long (as
//!   `zstd -b` makes them) and a push costs nothing at its end. Whoever
//!   holds flushes (`Compressor::flush_into`) before anything that must
//!   follow the held bytes in the file, and now and then. The recorder
//!   flushes every 100 ms (`session::run::HOLD_MAX`), before plain records
//!   (FINISHED_ROUND goes into the stream instead while bytes are held:
//!   `Pusher::end_round`), when the unit lends its output (checkpoints,
//!   switches, snapshots) and at the end, before the numbers that make
//!   HEADER_COMPRESSED are taken. A recorder killed before its last flush
//!   leaves a last record cut off inside; readers drop it, as perf does
//!   (`PerfReader::cut_off` counts it).
//! - A record takes at most [`RECORD_RAW_LIMIT`] raw bytes: with what was
//!   held when it began it decodes within [`DECLARED_MMAP_LEN`].
//! - lz4, which only perfz reads, needs neither rule
//!   (`Codec::BLOCK_ENDS_PER_RECORD`): its records end where they are full,
//!   its blocks where its encoder ends them (1 MiB) or a flush does, so a
//!   record may decode to more than perf's ring; lz4 outputs declare
//!   `CodecId::LZ4_RECORD_DECODE_MAX` (`records::declared_mmap_len`).
//! - A frame ends only at the last flush of a push (flight-recorder
//!   segments), and the record is sealed right after it.
//! - The record type is the one chosen for the output, once
//!   (`CompressedFormat`, a field): COMPRESSED's window holds 65 527
//!   bytes after its 8-byte header; COMPRESSED2's 65 512 after its 16-byte
//!   prefix, so that the record padded to 8 bytes fits `header.size`. The
//!   rules above are the same for both windows (the bounds below are taken
//!   at the larger, COMPRESSED's).
//!
//! Tests: `compressor/tests.rs` (zstd on incompressible, 4:3, zero and
//! perf-like data, with and without holding: every record decodes to
//! 1..=mmap_len bytes, through the `zstd` crate; lz4 within what it
//! declares; COMPRESSED2 records each a correct writer's), the
//! recorder-path proptest (tests/it/writer_props.rs) and
//! codecs/tests/all/stream.rs (output between flushes within `bound`). The
//! same cutter serves `perfz recompress` and eval.

use perfz_codecs::{Codec, Input, MAX_RECORD_PAYLOAD};

use super::records::{Records, Tally, DECLARED_MMAP_LEN, RECORD_MAX};
use crate::format::CompressedFormat;

/// The largest window of any record type (COMPRESSED's).
const P: usize = MAX_RECORD_PAYLOAD;

/// Input a block may have taken when a record begins: at most its allowance
/// (under two windows).
const HELD_MAX: usize = 2 * P;

/// Raw bytes a record takes before it is flushed and sealed: with the
/// `HELD_MAX` bytes a block may have taken before it began, it decodes to
/// at most [`DECLARED_MMAP_LEN`], the room perf's reader makes per record.
pub const RECORD_RAW_LIMIT: usize = DECLARED_MMAP_LEN as usize - HELD_MAX;

/// The record being cut and the block being filled.
pub struct RecordWindow {
    /// Header (and COMPRESSED2's data_size), then the payload so far
    /// (empty for chunk codecs).
    buf: Box<[u8]>,
    fill: usize,
    /// The record type, where its payload starts in `buf`, and the most
    /// payload a record holds (its window).
    format: CompressedFormat,
    prefix: usize,
    cap: usize,
    /// The window holds a block end.
    has_end: bool,
    /// Input the current block has taken, and may take before it is flushed.
    block_in: usize,
    allow: usize,
    /// Raw bytes taken since this record began, and what the block had
    /// taken then: together they bound what the record decodes to.
    fed: usize,
    held_before: usize,
    /// Pushes end without a flush.
    hold: bool,
    /// The push's last flush ends the frame.
    end_frame_due: bool,
}

impl RecordWindow {
    /// An empty window for `codec` cutting records of `format`: a
    /// record-sized buffer for output-driven codecs, none for chunk codecs.
    pub fn new<C: Codec>(codec: &C, format: CompressedFormat) -> RecordWindow {
        let len = if C::OUTPUT_DRIVEN { RECORD_MAX } else { 0 };
        RecordWindow::with_buf(codec, vec![0u8; len].into_boxed_slice(), format)
    }

    fn with_buf<C: Codec>(codec: &C, buf: Box<[u8]>, format: CompressedFormat) -> RecordWindow {
        let cap = format.max_payload();
        RecordWindow {
            buf,
            fill: 0,
            format,
            prefix: format.prefix(),
            cap,
            has_end: false,
            block_in: 0,
            allow: codec.max_input(cap),
            fed: 0,
            held_before: 0,
            hold: false,
            end_frame_due: false,
        }
    }

    /// A new stream (nothing held); the buffer, format and `hold` stay.
    pub fn reset<C: Codec>(&mut self, codec: &C) {
        let hold = self.hold;
        *self = RecordWindow::with_buf(codec, std::mem::take(&mut self.buf), self.format);
        self.hold = hold;
    }
}

impl RecordWindow {
    /// Whether pushes end without a flush.
    pub fn set_hold(&mut self, hold: bool) {
        self.hold = hold;
    }

    /// The push's last flush ends the frame.
    pub fn end_frame_due(&mut self) {
        self.end_frame_due = true;
    }

    /// True when pushed bytes are not in a written record yet.
    pub fn holds(&self) -> bool {
        self.block_in > 0 || self.fill > 0
    }

    /// Feeds one slice of a push to the codec; full records go to `out`.
    pub fn feed<C: Codec, R: Records>(
        &mut self,
        codec: &mut C,
        tally: &mut Tally,
        slice: &[u8],
        out: &mut R,
    ) -> Result<(), R::Error> {
        let mut rest = slice;
        while !rest.is_empty() {
            let w = &*self;
            // A codec only perfz reads needs neither (see
            // `Codec::BLOCK_ENDS_PER_RECORD`): records end where full.
            let room = if !C::BLOCK_ENDS_PER_RECORD {
                usize::MAX
            } else if w.fed >= RECORD_RAW_LIMIT {
                self.flush_into(codec, tally, out)?;
                continue;
            } else {
                (w.allow - w.block_in).min(RECORD_RAW_LIMIT - w.fed)
            };
            if room == 0 {
                self.end_block(codec, tally, out)?;
                continue;
            }
            let now = &rest[..rest.len().min(room)];
            let w = &mut *self;
            let step = codec.stream(
                Input::one(now),
                &mut w.buf[w.prefix + w.fill..w.prefix + w.cap],
                false,
            )?;
            w.fill += step.produced;
            w.block_in += step.consumed;
            w.fed += step.consumed;
            tally.raw_bytes += step.consumed as u64;
            out.took(step.consumed);
            rest = &rest[step.consumed..];
            if self.fill == self.cap {
                self.seal::<C, R>(tally, out)?;
            } else if step.consumed == 0 && step.produced == 0 {
                return Err(perfz_codecs::Error::NoProgress.into());
            }
        }
        Ok(())
    }

    /// Ends a push: with hold, nothing (the record stays open); else, or
    /// where the frame must end, a flush and the record sealed.
    pub fn end<C: Codec, R: Records>(
        &mut self,
        codec: &mut C,
        tally: &mut Tally,
        out: &mut R,
    ) -> Result<(), R::Error> {
        if self.hold && !self.end_frame_due {
            return Ok(());
        }
        self.flush_into(codec, tally, out)
    }

    /// Flushes what the codec holds and seals the record: everything pushed
    /// is then in records given to `out`.
    pub fn flush_into<C: Codec, R: Records>(
        &mut self,
        codec: &mut C,
        tally: &mut Tally,
        out: &mut R,
    ) -> Result<(), R::Error> {
        // The frame ends with a block that has input (after a push it has):
        // an empty last block alone in a record would decode to nothing.
        let end_frame = self.end_frame_due && self.block_in > 0;
        if end_frame {
            self.end_frame_due = false;
            codec.end_frame_at_flush();
        }
        if self.block_in > 0 {
            self.end_block(codec, tally, out)?;
        }
        if self.fill > 0 {
            self.seal::<C, R>(tally, out)?;
        }
        // A fresh window with nothing held: its first block must end in it.
        let w = &mut *self;
        w.fed = 0;
        w.held_before = 0;
        w.allow = codec.max_input(w.cap);
        Ok(())
    }

    /// Flushes the current block: its end lands in this window or, when
    /// this one fills, in the next (the allowance saw to it).
    fn end_block<C: Codec, R: Records>(
        &mut self,
        codec: &mut C,
        tally: &mut Tally,
        out: &mut R,
    ) -> Result<(), R::Error> {
        loop {
            let w = &mut *self;
            let step = codec.stream(
                Input::one(&[]),
                &mut w.buf[w.prefix + w.fill..w.prefix + w.cap],
                true,
            )?;
            w.fill += step.produced;
            if self.fill == self.cap {
                self.seal::<C, R>(tally, out)?;
            }
            if step.done {
                break;
            }
            if step.produced == 0 {
                return Err(perfz_codecs::Error::NoProgress.into());
            }
        }
        let w = &mut *self;
        // Everything is out: the last byte written ends a block.
        w.has_end = w.fill > 0;
        w.block_in = 0;
        // The next block may end in the next window only if this one holds
        // an end; it starts at `fill`.
        let room = if w.has_end { 2 * w.cap } else { w.cap } - w.fill;
        w.allow = codec.max_input(room).max(1);
        Ok(())
    }

    /// Makes the window one record of the format (COMPRESSED, or
    /// COMPRESSED2 padded) and hands it to `out`.
    fn seal<C: Codec, R: Records>(
        &mut self,
        tally: &mut Tally,
        out: &mut R,
    ) -> Result<(), R::Error> {
        let w = &mut *self;
        let size = w.format.seal(&mut w.buf, w.fill); // fill ≤ cap
        tally.record(size, w.fed + w.held_before);
        out.emit(&w.buf[..size])?;
        w.fill = 0;
        w.has_end = false;
        w.fed = 0;
        w.held_before = w.block_in.min(C::MAX_HELD);
        Ok(())
    }
}
