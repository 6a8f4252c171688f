//! PERF_RECORD_COMPRESSED2 (type 83, perf 6.16 and newer): header, u64
//! `data_size`, the codec's bytes, zero padding to 8 bytes
//! (`docs/perf-data-format.md` 5.2). Where such a record ends, including
//! the records of the first writer's bug: when one push made more than one
//! record, perf wrote the push's *total* size into the first header, so its
//! u16 `header.size` wrapped (0 for a lone record of 65529-65535 bytes), its
//! `data_size` held the total less 16 and no padding was written; the later
//! records kept a true `header.size` and an uninitialised `data_size`.
//!
//! stream.rs asks this module where each COMPRESSED2 record ends and writes
//! the true size and data_size back into the record as it reads one.

/// Bytes before the payload: header and `data_size`.
pub const PREFIX: usize = 16;
/// The most payload one record of perf's writer holds: its records stop
/// below `1 << 16` bytes (PERF_SAMPLE_MAX_SIZE less the prefix and one).
pub const MAX_PAYLOAD: usize = (1 << 16) - PREFIX - 1;

/// Where a COMPRESSED2 record of `header.size` `size` and `data_size`
/// `data_size` ends and how much of it is payload: `(extent, payload)`, or
/// None where no reading of it is whole (`size` below the prefix and no
/// wrap explains it).
pub fn extent(size: usize, data_size: u64) -> Option<(usize, usize)> {
    let aligned = data_size
        .checked_add(PREFIX as u64 + 7)
        .map(|n| n & !7)
        .unwrap_or(u64::MAX);
    if aligned == size as u64 {
        // As written by a correct perf.
        return Some((size, data_size as usize));
    }
    if aligned > 0xffff && aligned & 0xffff == size as u64 {
        // The first record of a push, its size wrapped: its own payload is
        // the whole data_size when it was alone, else a full record's.
        let payload = (data_size as usize).min(MAX_PAYLOAD);
        return Some((PREFIX + payload, payload));
    }
    // A later record of such a push: its header.size is true, its
    // data_size is not.
    (size >= PREFIX).then(|| (size, size - PREFIX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_correct_record_is_read_by_its_sizes() {
        assert_eq!(extent(24, 5), Some((24, 5)));
        assert_eq!(extent(16, 0), Some((16, 0)));
        assert_eq!(extent(65528, 65512), Some((65528, 65512)));
    }

    #[test]
    fn a_lone_record_whose_size_wrapped_to_zero_ends_after_its_data() {
        // 16 + 65515 = 65531 bytes, aligned 65536: header.size 0.
        assert_eq!(extent(0, 65515), Some((65531, 65515)));
        assert_eq!(extent(0, MAX_PAYLOAD as u64), Some((65535, MAX_PAYLOAD)));
    }

    #[test]
    fn the_first_of_several_records_holds_one_full_payload() {
        // Two records of a push: 65535 + 16 + 1000 bytes in all.
        let total: usize = 65535 + 16 + 1000;
        let size = (total.div_ceil(8) * 8) & 0xffff;
        assert_eq!(extent(size, total as u64 - 16), Some((65535, MAX_PAYLOAD)));
    }

    #[test]
    fn a_later_record_keeps_its_header_size() {
        // Its data_size is whatever the buffer held before.
        assert_eq!(extent(1016, 0xdead_beef), Some((1016, 1000)));
        assert_eq!(extent(1016, 3), Some((1016, 1000)));
    }

    #[test]
    fn a_size_below_the_prefix_without_a_wrap_is_no_record() {
        assert_eq!(extent(8, 100), None);
        assert_eq!(extent(0, u64::MAX), None);
    }
}
