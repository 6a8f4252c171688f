//! Names for a sample's addresses, as `perf script` prints them: each
//! distinct frame named once ([`frames`]) from the files' symbol tables
//! ([`symbols`], [`table`], [`plt`]), DWARF's inline frames ([`inline`]),
//! the kernel's symbols ([`kallsyms`]), a JIT's maps and dumps ([`jit`],
//! [`jitdump`]), demangled ([`demangle`]); and which files left frames
//! without a name ([`unnamed`]).

pub(crate) mod demangle;
pub(crate) mod frames;
pub(crate) mod inline;
pub(crate) mod jit;
pub(crate) mod jitdump;
pub(crate) mod kallsyms;
mod kallsyms_cache;
pub(crate) mod plt;
pub(crate) mod symbols;
pub(crate) mod table;
pub(crate) mod unnamed;
