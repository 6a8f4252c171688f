//! User stacks of dwarf recordings, unwound from each sample's registers
//! and stack copy by the files' call frame information ([`dwarf`]), and by
//! the frame pointer where that information covers no address
//! ([`cfi_cover`]) but in PLT stubs ([`plt`]); each mapped file's unwind
//! sections read once ([`image`]).

pub(crate) mod cfi_cover;
pub(crate) mod dwarf;
pub(crate) mod image;
pub(crate) mod plt;
