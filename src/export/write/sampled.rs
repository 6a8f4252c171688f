//! One sample as the export's second pass hands it to what gathers it
//! (folded lines, a pprof profile, a speedscope file): whose it is, its
//! stack, and what it weighs.

use std::sync::Arc;

/// A sample, its frames already interned in the export's frame table.
pub(crate) struct Sampled<'a> {
    /// Its thread's name at its time.
    pub(crate) comm: &'a Arc<str>,
    /// Its process.
    pub(crate) pid: u32,
    /// Its process's name (its main thread's) where the format asks for
    /// it, else its thread's.
    pub(crate) process: &'a Arc<str>,
    /// Its thread.
    pub(crate) tid: u32,
    /// Its stack: ids of the export's frame table, leaf first.
    pub(crate) ids: &'a [u32],
    /// Which of the exported events it is a sample of.
    pub(crate) slot: usize,
    /// When it was taken (`u64::MAX` where the recording has no times).
    pub(crate) time: u64,
    /// Its period (or latency weight), where it has one.
    pub(crate) period: Option<u64>,
}
