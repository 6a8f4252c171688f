//! The push path: ring region → codec → the buffer that gets written.
//!
//! `Pusher<C, S, M>` is generic over the codec, the sink and the copy meter;
//! the session picks all three once and from there every push is
//! monomorphized. Nothing in this module may use `dyn` (tests/it/no_dyn.rs).
//!
//! One pass of a drain unit (`unit.rs`), once one of its rings holds enough,
//! over every ring that holds data:
//!
//! ```text
//! Ring::head() (Acquire), Ring::region(head): [tail, head) read in place,
//!   one slice or two where it wraps, never copied; taken in pieces of whole
//!   records (up to the first record end at or past HAND_BACK_PIECE, 64 KiB):
//!   StackCut::edits, OffCpu::take   transforms: edits, the ring never written
//!   Pusher::push_edited(piece, edits)
//!     none:           Sink::write_raw_edited (serial: writev of the ring's
//!                     slices and the replacements, 0 copies; async: 1 memcpy)
//!     output-driven:  Compressor::feed per slice (for_each_slice), then
//!     (zstd stream,   Compressor::end: records cut by output (cutter.rs),
//!      lz4)           held across pushes, flushed within 100 ms
//!     otherwise:      Compressor::push_into: records of at most max_input,
//!     (snappy,        built in Sink::record_buf (an edited piece is first
//!      zstd oneshot)  gathered: one copy of the kept bytes)
//!     Sink::end_push  async: its buffer submitted once half full
//!   Ring::consume(piece end) (Release): the kernel may reuse the space
//!     while the rest of the region is still being pushed
//! then the off-CPU samples the pass made; FINISHED_ROUND if it wrote
//! ```
//!
//! The write side is three traits and one type
//! (tests/it/code_shape.rs `the_write_side_is_at_most_three_traits`):
//! [`Output`], where a unit's records end up and that place's life (a file,
//! a pipe, a `data.N` stream, the flight recorder's [`Segments`]; each
//! checkpoint, finish and salvage a match arm); [`Sink`], what the pusher
//! writes into and how that reaches the output (it lends the output settled
//! for a copy and hands it back at a switch or the end, since it may hold
//! writes the output has not seen: [`HandedBack`]); `records::Records`,
//! the buffer the compressor cuts records into; and [`unit::Unit`], the
//! object-safe unit the session holds behind a box, whose one lifecycle
//! call is `hand_over`. The async sink's backend is an enum
//! ([`Backend`]), chosen once, not a trait.

pub(crate) mod aio;
pub mod compressor;
pub(crate) mod cutter;
mod handed;
pub(crate) mod lent;
pub(crate) mod meter;
pub(crate) mod output;
mod pusher;
pub(crate) mod records;
mod report;
pub(crate) mod segments;
pub(crate) mod sink;
pub(crate) mod unit;

pub use aio::{AsyncSink, Backend, ThreadBackend, UringBackend};
pub use handed::HandedBack;
pub use meter::{Copies, CopyMeter, Meter, NoMeter};
pub use output::Output;
pub use pusher::Pusher;
pub use report::UnitReport;
pub use segments::Segments;
pub use sink::{SerialSink, Sink};
pub use unit::{CodecUnit, Unit};
