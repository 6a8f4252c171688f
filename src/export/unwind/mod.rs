//! User stacks of dwarf recordings, unwound from each sample's registers
//! and stack copy by the files' call frame information ([`dwarf`]), and by
//! the frame pointer where that information covers no address
//! ([`cfi_cover`]) but in PLT stubs ([`plt`]); with every register where a
//! frame keeps its CFA in one framehop does not track ([`all_regs`]); each
//! mapped file's unwind sections read once ([`image`]); the stack copy
//! read a word at a time ([`stack_copy`]).

pub(crate) mod all_regs;
pub(crate) mod cfi_cover;
pub(crate) mod dwarf;
pub(crate) mod image;
pub(crate) mod plt;
pub(crate) mod stack_copy;
