//! A piece: the part of a ring region a unit pushes and hands back to the
//! kernel at once, whole records up to the first end at or past
//! [`HAND_BACK_PIECE`].

use perfz_codecs::Input;

use crate::format::record::RecordHeader;
use crate::transform::build_id_leak;
use crate::transform::scan::{headers, note, Hits, RecordCounts};

/// Ring bytes pushed before the drain hands a piece of a region back to the
/// kernel (then the piece ends at the next record end).
pub const HAND_BACK_PIECE: usize = 64 << 10;

/// The length of the first piece of `region` to push and hand back: its
/// records up to the first end at or past `at_least` bytes, or all of it (also
/// where a record header does not fit, as the walks do). The walk counts
/// the piece's records into `n` and notes them into `hits` on the way (one
/// walk, not two).
pub(super) fn piece_len(
    region: Input<'_>,
    at_least: usize,
    n: &mut RecordCounts,
    mut hits: Option<&mut Hits>,
    leaks: &mut Vec<(usize, RecordHeader)>,
) -> usize {
    let len = region.len();
    let whole = at_least == 0 || len <= at_least;
    leaks.clear();
    for (at, h) in headers(region) {
        note(region, (at, &h), n, hits.as_deref_mut());
        // Rare (MMAP2 only): the kernel's build-id mark on a record that
        // holds none, cleared as the piece goes out.
        if let Some(f) = build_id_leak::fixed(region, at, &h) {
            leaks.push((at, f));
        }
        let end = at + h.size as usize;
        if !whole && end >= at_least {
            return end;
        }
    }
    len
}
