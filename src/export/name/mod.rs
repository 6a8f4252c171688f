//! Names for a sample's addresses, as `perf script` prints them: each
//! distinct frame named once ([`frames`]) from the files' symbol tables
//! ([`symbols`], [`table`], [`plt`]), DWARF's inline frames ([`inline`]),
//! the kernel's symbols ([`kallsyms`]), a JIT's maps and dumps ([`jit`],
//! [`jitdump`]), demangled ([`demangle`]); and which files left frames
//! without a name ([`unnamed`]).

pub mod demangle;
pub mod frames;
pub mod inline;
pub mod jit;
pub mod jitdump;
pub mod kallsyms;
mod kallsyms_cache;
pub mod plt;
pub mod symbols;
pub mod table;
pub mod unnamed;
