//! An edit: a change a record transform makes to a ring region, in the
//! region's byte offsets, without writing the ring (its data pages are
//! read-only). The push path consumes a region with its edits:
//! [`for_each_slice`] hands the region as the edits make it to a codec or
//! a `writev`, as ring slices and replacement words; nothing is copied.

use perfz_codecs::Input;

/// A change to a ring region, in its byte offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit {
    /// The 8 bytes at `at` read as `with`.
    Replace {
        /// Offset of the word in the region (a record header or a stack `size`).
        at: usize,
        /// The word written instead, little-endian.
        with: [u8; 8],
    },
    /// The `len` bytes at `at` are left out.
    Skip {
        /// Offset in the region of the first byte left out.
        at: usize,
        /// Bytes left out (a sample's unwritten stack bytes).
        len: usize,
    },
}

/// Calls `f` with the bytes of `region` as `edits` (in order of offset,
/// not overlapping) make them: the ring's own slices, the replacement words,
/// and nothing for skipped ranges. Nothing is copied.
pub fn for_each_slice<'a, E>(
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
