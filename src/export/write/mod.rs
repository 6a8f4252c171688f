//! What an export writes: the samples gathered by format ([`gather`]) into
//! stackcollapse-perf's folded lines and their flame graph ([`folded`],
//! over distinct [`stacks`] and [`tidy`] names), pprof profiles ([`pprof`],
//! [`pprof_proto`]), speedscope files ([`speedscope`]), OpenTelemetry profiles ([`otlp`]); two recordings'
//! difference ([`diff`], [`pprof_diff`]); and `perfz report`'s own table
//! ([`report`]).

pub(crate) mod diff;
pub(crate) mod folded;
pub(crate) mod gather;
pub(crate) mod otlp;
pub(crate) mod pprof;
pub(crate) mod pprof_diff;
pub(crate) mod pprof_proto;
pub(crate) mod report;
pub(crate) mod sampled;
pub(crate) mod speedscope;
pub(crate) mod stacks;
pub(crate) mod tidy;
