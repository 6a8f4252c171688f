//! The push path: ring region → codec → the buffer that gets written.
//!
//! `Pusher<C, S>` is generic over the codec and the sink; the session picks
//! both once (`CodecSpec::visit`) and from there every push is monomorphized.
//! Nothing in this module may use `dyn` (tests/no_dyn.rs checks).

mod pusher;
pub mod scan;
pub mod sink;

pub use pusher::{PushStats, Pusher};
pub use sink::{SerialSink, Sink};
