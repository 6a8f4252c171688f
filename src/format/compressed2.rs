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
//!
//! Writers choose the record type once ([`CompressedFormat`], perfz's
//! `--compressed-format`), and [`CompressedFormat::seal`] lays out each
//! record they write: COMPRESSED (81) by default, as every perf since 5.x
//! reads it; COMPRESSED2 (83) on request, as perf 6.16+ writes with `-z`
//! (perf before 6.16 cannot read it).

use super::record::{RecordHeader, RecordType};

/// Bytes before the payload: header and `data_size`.
pub const PREFIX: usize = 16;
/// The most payload one record of perf's writer holds: its records stop
/// below `1 << 16` bytes (PERF_SAMPLE_MAX_SIZE less the prefix and one).
pub const MAX_PAYLOAD: usize = (1 << 16) - PREFIX - 1;
/// The most payload a correct COMPRESSED2 record holds: the record,
/// padding included, is a multiple of 8 within u16 `header.size` (65528
/// bytes), so 65512 bytes (perf 6.16's fixed writer cuts there too).
pub const MAX_ALIGNED_PAYLOAD: usize = (u16::MAX as usize & !7) - PREFIX;

/// Which record carries the codec's bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CompressedFormat {
    /// PERF_RECORD_COMPRESSED (81): 8-byte header, the codec's bytes.
    #[default]
    Compressed,
    /// PERF_RECORD_COMPRESSED2 (83): header, u64 `data_size`, the codec's
    /// bytes, zero padding to 8 bytes.
    Compressed2,
}

impl CompressedFormat {
    /// The record type written.
    pub const fn record_type(self) -> RecordType {
        match self {
            CompressedFormat::Compressed => RecordType::COMPRESSED,
            CompressedFormat::Compressed2 => RecordType::COMPRESSED2,
        }
    }

    /// Bytes before the payload.
    pub const fn prefix(self) -> usize {
        match self {
            CompressedFormat::Compressed => RecordHeader::SIZE,
            CompressedFormat::Compressed2 => PREFIX,
        }
    }

    /// The most payload one record holds (its padding included, the record
    /// fits `header.size`).
    pub const fn max_payload(self) -> usize {
        match self {
            CompressedFormat::Compressed => perfz_codecs::MAX_RECORD_PAYLOAD,
            CompressedFormat::Compressed2 => MAX_ALIGNED_PAYLOAD,
        }
    }

    /// Makes `rec` one record of `payload` bytes (already at
    /// [`prefix`](Self::prefix)): its header (and data_size), then zero
    /// padding where the format has it. Returns the record's size. `rec`
    /// holds the padded record; `payload` ≤ [`max_payload`](Self::max_payload).
    pub fn seal(self, rec: &mut [u8], payload: usize) -> usize {
        debug_assert!(payload <= self.max_payload());
        let end = self.prefix() + payload;
        let size = match self {
            CompressedFormat::Compressed => end,
            CompressedFormat::Compressed2 => {
                rec[8..PREFIX].copy_from_slice(&(payload as u64).to_le_bytes());
                let size = end.next_multiple_of(8);
                rec[end..size].fill(0);
                size
            }
        };
        let h = RecordHeader {
            type_: self.record_type(),
            misc: 0,
            size: size as u16, // ≤ 65535 by max_payload
        };
        rec[..RecordHeader::SIZE].copy_from_slice(&h.to_le());
        size
    }

    /// The name `--compressed-format` takes.
    pub const fn name(self) -> &'static str {
        match self {
            CompressedFormat::Compressed => "compressed",
            CompressedFormat::Compressed2 => "compressed2",
        }
    }
}

impl std::str::FromStr for CompressedFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "compressed" => Ok(CompressedFormat::Compressed),
            "compressed2" => Ok(CompressedFormat::Compressed2),
            _ => Err(format!(
                "{s:?}: use compressed (PERF_RECORD_COMPRESSED, read by every perf since 5.x) \
                 or compressed2 (PERF_RECORD_COMPRESSED2, perf 6.16 and newer)"
            )),
        }
    }
}

impl std::fmt::Display for CompressedFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

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

    /// Every payload size a writer may give makes a record the reader
    /// takes as a correct writer's, of its header.size, padded with zeros.
    #[test]
    fn sealed_records_read_back_by_their_sizes() {
        let mut rec = vec![0xaau8; 1 << 16];
        for payload in (0..=64).chain(MAX_ALIGNED_PAYLOAD - 64..=MAX_ALIGNED_PAYLOAD) {
            rec.fill(0xaa);
            let size = CompressedFormat::Compressed2.seal(&mut rec, payload);
            assert_eq!(size % 8, 0);
            assert_eq!(size, (PREFIX + payload).next_multiple_of(8));
            let h = u16::from_le_bytes([rec[6], rec[7]]) as usize;
            let data_size = u64::from_le_bytes(rec[8..16].try_into().unwrap());
            assert_eq!(u32::from_le_bytes(rec[..4].try_into().unwrap()), 83);
            assert_eq!(h, size);
            assert_eq!(extent(h, data_size), Some((size, payload)));
            assert!(rec[PREFIX + payload..size].iter().all(|&b| b == 0));
            // The payload's last byte is left as it was.
            assert!(payload == 0 || rec[PREFIX + payload - 1] == 0xaa);
        }
        for payload in [0, 1, perfz_codecs::MAX_RECORD_PAYLOAD] {
            let size = CompressedFormat::Compressed.seal(&mut rec, payload);
            assert_eq!(size, RecordHeader::SIZE + payload);
            assert_eq!(u16::from_le_bytes([rec[6], rec[7]]) as usize, size);
            assert_eq!(u32::from_le_bytes(rec[..4].try_into().unwrap()), 81);
        }
    }

    #[test]
    fn a_size_below_the_prefix_without_a_wrap_is_no_record() {
        assert_eq!(extent(8, 100), None);
        assert_eq!(extent(0, u64::MAX), None);
    }
}
