//! Streaming codecs for the payload of perf.data `PERF_RECORD_COMPRESSED` records.
//!
//! This crate is the small, dependency-light core that the recorder's push path is
//! generic over, in the spirit of ripgrep's `grep-matcher`:
//!
//! * [`Codec`] compresses one push — a ring-buffer region given as one or two slices
//!   ([`Input`]) — into a caller-provided buffer, keeping streaming state between
//!   calls where the codec has any. It never allocates after construction.
//! * [`Decoder`] turns the payload of one compressed record back into bytes,
//!   appending to a `Vec` and never growing it by more than a caller-chosen limit.
//! * [`CodecSpec`] is the user-facing name (`zstd:3,wlog=23`, `lz4`, ...); it is
//!   parsed once and turned into a concrete codec type by [`CodecSpec::visit`], which
//!   calls a *generic* function: the hot loop is monomorphized, never `dyn`.
//!
//! Every codec has a stable [`CodecId`] that is written into the perf.data
//! `HEADER_COMPRESSED.type` field (zstd is 1, as in perf).
//!
//! ```
//! use perfz_codecs::{Codec, CodecSpec, CodecVisitor, Input, Error};
//!
//! // The push path: generic over the codec, so each codec gets its own copy.
//! fn push_all<C: Codec>(mut codec: C, pushes: &[&[u8]]) -> Result<usize, Error> {
//!     let mut dst = vec![0u8; codec.bound(1 << 16)];
//!     let mut total = 0;
//!     for p in pushes {
//!         total += codec.compress(Input::one(p), &mut dst)?;
//!     }
//!     Ok(total)
//! }
//!
//! struct Run<'a>(&'a [&'a [u8]]);
//! impl CodecVisitor for Run<'_> {
//!     type Output = Result<usize, Error>;
//!     fn visit<C: Codec>(self, codec: C) -> Self::Output {
//!         push_all(codec, self.0)
//!     }
//! }
//!
//! let spec: CodecSpec = "none".parse().unwrap();
//! // One match, inside `visit`; from here on the code is specialised for the codec.
//! let written = spec.visit(Run(&[b"hello", b" world"])).unwrap().unwrap();
//! assert_eq!(written, 11);
//! ```
//!
//! # The contract
//!
//! [`Codec::compress`] compresses one push (one slice or two) into a buffer
//! the caller owns. After it returns, everything pushed so far decodes from
//! the outputs so far (zstd flushes, block codecs write whole chunks), which
//! is what lets each output be exactly one perf COMPRESSED record that
//! decodes to at least one byte (perf 6.1 aborts on a record that decodes to
//! nothing). Empty input writes nothing. [`Codec::bound`] is the worst case
//! for any split of `len` bytes into two slices; [`Codec::max_input`]
//! inverts it (a binary search over `bound`), and perfz cuts a push into
//! parts of at most `max_input(MAX_RECORD_PAYLOAD)`, one record each.
//!
//! Output-driven codecs (streaming zstd, lz4: [`Codec::OUTPUT_DRIVEN`],
//! [`Codec::stream`]) take a push part by part instead and fill
//! record-sized output windows, so a record holds up to 64 KiB of
//! *compressed* data, as perf's do; where records and blocks end is perfz's
//! record cutter's (src/push/cutter.rs). lz4, which only perfz reads, lets
//! records end anywhere ([`Codec::BLOCK_ENDS_PER_RECORD`] is false; its
//! decoder waits for a whole block), so one of its records may decode to far
//! more than perf's ring size ([`CodecId::LZ4_RECORD_DECODE_MAX`]).
//!
//! No allocation after construction: zstd's workspace is allocated by a
//! one-byte priming call followed by a session reset, lz4's frame encoder
//! allocates its window and block buffer in a warm-up frame, and snappy's
//! large table is warmed with one 64 KiB block. codecs/tests/all/no_alloc.rs
//! proves it with a counting global allocator; libzstd's own allocations go
//! through Rust's allocator (zstd-safe's `with-rust-allocator`), so they
//! count.
//!
//! Decoders append to a `Vec` and never grow it by more than a caller-given
//! limit (perfz's reader passes the file's declared `mmap_len`): snappy and
//! the older lz4 chunk formats check a chunk's declared length before
//! allocating, lz4's stream decoder refuses a block over 4 MiB and takes
//! output in 128 KiB steps, zstd decodes in 128 KiB steps and caps its
//! window at 2^27.
//!
//! Words: a *chunk* in this crate is what one `compress` call writes,
//! self-contained for the decoder (framing.rs frames the block codecs'
//! chunks). A *push* is the input of one call.

#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod decoder;
mod error;
mod input;
pub mod knobs;
mod none;
mod spec;
pub mod table;

#[cfg(any(feature = "lz4", feature = "snappy"))]
mod framing;
#[cfg(feature = "lz4")]
mod lz4;
#[cfg(feature = "snappy")]
mod snappy;
#[cfg(feature = "zstd")]
mod zstd;

pub use decoder::AnyDecoder;
pub use error::Error;
pub use input::Input;
pub use knobs::ZSTD_STRATEGIES;
pub use none::{NoneCodec, NoneDecoder};
pub use spec::{CodecSpec, CodecVisitor, ZstdParams};
pub use table::{CodecInfo, CodecKind, CODECS};

#[cfg(feature = "lz4")]
pub use lz4::{Lz4Codec, Lz4Decoder, Lz4LinkedUnitsDecoder, Lz4UnitsDecoder};
#[cfg(feature = "snappy")]
pub use snappy::{SnappyCodec, SnappyDecoder};
#[cfg(feature = "zstd")]
pub use zstd::{ZstdCodec, ZstdDecoder, ZstdOneShotCodec};

/// Largest payload of one perf record: `header.size` is a u16 and the 8-byte
/// header counts, so 65 535 − 8 = 65 527 bytes (perf caps at the same value).
pub const MAX_RECORD_PAYLOAD: usize = 65_535 - 8;

/// The value written into `HEADER_COMPRESSED.type` of a perf.data file.
///
/// perf 6.1 knows 0 (`PERF_COMP_NONE`) and 1 (`PERF_COMP_ZSTD`). Our own codecs
/// use values far from perf's enum, so that a future perf codec can never be
/// mistaken for ours (see docs/FORMAT.md). An open newtype: unknown ids survive
/// a read and are reported, not rejected at parse time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CodecId(pub u32);

impl CodecId {
    /// No compression (perf's `PERF_COMP_NONE`).
    pub const NONE: CodecId = CodecId(0);
    /// zstd, perf's `PERF_COMP_ZSTD`: the only one perf itself can read.
    pub const ZSTD: CodecId = CodecId(1);
    /// lz4 as written by perfz before linked blocks: independent block
    /// chunks (perfz framing, docs/FORMAT.md). ASCII "pz" + 1. Read, not
    /// written.
    pub const LZ4_CHUNKS_V1: CodecId = CodecId(0x707a_0001);
    /// lz4 as written by perfz with linked 64 KiB blocks, one chunk per
    /// push (perfz framing, docs/FORMAT.md). ASCII "pz" + 3. Read, not
    /// written.
    pub const LZ4_LINKED_CHUNKS: CodecId = CodecId(0x707a_0003);
    /// lz4: one lz4 frame stream, 1 MiB linked blocks, cut into records by
    /// output (docs/FORMAT.md). ASCII "pz" + 4.
    pub const LZ4: CodecId = CodecId(0x707a_0004);
    /// snappy raw chunks (perfz framing, docs/FORMAT.md). ASCII "pz" + 2.
    pub const SNAPPY: CodecId = CodecId(0x707a_0002);

    /// The most one [`CodecId::LZ4`] record decodes to: its records end
    /// where full, so a record's payload may be lz4 at its largest ratio
    /// (255 : 1, long matches), after the two 1 MiB blocks its encoder may
    /// hold when the record begins. Writers declare it as mmap_len (so a
    /// file cut off after a checkpoint reads whole), recovery assumes it.
    pub const LZ4_RECORD_DECODE_MAX: u32 = 255 * MAX_RECORD_PAYLOAD as u32 + (2 << 20);

    /// The mmap_len a file of this codec declares at least (0: what was
    /// written decides): [`Self::LZ4_RECORD_DECODE_MAX`] for lz4, whose
    /// records may decode to far more than perf's ring size.
    pub const fn declared_decode_min(self) -> u32 {
        if self.0 == Self::LZ4.0 {
            Self::LZ4_RECORD_DECODE_MAX
        } else {
            0
        }
    }

    /// The codec's name as used in specs, or `None` for an id we do not know.
    pub fn name(self) -> Option<&'static str> {
        if self == CodecId::LZ4_CHUNKS_V1 {
            return Some("lz4 (independent chunks)");
        }
        if self == CodecId::LZ4_LINKED_CHUNKS {
            return Some("lz4 (linked chunks)");
        }
        CodecKind::by_id(self).map(CodecKind::name)
    }
}

impl std::fmt::Display for CodecId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.0),
            None => write!(f, "unknown codec id {:#x}", self.0),
        }
    }
}

/// What one [`Codec::stream`] call did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// Bytes taken from the front of the input.
    pub consumed: usize,
    /// Bytes written to the front of `dst`.
    pub produced: usize,
    /// Everything given so far was consumed and flushed: it all decodes from
    /// the outputs so far.
    pub done: bool,
}

/// A compressor for the byte stream copied out of perf ring buffers.
///
/// One call compresses one push: ring-buffer bytes (in perfz, one piece of a
/// ring region), given as one slice or two (when they wrap around the end of
/// the buffer). The output
/// of one call is one self-contained *chunk* for the decoder: after a call returns,
/// everything given so far can be decoded from the outputs so far (zstd flushes,
/// block codecs emit whole blocks). That is what lets every chunk become exactly one
/// perf record that decodes to at least one byte.
///
/// Implementations keep their state (zstd's window, hash tables) between calls and
/// must not allocate after construction: the push path runs in a loop that drains
/// rings under load, and an allocation there is a stall we cannot afford.
pub trait Codec {
    /// The id written into `HEADER_COMPRESSED.type`.
    const ID: CodecId;

    /// True if each slice of a push becomes a complete frame of its own
    /// (zstd one-shot). perf 6.1 cannot read two frame ends in one record, so
    /// the record layer then never gives this codec two slices at once.
    const FRAME_PER_SLICE: bool = false;

    /// Compresses the concatenation of `input`'s slices into `dst` and returns the
    /// number of bytes written.
    ///
    /// An empty input writes nothing and returns 0 (so a caller can never emit a
    /// record that decodes to nothing). `dst` must hold at least
    /// [`bound(input.len())`](Codec::bound) bytes; if it does not, the call fails
    /// with [`Error::DstTooSmall`] and the codec's stream state is unusable.
    fn compress(&mut self, input: Input<'_>, dst: &mut [u8]) -> Result<usize, Error>;

    /// The largest output one `compress` call may produce for `len` input bytes,
    /// however the input is split into its two slices.
    fn bound(&self, len: usize) -> usize;

    /// The largest input length whose [`bound`](Codec::bound) fits `out_cap`, used
    /// to split a ring drain so that each chunk fits one perf record
    /// ([`MAX_RECORD_PAYLOAD`]). Returns 0 if not even one byte fits.
    fn max_input(&self, out_cap: usize) -> usize {
        // bound() is monotonic; binary search keeps every codec honest without a
        // hand-derived inverse per codec.
        let (mut lo, mut hi) = (0usize, out_cap);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.bound(mid) <= out_cap {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }

    /// Bytes of memory the codec's state holds (contexts, tables, windows).
    fn state_size(&self) -> usize;

    /// True if records are cut by *output* ([`stream`](Codec::stream)): the
    /// codec takes a whole push and fills record-sized windows, flushing once
    /// at the end of the push, instead of compressing one chunk per
    /// [`max_input`](Codec::max_input)-sized piece of input.
    const OUTPUT_DRIVEN: bool = false;

    /// Output-driven compression: consumes from the front of `input` and
    /// writes into `dst` (the free part of one record's payload window) until
    /// `dst` is full or the whole input is consumed — and, with `flush`,
    /// flushed (`done`). The caller may feed one push in several pieces
    /// (`flush` on the last), keeps filling a window across calls, makes a
    /// record of each full window and of the last one, and calls again with
    /// the rest and a fresh window until `done`.
    ///
    /// Contract: the output of the bytes taken between two flushes is at
    /// most [`bound`](Codec::bound) of them, and a flush ends a block (all
    /// that was taken then decodes from the output so far). Where records
    /// end is the caller's: perfz's cutter flushes so that every record
    /// holds a block end (src/push/cutter.rs). A window may end mid-block;
    /// the next one continues it.
    ///
    /// The default compresses one whole chunk of at most
    /// `max_input(dst.len())` bytes per call (a chunk is always flushed).
    fn stream(&mut self, input: Input<'_>, dst: &mut [u8], flush: bool) -> Result<Step, Error> {
        let _ = flush;
        let n = self.max_input(dst.len()).min(input.len());
        let (now, _) = input.split_at(n);
        let produced = self.compress(now, dst)?;
        Ok(Step {
            consumed: n,
            produced,
            done: n == input.len(),
        })
    }

    /// Output-driven: every record must hold a block end, because it is
    /// read by perf's decoder, which fails on a record that decodes to
    /// nothing (zstd). A codec only perfz reads (lz4) lets records end
    /// anywhere: its decoder waits for a block's end across records.
    const BLOCK_ENDS_PER_RECORD: bool = true;

    /// Output-driven: the most input the codec may hold with no output yet
    /// decoding to it (for zstd the record cutter's block allowance bounds
    /// this, two records' payload), which bounds what a record decodes to.
    const MAX_HELD: usize = 2 * MAX_RECORD_PAYLOAD;

    /// The level recorded in HEADER_COMPRESSED.level (0 for codecs without one).
    fn level(&self) -> i32 {
        0
    }

    /// The flush ending the next push also ends the stream's frame, so what
    /// follows decodes without what came before (a flight-recorder segment
    /// may be dropped) while one decoder still reads both in order. Codecs
    /// whose chunks are independent have nothing to do.
    fn end_frame_at_flush(&mut self) {}

    /// Starts a new stream: the next chunk decodes without anything written
    /// before it (a new output file, `--switch-output`). Codecs whose chunks
    /// are independent already have nothing to do.
    fn restart(&mut self) -> Result<(), Error> {
        Ok(())
    }

    /// Whether the codec copies its input into a buffer of its own before
    /// compressing (zstd's streaming API fills its window this way: one more
    /// copy of every byte, done by libzstd, not by perfz; filling record
    /// windows smaller than a worst-case block, it also stages its output
    /// and copies it out: + the compressed size). Declared here, measured by
    /// tests/dhat_copies.rs.
    const COPIES_INPUT: bool = false;
}

/// The inverse of a [`Codec`]: decodes the chunks it wrote, in order.
pub trait Decoder {
    /// Decodes `src` (the payload of one compressed record) and appends the result
    /// to `dst`, returning the number of bytes appended.
    ///
    /// `dst` grows by at most `limit` bytes: if the payload would decode to more,
    /// the call fails with [`Error::OutputLimit`]. Streaming decoders (zstd) may
    /// legitimately return 0 when `src` holds only part of a block. Corrupt or
    /// truncated input is an error, never a panic.
    fn decompress(&mut self, src: &[u8], dst: &mut Vec<u8>, limit: usize) -> Result<usize, Error>;
}
