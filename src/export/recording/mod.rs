//! What the recording says, read in the export's first pass and asked
//! about in its second: the events with samples and the ones exported
//! ([`events`]), the side band through time ([`survey`], [`process`]),
//! one process's maps over a stretch of time ([`view`]), and how many of
//! its threads ran at each moment ([`parallelism`], for `--latency`).

pub(crate) mod events;
pub(crate) mod parallelism;
pub(crate) mod process;
pub(crate) mod survey;
pub(crate) mod view;
