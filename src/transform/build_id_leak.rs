//! MMAP2 records the kernel marks as carrying a build id while they hold a
//! device and inode: with another recorder's build-id event open, kernel
//! 6.18 sets PERF_RECORD_MISC_MMAP_BUILD_ID in the records of events opened
//! without `build_id` too (the note in session/setup.rs). perf 6.1 then
//! reads the device's major number as the build id's size, past its 20
//! bytes ("assertion failed at util/build-id.c:1010"), and fails: a
//! `perfz record -a` beside perf 7 (whose default asks for build ids) wrote
//! such records. A record whose build-id size is past 20 holds no build id:
//! its header goes out with the bit cleared, an [`Edit`] over the region.

use perfz_codecs::Input;

use super::Edit;
use crate::format::record::{misc, RecordHeader, RecordType};

/// Where an MMAP2's build-id size byte sits (header, pid, tid, addr, len,
/// pgoff).
const SIZE_AT: usize = RecordHeader::SIZE + 32;
/// The most bytes a build id of an MMAP2 record holds.
const MOST: u8 = 20;

/// The header record `h` at `at` of `region` goes out with, where it is an
/// MMAP2 marked with a build id it cannot hold; None for any other.
#[inline]
pub fn fixed(region: Input<'_>, at: usize, h: &RecordHeader) -> Option<RecordHeader> {
    if h.type_ != RecordType::MMAP2 || h.misc & misc::MMAP_BUILD_ID == 0 {
        return None;
    }
    if (h.size as usize) < SIZE_AT + 8 {
        return None;
    }
    let size = region.read8(at + SIZE_AT)[0];
    (size > MOST).then_some(RecordHeader {
        misc: h.misc & !misc::MMAP_BUILD_ID,
        ..*h
    })
}

/// Adds the edits of `fixes` (offset, header) to `edits`, keeping them in
/// order of offset.
pub fn add(fixes: &[(usize, RecordHeader)], edits: &mut Vec<Edit>) {
    if fixes.is_empty() {
        return;
    }
    edits.extend(fixes.iter().map(|(at, h)| Edit::Replace {
        at: *at,
        with: h.to_le(),
    }));
    edits.sort_by_key(|e| match e {
        Edit::Replace { at, .. } | Edit::Skip { at, .. } => *at,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An MMAP2 record with `misc` whose build-id size byte is `size`.
    fn mmap2(misc: u16, size: u8) -> Vec<u8> {
        let mut r = RecordHeader {
            type_: RecordType::MMAP2,
            misc,
            size: 8 + 64 + 8,
        }
        .to_le()
        .to_vec();
        r.resize(8 + 64 + 8, 0);
        r[SIZE_AT] = size;
        r
    }

    #[test]
    fn only_a_build_id_past_20_bytes_is_a_leak() {
        let leaked = mmap2(misc::USER | misc::MMAP_BUILD_ID, 0xfe); // major 254
        let h = RecordHeader::parse(
            leaked[..8].try_into().unwrap(),
            crate::format::endian::Endian::Little,
        );
        let f = fixed(Input::one(&leaked), 0, &h).expect("a leak");
        assert_eq!(f.misc, misc::USER);
        assert_eq!((f.type_, f.size), (h.type_, h.size));
        for ok in [
            mmap2(misc::USER | misc::MMAP_BUILD_ID, 20),
            mmap2(misc::USER, 0xfe),
        ] {
            let h = RecordHeader::parse(
                ok[..8].try_into().unwrap(),
                crate::format::endian::Endian::Little,
            );
            assert_eq!(fixed(Input::one(&ok), 0, &h), None);
        }
    }

    #[test]
    fn the_edits_stay_in_order_of_offset() {
        let mut edits = vec![Edit::Skip { at: 100, len: 8 }];
        let h = RecordHeader {
            type_: RecordType::MMAP2,
            misc: 2,
            size: 80,
        };
        add(&[(16, h), (200, h)], &mut edits);
        let ats: Vec<usize> = edits
            .iter()
            .map(|e| match e {
                Edit::Replace { at, .. } | Edit::Skip { at, .. } => *at,
            })
            .collect();
        assert_eq!(ats, [16, 100, 200]);
    }
}
