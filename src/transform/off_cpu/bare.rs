//! A sample of the off-CPU event with no stack: what a wait that no
//! switch-out sample began (a thread off CPU from the start) is written
//! as. Its fields are laid out as the kernel lays out the event's
//! (`sample_type`), with nothing in them but the thread, the id and an ip
//! of 0; its time and period are set where it is written.

use crate::format::attr::sample_type as st;
use crate::format::sample::FIXED_WORDS;

/// The fields a sample of `sample_type` holds after the fixed words
/// ([`FIXED_WORDS`]), in the kernel's order; here each is a word of 0: an
/// empty callchain, no registers, no stack.
const AFTER_FIXED: [u64; 12] = [
    st::CALLCHAIN,
    st::REGS_USER,
    st::STACK_USER,
    st::WEIGHT,
    st::DATA_SRC,
    st::TRANSACTION,
    st::REGS_INTR,
    st::PHYS_ADDR,
    st::CGROUP,
    st::DATA_PAGE_SIZE,
    st::CODE_PAGE_SIZE,
    st::WEIGHT_STRUCT,
];

/// Fields a made-up sample cannot hold (their size is the attr's, or the
/// data's): None with any of them.
const UNSUPPORTED: u64 = st::READ | st::RAW | st::BRANCH_STACK | st::AUX;

/// A SAMPLE record of `sample_type` for thread `(pid, tid)` stamped with
/// event `id`, time and period 0; None where the layout has a field of a
/// size only the kernel knows.
pub(super) fn bare_sample(sample_type: u64, id: u64, pid: u32, tid: u32) -> Option<Vec<u8>> {
    if sample_type & UNSUPPORTED != 0 {
        return None;
    }
    let mut s = vec![9u8, 0, 0, 0];
    // PERF_RECORD_MISC_USER: a user ip of 0, as a stackless sample's.
    s.extend_from_slice(&2u16.to_le_bytes());
    s.extend_from_slice(&0u16.to_le_bytes());
    // WEIGHT and WEIGHT_STRUCT are one field (the struct wins).
    let weight = sample_type & st::WEIGHT_STRUCT != 0;
    let order = FIXED_WORDS.iter().chain(&AFTER_FIXED);
    for &bit in order.filter(|&&b| sample_type & b != 0) {
        let w = match bit {
            st::IDENTIFIER | st::ID | st::STREAM_ID => id,
            st::TID => u64::from(tid) << 32 | u64::from(pid),
            st::WEIGHT if weight => continue,
            // Callchain nr, registers' abi (none), stack size: 0.
            _ => 0,
        };
        s.extend_from_slice(&w.to_le_bytes());
    }
    let size = u16::try_from(s.len()).ok()?;
    s[6..8].copy_from_slice(&size.to_le_bytes());
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::attr::Attr;
    use crate::format::endian::Endian;
    use crate::format::sample::Sample;

    #[test]
    fn a_bare_sample_parses_as_its_layout() {
        let t = st::IDENTIFIER
            | st::IP
            | st::TID
            | st::TIME
            | st::CPU
            | st::PERIOD
            | st::CALLCHAIN
            | st::REGS_USER
            | st::STACK_USER;
        let s = bare_sample(t, 42, 100, 101).unwrap();
        let mut attr = Attr::default();
        attr.set_u64(24, t);
        let p = Sample::parse(&s[8..], &attr, Endian::Little, 0).unwrap();
        assert_eq!(
            (p.id, p.pid, p.tid, p.ip),
            (Some(42), Some(100), Some(101), Some(0))
        );
        assert!(p.callchain.is_empty() && p.user_stack_size == 0);
        assert_eq!(p.trailing, 0);
        assert!(bare_sample(t | st::READ, 42, 1, 1).is_none());
    }
}
