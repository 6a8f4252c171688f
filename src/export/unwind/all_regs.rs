//! The frames framehop cannot step out of: those whose canonical frame
//! address is kept in a register other than rsp or rbp (ld.so's
//! `_dl_runtime_resolve_xsavec` keeps it in rbx while it realigns its
//! stack; so does code built with `-mstackrealign`). framehop tracks rip,
//! rsp and rbp only, and falls back to the frame pointer there, which ends
//! the stack, or skips the frame's caller; perf's unwinders (libdw,
//! libunwind) track every register. Where a stack ends at such a frame, or
//! framehop stepped out of one by the frame pointer, it is unwound again
//! from the leaf with every general register the sample recorded, each
//! frame by its CFI row as DWARF defines it (gimli), and kept where it gets
//! past that frame (see `Unwind::again_with_all_regs`).

use gimli::{CfaRule, Register, RegisterRule, UnwindTableRow, X86_64};

/// The general registers and the return address, by DWARF number (rax,
/// rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, then the return address:
/// the frame's rip).
pub(crate) type Regs = [Option<u64>; 17];

/// The return address column (rip).
const RA: usize = 16;
const RSP: usize = 7;

/// perf's x86-64 user register number of each DWARF register
/// (arch/x86/include/uapi/asm/perf_regs.h: AX, BX, CX, DX, SI, DI, BP, SP,
/// IP, FLAGS, CS, SS, DS, ES, FS, GS, R8-R15).
const PERF_REG_OF_DWARF: [u32; 17] = [0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8];

/// A sample's registers by DWARF number, from `reg` (by perf's number).
pub(crate) fn from_perf(reg: impl Fn(u32) -> Option<u64>) -> Regs {
    PERF_REG_OF_DWARF.map(reg)
}

/// Whether `row` keeps the CFA where framehop cannot find it: in a
/// register other than rsp or rbp.
pub(crate) fn untracked_cfa(row: &UnwindTableRow<usize>) -> bool {
    match row.cfa() {
        CfaRule::RegisterAndOffset { register, .. } => {
            *register != X86_64::RSP && *register != X86_64::RBP
        }
        CfaRule::Expression(_) => false,
    }
}

/// The user frames from `regs`, leaf first, as `Unwind::frames` gives
/// them: the leaf's ip, then each caller's return address less one.
/// `row_at` gives the CFI row of a lookup address, `holds` whether a
/// mapping holds one, `read` a word of the stack copy. Stops at a frame
/// without a row, at the deepest `most` frames, where the return address
/// is undefined or 0, or where the stack pointer moves down.
pub(crate) fn frames(
    mut regs: Regs,
    most: usize,
    row_at: impl Fn(u64) -> Option<UnwindTableRow<usize>>,
    holds: impl Fn(u64) -> bool,
    read: &mut impl FnMut(u64) -> Result<u64, ()>,
) -> Vec<u64> {
    let Some(ip) = regs[RA] else {
        return Vec::new();
    };
    let mut frames = vec![ip];
    let mut lookup = ip;
    while frames.len() < most {
        let Some(next) = row_at(lookup).and_then(|row| step(&row, &regs, read)) else {
            break;
        };
        let (Some(ra), Some(sp)) = (next[RA], next[RSP]) else {
            break;
        };
        let moved_down = frames.len() > 1 && regs[RSP].is_some_and(|old| sp < old);
        if ra == 0 || moved_down {
            break;
        }
        regs = next;
        lookup = ra - 1;
        if !holds(lookup) {
            break;
        }
        frames.push(lookup);
    }
    frames
}

/// Makes `frames` (framehop's, which meet a frame whose CFA it cannot
/// find at index `at`) the frames found with every register, `again`,
/// where they get past that frame. framehop ends the stack there, or
/// steps out of the frame by its frame pointer, which skips its caller
/// (ld.so's `_dl_runtime_resolve_xsavec`, entered from a PLT stub:
/// `main;noteBottomOfStack;_dl_runtime_resolve_xsavec` came out
/// `main;_dl_runtime_resolve_xsavec`) or goes into the heap. Where
/// `again` ends sooner, framehop's frames go on from the last frame both
/// found (its last such frame: a recursion repeats one); else `cut` says
/// whether `again` ends where the stack copy was cut (an `[unknown]` root,
/// 0, then), and `again` is kept only where it is longer (it stops at a
/// caller without CFI, where framehop goes on by the frame pointer). At
/// most `most` frames.
pub(crate) fn keep(
    frames: &mut Vec<u64>,
    mut again: Vec<u64>,
    at: usize,
    most: usize,
    cut: impl Fn(u64) -> bool,
) {
    if again.len() <= at + 1 {
        return;
    }
    let last = *again.last().unwrap_or(&0);
    if let Some(i) = frames[at + 1..].iter().rposition(|&f| f == last) {
        again.extend_from_slice(&frames[at + 2 + i..]);
    } else {
        if again.len() < most && cut(last) {
            again.push(0);
        }
        if again.len() <= frames.len() {
            return;
        }
    }
    again.truncate(most);
    *frames = again;
}

/// The caller's registers from `regs` by `row`: its rsp is the CFA, each
/// register as its rule says. A register without a rule keeps its value
/// (callee-saved registers the frame did not touch); one whose rule is an
/// expression is unknown. None where the CFA cannot be found.
fn step(
    row: &UnwindTableRow<usize>,
    regs: &Regs,
    read: &mut impl FnMut(u64) -> Result<u64, ()>,
) -> Option<Regs> {
    let CfaRule::RegisterAndOffset { register, offset } = row.cfa() else {
        return None;
    };
    let cfa = regs.get(usize::from(register.0)).copied().flatten()?;
    let cfa = cfa.checked_add_signed(*offset)?;
    let mut next: Regs = [None; 17];
    for (r, slot) in next.iter_mut().enumerate() {
        *slot = match row.register(Register(r as u16)) {
            RegisterRule::Undefined if r == RA => None,
            RegisterRule::Undefined | RegisterRule::SameValue => regs[r],
            RegisterRule::Offset(n) => read(cfa.checked_add_signed(n)?).ok(),
            RegisterRule::ValOffset(n) => cfa.checked_add_signed(n),
            RegisterRule::Register(o) => regs.get(usize::from(o.0)).copied().flatten(),
            _ => None,
        };
    }
    next[RSP] = Some(cfa);
    Some(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_found_with_every_register_are_kept_past_the_frame() {
        let keep_with = |framehop: &[u64], again: &[u64], at: usize| {
            let mut frames = framehop.to_vec();
            keep(&mut frames, again.to_vec(), at, 6, |last| last == 9);
            frames
        };
        // Stepped out of by the frame pointer, the caller (3) skipped.
        assert_eq!(
            keep_with(&[1, 2, 4, 5], &[1, 2, 3, 4, 5], 1),
            [1, 2, 3, 4, 5]
        );
        // Not past the frame: framehop's stay.
        assert_eq!(keep_with(&[1, 2, 4, 5], &[1, 2], 1), [1, 2, 4, 5]);
        // Ending sooner: framehop's go on from the last both found.
        assert_eq!(
            keep_with(&[1, 2, 4, 5, 6], &[1, 2, 3, 4], 1),
            [1, 2, 3, 4, 5, 6]
        );
        // Ending where the copy was cut: an [unknown] root.
        assert_eq!(keep_with(&[1, 2, 7], &[1, 2, 3, 9], 1), [1, 2, 3, 9, 0]);
        // Ending sooner with no frame in common (a caller without CFI):
        // framehop's longer stack stays.
        assert_eq!(keep_with(&[1, 2, 4, 5, 6], &[1, 2, 3], 1), [1, 2, 4, 5, 6]);
        // A recursion: framehop's go on from its last frame in common.
        assert_eq!(
            keep_with(&[1, 2, 8, 8, 8, 5], &[1, 2, 3, 8, 8], 1),
            [1, 2, 3, 8, 8, 5]
        );
        // At most `most`.
        assert_eq!(
            keep_with(&[1, 2, 4, 5, 6, 7, 8], &[1, 2, 3, 4], 1),
            [1, 2, 3, 4, 5, 6]
        );
    }

    #[test]
    fn dwarf_registers_map_to_perfs() {
        // perf's numbers: AX 0, BX 1, CX 2, DX 3, ..., IP 8, R8 16.
        let regs = from_perf(|n| Some(u64::from(n) + 100));
        assert_eq!(regs[0], Some(100)); // rax
        assert_eq!(regs[1], Some(103)); // rdx
        assert_eq!(regs[3], Some(101)); // rbx
        assert_eq!(regs[7], Some(107)); // rsp
        assert_eq!(regs[8], Some(116)); // r8
        assert_eq!(regs[15], Some(123)); // r15
        assert_eq!(regs[RA], Some(108)); // rip
    }
}
