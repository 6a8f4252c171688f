//! Unwritten bytes in dwarf samples, dropped before they are written.
//!
//! A `PERF_SAMPLE_STACK_USER` sample reserves `size` bytes for the user stack
//! (`--call-graph dwarf,SIZE`) but the kernel copies only `dyn_size` of them —
//! the stack above the sampled thread's stack pointer usually ends long
//! before SIZE bytes — and *skips* the rest (`perf_output_skip`): those bytes
//! keep whatever an earlier record left at that place in the ring. Nothing
//! reads them: perf unwinds from the first `dyn_size` bytes. On the repo's
//! dwarf workload they are 94 % of the ring data.
//!
//! [`StackTail::edits`] walks the samples of a ring region and describes,
//! per sample, the same sample with its stack dump cut to
//! `round_up(dyn_size, 8)` bytes (at least 8): the record header and the
//! stack `size` field get new values, the unwritten bytes are skipped. Such a
//! sample is one the kernel itself writes when less stack is available, and
//! perf parses it the same way (it checks only `dyn_size <= size`).
//! [`for_each_piece`] hands the region to a codec or a `writev` as ring
//! slices and the two 8-byte replacements per sample: the ring is never
//! written (its data pages are read-only) and nothing is copied.

use perfz_codecs::Input;

use crate::format::attr::sample_type as st;
use crate::format::record::{RecordHeader, RecordType};

/// Where the user-stack dump sits in a sample of one `sample_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StackTail {
    /// Bytes of fixed-size fields before the callchain.
    fixed_before_callchain: usize,
    callchain: bool,
    /// Registers in `REGS_USER` (popcount of `sample_regs_user`).
    regs_user: usize,
    regs: bool,
}

impl StackTail {
    /// The layout for samples of `sample_type`, or `None` where samples have
    /// no user stack or fields this walker does not parse (READ, RAW,
    /// BRANCH_STACK before the stack): those samples are left alone.
    pub fn for_samples(sample_type: u64, sample_regs_user: u64) -> Option<StackTail> {
        if sample_type & st::STACK_USER == 0
            || sample_type & (st::READ | st::RAW | st::BRANCH_STACK) != 0
        {
            return None;
        }
        let fixed = [
            st::IDENTIFIER,
            st::IP,
            st::TID,
            st::TIME,
            st::ADDR,
            st::ID,
            st::STREAM_ID,
            st::CPU,
            st::PERIOD,
        ]
        .iter()
        .filter(|&&b| sample_type & b != 0)
        .count()
            * 8;
        Some(StackTail {
            fixed_before_callchain: fixed,
            callchain: sample_type & st::CALLCHAIN != 0,
            regs_user: sample_regs_user.count_ones() as usize,
            regs: sample_type & st::REGS_USER != 0,
        })
    }

    /// The layout shared by every event of a recording, or `None` if their
    /// samples differ or have no stack to cut.
    pub fn for_attrs(attrs: &[crate::format::AttrEntry]) -> Option<StackTail> {
        let a = &attrs.first()?.attr;
        let same = attrs.iter().all(|e| {
            e.attr.sample_type() == a.sample_type()
                && e.attr.sample_regs_user() == a.sample_regs_user()
        });
        if same {
            Self::for_samples(a.sample_type(), a.sample_regs_user())
        } else {
            None
        }
    }

    /// Appends the edits that cut every sample of `region` to its written
    /// stack bytes (in order of offset) and returns the bytes they drop. A
    /// record it cannot make sense of ends the walk: nothing past it is
    /// edited.
    pub fn edits(&self, region: Input<'_>, edits: &mut Vec<Edit>) -> u64 {
        let len = region.len();
        let mut at = 0;
        let mut total = 0;
        while at + RecordHeader::SIZE <= len {
            let h = RecordHeader::from_le(region.read8(at));
            let size = h.size as usize;
            if size < RecordHeader::SIZE || at + size > len {
                break;
            }
            if h.type_ == RecordType::SAMPLE {
                match self.unwritten(region, at, size) {
                    Some(Cut { drop: 0, .. }) => {}
                    Some(c) => {
                        let header = RecordHeader {
                            size: (size - c.drop) as u16,
                            ..h
                        };
                        edits.push(Edit::Replace {
                            at,
                            with: header.to_le(),
                        });
                        edits.push(Edit::Replace {
                            at: c.size_field,
                            with: (c.keep as u64).to_le_bytes(),
                        });
                        edits.push(Edit::Skip {
                            at: c.size_field + 8 + c.keep,
                            len: c.drop,
                        });
                        total += c.drop as u64;
                    }
                    None => break,
                }
            }
            at += size;
        }
        total
    }

    /// Where the stack dump of the sample at `at` is cut, or `None` if the
    /// sample does not parse as this layout.
    fn unwritten(&self, r: Input<'_>, at: usize, size: usize) -> Option<Cut> {
        let end = at + size;
        let mut p = at + RecordHeader::SIZE + self.fixed_before_callchain;
        let u64_at = |p: usize| (p + 8 <= end).then(|| u64::from_le_bytes(r.read8(p)));
        if self.callchain {
            let nr = u64_at(p)? as usize;
            p = p.checked_add(8)?.checked_add(nr.checked_mul(8)?)?;
        }
        if self.regs {
            let abi = u64_at(p)?;
            p += 8;
            if abi != 0 {
                p += 8 * self.regs_user;
            }
        }
        let stack_size = u64_at(p)? as usize;
        let size_field = p;
        if stack_size == 0 {
            return Some(Cut {
                size_field,
                keep: 0,
                drop: 0,
            });
        }
        let dyn_size = u64_at(p.checked_add(8)?.checked_add(stack_size)?)? as usize;
        if dyn_size > stack_size || stack_size % 8 != 0 {
            return None;
        }
        // Keep whole 8-byte words, and at least one: a size of 0 would mean
        // "no dyn_size field" to a reader.
        let keep = dyn_size.div_ceil(8).max(1) * 8;
        Some(Cut {
            size_field,
            keep,
            drop: stack_size - keep.min(stack_size),
        })
    }
}

/// How one sample's stack dump is cut.
#[derive(Clone, Copy, Debug)]
struct Cut {
    /// Offset of the stack `size` field in the region.
    size_field: usize,
    /// Stack bytes kept.
    keep: usize,
    /// Stack bytes dropped.
    drop: usize,
}

/// A change to a ring region, in its byte offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit {
    /// The 8 bytes at `at` read as `with`.
    Replace { at: usize, with: [u8; 8] },
    /// The `len` bytes at `at` are left out.
    Skip { at: usize, len: usize },
}

/// Calls `f` with the bytes of `region` as `edits` (in order of offset,
/// not overlapping) make them: the ring's own slices, the replacement words,
/// and nothing for skipped ranges. Nothing is copied.
pub fn for_each_piece<'a, E>(
    region: Input<'a>,
    edits: &'a [Edit],
    mut f: impl FnMut(&'a [u8]) -> Result<(), E>,
) -> Result<(), E> {
    let mut at = 0;
    for e in edits {
        let (from, len) = match e {
            Edit::Replace { at, .. } => (*at, 8),
            Edit::Skip { at, len } => (*at, *len),
        };
        if from > at {
            ring_part(region, at, from, &mut f)?;
        }
        if let Edit::Replace { with, .. } = e {
            f(with)?;
        }
        at = from + len;
    }
    if at < region.len() {
        ring_part(region, at, region.len(), &mut f)?;
    }
    Ok(())
}

/// The ring bytes in `[from, to)` of `region`, as one or two slices.
fn ring_part<'a, E>(
    region: Input<'a>,
    from: usize,
    to: usize,
    f: &mut impl FnMut(&'a [u8]) -> Result<(), E>,
) -> Result<(), E> {
    let first = region.first.len();
    if from < first {
        f(&region.first[from..to.min(first)])?;
    }
    if to > first {
        f(&region.second[from.max(first) - first..to - first])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dwarf-style sample: ip, tid, time, period, callchain of `nr`,
    /// regs (abi 2 + 3 regs), stack of `size` with `dyn_size` written bytes
    /// (0xaa) and the rest stale (0xee).
    fn sample(nr: usize, size: usize, dyn_size: usize) -> Vec<u8> {
        let mut body = Vec::new();
        for v in [0x1000u64, 42 | (42 << 32), 7, 1] {
            body.extend_from_slice(&v.to_le_bytes());
        }
        body.extend_from_slice(&(nr as u64).to_le_bytes());
        for i in 0..nr {
            body.extend_from_slice(&(0x4000 + i as u64).to_le_bytes());
        }
        body.extend_from_slice(&2u64.to_le_bytes());
        for r in 0..3u64 {
            body.extend_from_slice(&r.to_le_bytes());
        }
        body.extend_from_slice(&(size as u64).to_le_bytes());
        body.extend(std::iter::repeat_n(0xaa, dyn_size));
        body.extend(std::iter::repeat_n(0xee, size - dyn_size));
        if size > 0 {
            body.extend_from_slice(&(dyn_size as u64).to_le_bytes());
        }
        let mut rec = Vec::new();
        rec.extend_from_slice(&9u32.to_le_bytes());
        rec.extend_from_slice(&2u16.to_le_bytes());
        rec.extend_from_slice(&((8 + body.len()) as u16).to_le_bytes());
        rec.extend(body);
        rec
    }

    /// The sample as the cut makes it: stack of round_up(dyn_size, 8) ≥ 8.
    fn cut(nr: usize, size: usize, dyn_size: usize) -> Vec<u8> {
        let keep = if size == 0 {
            0
        } else {
            (dyn_size.div_ceil(8).max(1) * 8).min(size)
        };
        let mut s = sample(nr, keep, dyn_size.min(keep));
        if size > 0 && keep > dyn_size {
            // The kept padding bytes are the original's stale ones.
            let n = s.len();
            s[n - 8 - (keep - dyn_size)..n - 8].fill(0xee);
        }
        s
    }

    const STYPE: u64 =
        st::IP | st::TID | st::TIME | st::PERIOD | st::CALLCHAIN | st::REGS_USER | st::STACK_USER;

    #[test]
    fn cuts_every_sample_to_its_written_stack_at_every_wrap_point() {
        let t = StackTail::for_samples(STYPE, 0b111).unwrap();
        let mut comm = vec![3, 0, 0, 0, 0, 0, 24, 0];
        comm.extend([0xee; 16]);
        let shapes = [
            (3, 64, 24),
            (0, 0, 0),
            (1, 128, 128),
            (2, 256, 8),
            (1, 64, 0),
            (1, 64, 13),
        ];
        let mut data = Vec::new();
        let mut want = Vec::new();
        for (i, &(nr, size, dyn_size)) in shapes.iter().enumerate() {
            data.extend(sample(nr, size, dyn_size));
            want.extend(cut(nr, size, dyn_size));
            if i == 0 {
                data.extend(&comm);
                want.extend(&comm);
            }
        }
        let dropped = (data.len() - want.len()) as u64;
        for cut_at in (0..=data.len()).step_by(8) {
            let region = Input::two(&data[..cut_at], &data[cut_at..]);
            let mut edits = Vec::new();
            assert_eq!(t.edits(region, &mut edits), dropped, "cut {cut_at}");
            let mut got = Vec::new();
            for_each_piece(region, &edits, |p| {
                got.extend_from_slice(p);
                Ok::<(), ()>(())
            })
            .unwrap();
            assert_eq!(got, want, "cut {cut_at}");
        }
    }

    #[test]
    fn samples_without_a_stack_or_with_unparsed_fields_are_left_alone() {
        assert_eq!(StackTail::for_samples(st::IP | st::CALLCHAIN, 0), None);
        assert_eq!(
            StackTail::for_samples(st::IP | st::RAW | st::STACK_USER, 0),
            None
        );
        // A lying dyn_size ends the walk without an edit.
        let t = StackTail::for_samples(STYPE, 0b111).unwrap();
        let mut s = sample(1, 64, 16);
        let n = s.len();
        s[n - 8..].copy_from_slice(&1000u64.to_le_bytes());
        let mut edits = Vec::new();
        assert_eq!(t.edits(Input::one(&s), &mut edits), 0);
        assert!(edits.is_empty());
    }
}
