//! What an export writes: the samples gathered by format ([`gather`]) into
//! stackcollapse-perf's folded lines and their flame graph ([`folded`],
//! over distinct [`stacks`] and [`tidy`] names), pprof profiles ([`pprof`],
//! [`pprof_proto`]), speedscope files ([`speedscope`]); two recordings'
//! difference ([`diff`], [`pprof_diff`]); and `perfz report`'s own table
//! ([`report`]).

pub mod diff;
pub mod folded;
pub mod gather;
pub mod pprof;
pub mod pprof_diff;
pub mod pprof_proto;
pub mod report;
pub mod speedscope;
pub mod stacks;
pub mod tidy;
