//! Which addresses a file's call frame information covers, and the frame
//! pointer step taken where it covers none. framehop unwinds a leaf whose
//! address no FDE covers (a V8 builtin in node's embedded blob, hand-written
//! assembly) as if it were at its first instruction (return address at sp);
//! perf's unwinders (libdw's x86_64_unwind, libunwind) walk the frame
//! pointer there, as they do for every frame without CFI. So does the
//! export: the leaf's caller is read from `[rbp + 8]`.

use gimli::{BaseAddresses, CieOrFde, EhFrame, LittleEndian, UnwindSection};

/// How a sample's leaf frame is left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Leaf {
    /// By the file's call frame information (framehop).
    Cfi,
    /// By the frame pointer: no FDE covers it.
    FramePointer,
    /// As a PLT stub no FDE covers: the CFA is sp plus this.
    Plt(u64),
}

/// The address ranges (the file's own addresses, SVMA) its FDEs cover, sorted.
#[derive(Default)]
pub(crate) struct CfiCover(Vec<(u64, u64)>);

impl CfiCover {
    /// The ranges of `eh_frame` (its bytes and address) and `debug_frame`.
    pub(crate) fn of(eh_frame: Option<(&[u8], u64)>, debug_frame: Option<&[u8]>) -> CfiCover {
        let mut ranges = Vec::new();
        if let Some((bytes, svma)) = eh_frame {
            let bases = BaseAddresses::default().set_eh_frame(svma);
            let mut s = EhFrame::new(bytes, LittleEndian);
            s.set_address_size(8);
            fdes(&s, &bases, &mut ranges);
        }
        if let Some(bytes) = debug_frame {
            let mut s = gimli::DebugFrame::new(bytes, LittleEndian);
            s.set_address_size(8);
            fdes(&s, &BaseAddresses::default(), &mut ranges);
        }
        ranges.sort_unstable();
        CfiCover(ranges)
    }

    /// Whether an FDE covers `svma`.
    pub(crate) fn covers(&self, svma: u64) -> bool {
        let i = self.0.partition_point(|&(start, _)| start <= svma);
        self.0[..i].iter().rev().take(8).any(|&(_, end)| svma < end)
    }
}

/// Every FDE's range in `s` (up to the first entry that does not parse).
fn fdes<'a, S: UnwindSection<gimli::EndianSlice<'a, LittleEndian>>>(
    s: &S,
    bases: &BaseAddresses,
    out: &mut Vec<(u64, u64)>,
) where
    S::Offset: gimli::UnwindOffset<usize>,
{
    let mut entries = s.entries(bases);
    while let Ok(Some(entry)) = entries.next() {
        if let CieOrFde::Fde(partial) = entry {
            if let Ok(fde) = partial.parse(|s, b, o| s.cie_from_offset(b, o)) {
                let start = fde.initial_address();
                out.push((start, start.saturating_add(fde.len())));
            }
        }
    }
}

/// One frame-pointer step, as libdw's x86_64_unwind takes it: the caller's
/// return address at `[bp + 8]`, its bp at `[bp]`, its sp `bp + 16`. None
/// where bp is 0 or does not move up the stack, or the words are not in the copy.
pub(crate) fn frame_pointer_step(
    sp: u64,
    bp: u64,
    read: &mut impl FnMut(u64) -> Result<u64, ()>,
) -> Option<(u64, u64, u64)> {
    let new_sp = bp.checked_add(16).filter(|&s| bp != 0 && s > sp)?;
    let ra = read(bp + 8).ok()?;
    let new_bp = read(bp).ok()?;
    Some((ra, new_sp, new_bp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covers_within_ranges_only() {
        let c = CfiCover(vec![(0x100, 0x180), (0x200, 0x300)]);
        assert!(c.covers(0x100) && c.covers(0x17f) && c.covers(0x2ff));
        assert!(!c.covers(0xff) && !c.covers(0x180) && !c.covers(0x1ff) && !c.covers(0x300));
        assert!(!CfiCover::default().covers(0));
    }

    #[test]
    fn a_frame_pointer_step_reads_the_callers_frame() {
        // Words at 0x1000.. : [0x1020] = caller's bp, [0x1028] = return address.
        let stack = |a: u64| match a {
            0x1020 => Ok(0x1080),
            0x1028 => Ok(0x4005),
            _ => Err(()),
        };
        let mut read = stack;
        assert_eq!(
            frame_pointer_step(0x1000, 0x1020, &mut read),
            Some((0x4005, 0x1030, 0x1080))
        );
        assert_eq!(frame_pointer_step(0x1000, 0, &mut read), None);
        assert_eq!(frame_pointer_step(0x1040, 0x1020, &mut read), None);
        assert_eq!(frame_pointer_step(0x1000, 0x2000, &mut read), None);
    }
}
