//! How a leaf in a PLT stub that no FDE covers is left. LLD writes no CFI
//! for `.plt`, `.plt.sec` or `.plt.got` (GNU ld does), so a sample in
//! `f@plt` of an LLD-linked binary stopped there, where perf's libunwind
//! unwinder steps through it (its `is_plt_entry`: CFA = sp + 8). A stub has
//! not moved the stack but for the lazy `.plt`'s pushes, which this steps
//! over as GNU ld's own CFI for the same code does: in the first entry
//! (PLT0) the CFA is sp + 16, sp + 24 after its push (6 bytes in); in each
//! later 16-byte entry sp + 8, sp + 16 after its `push $n` (11 bytes in).
//! Beside a `.plt.sec` (IBT: each `.plt` entry starts with `endbr64`), as
//! LLD lays them out, PLT0's push ends 10 bytes in and an entry's 9.

use std::ops::Range;

use object::{Object, ObjectSection};

/// A file's PLT sections (their own addresses, SVMA).
#[derive(Default)]
pub(crate) struct Plt {
    /// The lazy `.plt`: PLT0, then 16-byte entries that push their index.
    lazy: Option<Range<u64>>,
    /// `.plt.sec`, `.plt.got`: entries that only jump.
    jumps: Vec<Range<u64>>,
    /// Where the pushes of PLT0 and of an entry end, from their start.
    pushed_at: (u64, u64),
}

impl Plt {
    /// The PLT sections of `file`.
    pub(crate) fn of(file: &object::File<'_>) -> Plt {
        let range = |name: &str| {
            let s = file.section_by_name(name)?;
            Some(s.address()..s.address().checked_add(s.size())?)
        };
        let ibt = file.section_by_name(".plt.sec").is_some();
        Plt {
            lazy: range(".plt"),
            pushed_at: if ibt { (10, 9) } else { (6, 11) },
            jumps: [".plt.sec", ".plt.got"]
                .into_iter()
                .filter_map(range)
                .collect(),
        }
    }

    /// Where `svma` is in a PLT stub: the CFA's offset from sp there (the
    /// return address is the word just below the CFA).
    pub(crate) fn cfa_offset(&self, svma: u64) -> Option<u64> {
        if self.jumps.iter().any(|r| r.contains(&svma)) {
            return Some(8);
        }
        let lazy = self.lazy.as_ref().filter(|r| r.contains(&svma))?;
        let off = svma - lazy.start;
        let (plt0, entry) = self.pushed_at;
        let pushed = if off < 16 {
            8 + u64::from(off >= plt0) * 8
        } else {
            u64::from(off % 16 >= entry) * 8
        };
        Some(8 + pushed)
    }
}

/// The leaf's caller in a PLT stub whose CFA is `sp + cfa`: its return
/// address and sp. None where the word is not in the stack copy.
pub(crate) fn plt_step(
    sp: u64,
    cfa: u64,
    read: &mut impl FnMut(u64) -> Result<u64, ()>,
) -> Option<(u64, u64)> {
    let new_sp = sp.checked_add(cfa)?;
    Some((read(new_sp - 8).ok()?, new_sp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cfa_offsets_follow_the_stubs_pushes() {
        let plt = Plt {
            lazy: Some(0x1000..0x1040),
            jumps: vec![0x2000..0x2010, 0x3000..0x3010],
            pushed_at: (6, 11),
        };
        // PLT0: the entry's push, then its own.
        assert_eq!(plt.cfa_offset(0x1000), Some(16));
        assert_eq!(plt.cfa_offset(0x1006), Some(24));
        // An entry: jmp *GOT at 0, push $n at 6, jmp PLT0 at 11.
        assert_eq!(plt.cfa_offset(0x1010), Some(8));
        assert_eq!(plt.cfa_offset(0x1016), Some(8));
        assert_eq!(plt.cfa_offset(0x101b), Some(16));
        assert_eq!(plt.cfa_offset(0x1030), Some(8));
        assert_eq!(plt.cfa_offset(0x2008), Some(8));
        assert_eq!(plt.cfa_offset(0x3000), Some(8));
        assert_eq!(plt.cfa_offset(0x1040), None);
        assert_eq!(plt.cfa_offset(0xfff), None);
        assert_eq!(Plt::default().cfa_offset(0x1000), None);
        // LLD's IBT layout: endbr64 first.
        let ibt = Plt {
            pushed_at: (10, 9),
            ..plt
        };
        assert_eq!(ibt.cfa_offset(0x1009), Some(16));
        assert_eq!(ibt.cfa_offset(0x100a), Some(24));
        assert_eq!(ibt.cfa_offset(0x1018), Some(8));
        assert_eq!(ibt.cfa_offset(0x1019), Some(16));
    }

    #[test]
    fn a_plt_step_reads_the_return_address_below_the_cfa() {
        let mut read = |a: u64| if a == 0x1008 { Ok(0x4005) } else { Err(()) };
        assert_eq!(plt_step(0x1000, 16, &mut read), Some((0x4005, 0x1010)));
        assert_eq!(plt_step(0x1000, 8, &mut read), None);
        assert_eq!(plt_step(u64::MAX, 8, &mut read), None);
    }
}
