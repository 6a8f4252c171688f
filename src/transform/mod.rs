//! Record transforms: each reads a ring region and describes changes to it
//! as [`Edit`]s over the region's byte offsets, never writing the ring; the
//! push path consumes (region, edits). The stack cut drops the unwritten
//! bytes of dwarf samples ([`stack_cut`]); `--off-cpu` takes its switch
//! records out and makes off-CPU samples of the waits ([`off_cpu`]); the
//! scan walks the records once for counts, sample times and what the
//! build-id pass needs ([`scan`]); an MMAP2 the kernel marked with a build
//! id it does not hold goes out unmarked ([`build_id_leak`]).

pub mod build_id_leak;
pub mod edit;
pub mod off_cpu;
pub mod sample_filter;
pub mod sample_layout;
pub mod scan;
pub mod stack_cut;
pub mod stack_use;

pub use edit::{for_each_slice, Edit};
pub use stack_cut::StackCut;
