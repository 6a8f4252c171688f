//! The push path: ring region → codec → the buffer that gets written.
//!
//! `Pusher<C, S, M>` is generic over the codec, the sink and the copy meter;
//! the session picks all three once and from there every push is
//! monomorphized. Nothing in this module may use `dyn` (tests/it/no_dyn.rs).

pub mod aio;
pub mod compressor;
pub mod cutter;
pub mod drain;
pub mod lent;
pub mod meter;
pub mod off_cpu;
pub mod output;
mod pusher;
pub mod records;
pub mod sample_layout;
pub mod scan;
pub mod segments;
pub mod sink;
pub mod stack_tail;
pub mod stack_use;

pub use aio::{AsyncSink, Backend, ThreadBackend, UringBackend};
pub use meter::{Copies, CopyMeter, Meter, NoMeter};
pub use output::Output;
pub use pusher::{PushStats, Pusher};
pub use segments::Segments;
pub use sink::{SerialSink, Sink};
pub use stack_tail::StackTail;
