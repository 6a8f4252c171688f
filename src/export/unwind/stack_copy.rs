//! A sample's copy of its user stack, as the unwinders read it, and
//! whether an unwinding ended because the copy did.

use crate::export::recording::view::View;
use crate::format::endian::Endian;

/// A sample's copy of its user stack, from `sp` up, read a word at a
/// time.
pub(crate) struct StackCopy<'u> {
    stack: &'u [u8],
    endian: Endian,
    sp: u64,
    /// Whether a read fell outside the copy: below sp, or past the bytes
    /// the kernel copied, where perf's unwinder (libunwind's access_mem:
    /// `addr + 8 >= end`) counts the copy's last word too.
    outside: std::cell::Cell<bool>,
}

impl StackCopy<'_> {
    /// The copy `stack` (of `endian` words) of the stack from `sp` up.
    pub(crate) fn new(stack: &[u8], endian: Endian, sp: u64) -> StackCopy<'_> {
        StackCopy {
            stack,
            endian,
            sp,
            outside: std::cell::Cell::new(false),
        }
    }

    /// Whether a read fell outside the copy.
    pub(crate) fn outside(&self) -> bool {
        self.outside.get()
    }

    /// The word at `addr`.
    pub(crate) fn read(&self, addr: u64) -> Result<u64, ()> {
        let word = addr
            .checked_sub(self.sp)
            .and_then(|off| usize::try_from(off).ok())
            .filter(|&off| off.saturating_add(8) < self.stack.len())
            .and_then(|off| self.stack.get(off..off + 8));
        match word {
            Some(b) => Ok(self.endian.u64(b.try_into().map_err(|_| ())?)),
            None => {
                self.outside.set(true);
                Err(())
            }
        }
    }
}

/// Whether an unwinding that found no caller of the frame at `at` ended because the
/// stack copy did (`outside`: a read fell outside it): perf's unwinder
/// reads a 0 there and ends with an unknown frame (`[unknown]` at the root
/// of perf script | collapse). Not where the step left JIT code by its
/// frame pointer (framehop's guess where no module is): perf's unwinder
/// stops at JIT code, and a frame pointer that leads off the copy there
/// (CPython's -X perf trampolines in an interpreter built without them)
/// is no sign of a cut.
pub(crate) fn cut_short(view: &View<'_>, at: u64, outside: bool) -> bool {
    let jit = view
        .find(at)
        .is_none_or(|m| crate::export::name::jit::is_anon(&m.path));
    outside && !jit
}
