//! perfz: a Linux event recorder that writes compressed perf.data files.
//!
//! The data flow shows in the module tree: `event` (kernel side) → `push`
//! (ring → codec → sink) → `format` (perf.data). See docs/ARCHITECTURE.md.

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod advice;
pub mod cli;
pub mod convert;
pub mod eval;
pub mod event;
pub mod export;

pub use perfz_codecs as codecs;
pub mod format;
pub mod push;
pub mod recover;
pub mod replay;
pub mod session;
pub mod stats;
pub mod synth;
pub mod units;
