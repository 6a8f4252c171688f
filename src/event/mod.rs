//! The kernel side: events (attrs and perf_event_open), the CPUs and threads
//! they watch, and the mmap ring buffers their records land in.

pub mod attr_build;
mod cache;
pub mod cgroup;
pub mod clock;
pub mod cpus;
pub mod error;
pub mod events;
mod fd;
pub mod open;
mod open_error;
pub mod parse;
pub mod pmu;
pub mod ratio;
pub mod ring;
pub mod sys;
pub mod target;
mod terms;
pub mod tracefs;

pub use error::OptionError;
pub use events::{CallGraph, EventSpec, Sampling};
pub use open::{EventSet, OpenError};
pub use ring::Ring;
pub use target::Target;
