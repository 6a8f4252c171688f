//! Where the user-stack dump sits in a SAMPLE of one event.
//!
//! A sample's fields follow its attr's `sample_type` in the kernel's order
//! (`perf_output_sample`); most are fixed 8-byte words, a few carry their own
//! length: READ (`read_format`, with a count for groups), CALLCHAIN (`nr`),
//! RAW (a `u32` size), BRANCH_STACK (`nr`, `hw_idx` where the attr asks for
//! it, entries and branch counters), REGS_USER (an ABI word, then registers
//! unless it is 0), STACK_USER (`size`, the dump, `dyn_size` unless size is
//! 0), REGS_INTR and AUX after it. [`Layout::stack`] steps over each field by
//! its own size and accepts a sample only if the fields end exactly where the
//! record does: a sample of another layout, or a damaged one, is left alone.
//!
//! All arithmetic is checked: counts and sizes come from the ring (or from a
//! file) and may be anything.

use perfz_codecs::Input;

use crate::format::attr::{read_format as rf, sample_type as st, Attr};
use crate::format::record::RecordHeader;

/// `branch_sample_type` bit: BRANCH_STACK carries `hw_idx` after `nr`.
const BRANCH_HW_INDEX: u64 = 1 << 17;
/// `branch_sample_type` bit (Linux 6.8): a counter word per branch entry
/// follows the entries.
const BRANCH_COUNTERS: u64 = 1 << 19;
/// Every `sample_type` bit this walker knows (up to WEIGHT_STRUCT, 1 << 24).
const KNOWN: u64 = (1 << 25) - 1;
/// Bytes of one branch entry (from, to, flags).
const BRANCH_ENTRY: u64 = 24;

/// How the fields of one event's samples are laid out, as far as the stack
/// dump and past it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Bytes of the fixed words before READ (IDENTIFIER .. PERIOD).
    fixed_before: u64,
    read: Option<ReadLayout>,
    callchain: bool,
    raw: bool,
    /// BRANCH_STACK: `(hw_idx, counters)`.
    branch: Option<(bool, bool)>,
    /// REGS_USER: the registers written when the ABI word is not 0.
    regs_user: Option<u64>,
    /// Bytes of the fixed words between the stack and REGS_INTR.
    fixed_mid: u64,
    /// REGS_INTR: the registers written when the ABI word is not 0.
    regs_intr: Option<u64>,
    /// Bytes of the fixed words after REGS_INTR.
    fixed_after: u64,
    aux: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ReadLayout {
    group: bool,
    /// Words per value: the value, its id, its lost count.
    per_value: u64,
    /// Time words (enabled, running).
    times: u64,
}

/// Where one sample keeps its stack dump, in offsets of the region walked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StackAt {
    /// The stack `size` word; the dump starts 8 bytes after it.
    pub size_field: usize,
    /// Bytes reserved for the dump (`size`).
    pub size: u64,
    /// Bytes of it the kernel wrote (`dyn_size`; 0 when `size` is 0).
    pub dyn_size: u64,
}

/// Why an event's samples cannot be cut.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Uncut {
    /// `sample_type` (the value) has bits whose fields perfz cannot lay out.
    #[error("its samples carry fields perfz does not know (sample_type {0:#x})")]
    UnknownFields(u64),
    /// The events' sample layouts differ and samples carry no id at one place
    /// (neither PERF_SAMPLE_IDENTIFIER nor PERF_SAMPLE_ID at a common offset).
    #[error(
        "its events lay out their samples differently and the samples do not say \
         which event they belong to (no PERF_SAMPLE_IDENTIFIER, no PERF_SAMPLE_ID at one place)"
    )]
    NoId,
}

impl Layout {
    /// The layout of `attr`'s samples; `Ok(None)` where they have no user
    /// stack (nothing to cut).
    pub fn for_attr(attr: &Attr) -> Result<Option<Layout>, Uncut> {
        let t = attr.sample_type();
        if t & st::STACK_USER == 0 {
            return Ok(None);
        }
        if t & !KNOWN != 0 {
            return Err(Uncut::UnknownFields(t));
        }
        let words = |bits: &[u64]| bits.iter().filter(|&&b| t & b != 0).count() as u64 * 8;
        let f = attr.read_format();
        Ok(Some(Layout {
            fixed_before: words(&crate::format::sample::FIXED_WORDS),
            read: (t & st::READ != 0).then(|| ReadLayout {
                group: f & rf::GROUP != 0,
                per_value: 1 + (f & rf::ID != 0) as u64 + (f & rf::LOST != 0) as u64,
                times: (f & rf::TOTAL_TIME_ENABLED != 0) as u64
                    + (f & rf::TOTAL_TIME_RUNNING != 0) as u64,
            }),
            callchain: t & st::CALLCHAIN != 0,
            raw: t & st::RAW != 0,
            branch: (t & st::BRANCH_STACK != 0).then(|| {
                let b = attr.branch_sample_type();
                (b & BRANCH_HW_INDEX != 0, b & BRANCH_COUNTERS != 0)
            }),
            regs_user: (t & st::REGS_USER != 0)
                .then(|| attr.sample_regs_user().count_ones() as u64),
            // WEIGHT and WEIGHT_STRUCT share one word.
            fixed_mid: words(&[
                st::WEIGHT | st::WEIGHT_STRUCT,
                st::DATA_SRC,
                st::TRANSACTION,
            ]),
            regs_intr: (t & st::REGS_INTR != 0)
                .then(|| attr.sample_regs_intr().count_ones() as u64),
            fixed_after: words(&[
                st::PHYS_ADDR,
                st::CGROUP,
                st::DATA_PAGE_SIZE,
                st::CODE_PAGE_SIZE,
            ]),
            aux: t & st::AUX != 0,
        }))
    }

    /// Where the sample of `size` bytes at `at` in `r` keeps its stack, or
    /// `None` if its fields do not end exactly at the record's end.
    pub fn stack(&self, r: Input<'_>, at: usize, size: usize) -> Option<StackAt> {
        let end = at.checked_add(size).filter(|&e| e <= r.len())?;
        let mut w = Walk {
            r,
            p: at.checked_add(RecordHeader::SIZE)?,
            end,
        };
        w.skip(self.fixed_before)?;
        if let Some(rl) = self.read {
            if rl.group {
                let nr = w.u64()?;
                w.skip(rl.times.checked_mul(8)?)?;
                w.skip(nr.checked_mul(rl.per_value)?.checked_mul(8)?)?;
            } else {
                w.skip((rl.per_value + rl.times) * 8)?;
            }
        }
        if self.callchain {
            let nr = w.u64()?;
            w.skip(nr.checked_mul(8)?)?;
        }
        if self.raw {
            let n = w.u64()? & 0xffff_ffff;
            // The u32 size, then its bytes: the size word was read whole.
            w.p -= 4;
            w.skip(n)?;
        }
        match self.branch {
            None => self.regs_onward(w),
            Some((hw_idx, counters)) => {
                let nr = w.u64()?;
                let entries = |w: &mut Walk<'_>, hw: bool| -> Option<()> {
                    if hw {
                        w.skip(8)?;
                    }
                    w.skip(nr.checked_mul(BRANCH_ENTRY)?)?;
                    if counters {
                        w.skip(nr.checked_mul(8)?)?;
                    }
                    Some(())
                };
                let mut with = w;
                let first = entries(&mut with, hw_idx).and_then(|_| self.regs_onward(with));
                if !(hw_idx && nr == 0) {
                    return first;
                }
                // With no branch stack at all the kernel writes `nr` = 0
                // and no hw_idx: try the layout without it too. Where both
                // parse and disagree, the sample is left whole.
                match (first, self.regs_onward(w)) {
                    (Some(a), Some(b)) => (a == b).then_some(a),
                    (a, b) => a.or(b),
                }
            }
        }
    }

    /// The rest of a sample from REGS_USER on.
    fn regs_onward(&self, mut w: Walk<'_>) -> Option<StackAt> {
        if let Some(n) = self.regs_user {
            if w.u64()? != 0 {
                w.skip(n * 8)?;
            }
        }
        let size_field = w.p;
        let size = w.u64()?;
        let dyn_size = if size == 0 {
            0
        } else {
            w.skip(size)?;
            let d = w.u64()?;
            if d > size || size % 8 != 0 {
                return None;
            }
            d
        };
        w.skip(self.fixed_mid)?;
        if let Some(n) = self.regs_intr {
            if w.u64()? != 0 {
                w.skip(n * 8)?;
            }
        }
        w.skip(self.fixed_after)?;
        if self.aux {
            let n = w.u64()?;
            w.skip(n)?;
        }
        (w.p == w.end).then_some(StackAt {
            size_field,
            size,
            dyn_size,
        })
    }
}

/// A bounds-checked cursor over one record of a region.
#[derive(Clone, Copy)]
struct Walk<'a> {
    r: Input<'a>,
    p: usize,
    end: usize,
}

impl Walk<'_> {
    fn skip(&mut self, n: u64) -> Option<()> {
        let n = usize::try_from(n).ok()?;
        self.p = self.p.checked_add(n).filter(|&p| p <= self.end)?;
        Some(())
    }

    fn u64(&mut self) -> Option<u64> {
        let at = self.p;
        self.skip(8)?;
        Some(u64::from_le_bytes(self.r.read8(at)))
    }
}
