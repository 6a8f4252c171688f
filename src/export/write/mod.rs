//! What an export writes: each format behind one seam ([`format`]: what
//! a format gathers of each sample and writes at the end), one file each:
//! stackcollapse-perf's folded lines ([`folded`], over distinct [`stacks`]
//! and [`tidy`] names) and their flame graph ([`svg`]), pprof profiles
//! ([`pprof`], [`pprof_proto`]), speedscope files ([`speedscope`]),
//! OpenTelemetry profiles ([`otlp`]); two recordings' difference
//! ([`diff`], [`pprof_diff`]); and `perfz report`'s own table
//! ([`report`]).

pub(crate) mod diff;
pub(crate) mod fold;
pub(crate) mod folded;
pub(crate) mod format;
pub(crate) mod otlp;
pub(crate) mod pprof;
pub(crate) mod pprof_diff;
pub(crate) mod pprof_proto;
pub(crate) mod report;
pub(crate) mod sampled;
pub(crate) mod speedscope;
pub(crate) mod stacks;
pub(crate) mod svg;
pub(crate) mod tidy;
