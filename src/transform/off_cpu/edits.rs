//! The edits `--off-cpu` makes to a region: its records skipped (in runs),
//! and a record copied as the stack cut's edits make it.

use perfz_codecs::Input;

use crate::transform::{for_each_slice, Edit};

/// `[at, end)` added to `skips` (in order): records one after another are
/// one skip, so a run of them is one edit (and one gap in the push).
pub(super) fn skip(skips: &mut Vec<(usize, usize)>, at: usize, end: usize) {
    match skips.last_mut() {
        Some(last) if last.1 == at => last.1 = end,
        _ => skips.push((at, end)),
    }
}

/// `edits` (sorted) with a skip for each record of `skips` (sorted) and
/// none inside them.
pub(super) fn skip_records(edits: &mut Vec<Edit>, skips: &[(usize, usize)]) {
    if skips.is_empty() {
        return;
    }
    // Both in order: the edits inside a skipped record go, in one walk.
    let mut k = 0;
    edits.retain(|e| {
        let a = edit_at(e);
        while k < skips.len() && skips[k].1 <= a {
            k += 1;
        }
        !(k < skips.len() && skips[k].0 <= a)
    });
    edits.extend(
        skips
            .iter()
            .map(|&(at, end)| Edit::Skip { at, len: end - at }),
    );
    // No two at one offset: the edits inside a skip are gone.
    edits.sort_unstable_by_key(edit_at);
}

pub(super) fn edit_at(e: &Edit) -> usize {
    match e {
        Edit::Replace { at, .. } | Edit::Skip { at, .. } => *at,
    }
}

/// The bytes `[at, end)` of `region` as one slice: borrowed where they
/// lie in one of its two, else gathered into `buf`.
pub(super) fn contiguous<'a>(
    region: Input<'a>,
    at: usize,
    end: usize,
    buf: &'a mut Vec<u8>,
) -> &'a [u8] {
    let f = region.first.len();
    if end <= f {
        return &region.first[at..end];
    }
    if at >= f {
        return &region.second[at - f..end - f];
    }
    buf.clear();
    buf.extend_from_slice(&region.first[at..]);
    buf.extend_from_slice(&region.second[..end - f]);
    buf
}

/// The record at `[at, end)` of `region` as the stack cut's `edits` (those
/// inside it) make it, into `v`.
pub(super) fn cut_copy(
    region: Input<'_>,
    (at, end): (usize, usize),
    edits: &[Edit],
    mine: &mut Vec<Edit>,
    v: &mut Vec<u8>,
) {
    let (_, rest) = region.split_at(at);
    let (rec, _) = rest.split_at(end - at);
    mine.clear();
    mine.extend(edits.iter().map(|e| match *e {
        Edit::Replace { at: a, with } => Edit::Replace { at: a - at, with },
        Edit::Skip { at: a, len } => Edit::Skip { at: a - at, len },
    }));
    let _ = for_each_slice(rec, mine, |p| {
        v.extend_from_slice(p);
        Ok::<(), ()>(())
    });
}

/// The little-endian word at `o` of `rec` (0 past its end).
pub(super) fn word(rec: &[u8], o: usize) -> u64 {
    rec.get(o..o + 8)
        .map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
}
