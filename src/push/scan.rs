//! Counting records in a ring region without copying it: samples for the
//! summary, LOST records for the lost-event total. Record headers are 8-byte
//! aligned and never split by the wrap; bodies may be.

use perfz_codecs::Input;

use crate::format::record::{RecordHeader, RecordType};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct RecordCounts {
    pub records: u64,
    pub samples: u64,
    /// LOST records seen.
    pub lost_records: u64,
    /// Sum of their `lost` fields: events the kernel dropped (ring full).
    pub lost_events: u64,
}

/// Offset of `u64 lost` in a LOST record (after the header and `u64 id`).
const LOST_FIELD: usize = RecordHeader::SIZE + 8;

/// Adds the records of `region` to `counts`. Stops at a header that cannot be
/// right (size < 8 or past the end) instead of looping.
pub fn scan(region: Input<'_>, counts: &mut RecordCounts) {
    let len = region.len();
    let mut at = 0;
    while at + 8 <= len {
        let h = RecordHeader::from_le(region.read8(at));
        let size = h.size as usize;
        if size < RecordHeader::SIZE || at + size > len {
            break;
        }
        counts.records += 1;
        match h.type_ {
            RecordType::SAMPLE => counts.samples += 1,
            RecordType::LOST if size >= LOST_FIELD + 8 => {
                counts.lost_records += 1;
                counts.lost_events += u64::from_le_bytes(region.read8(at + LOST_FIELD));
            }
            _ => {}
        }
        at += size;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(t: u32, size: u16, fill: u64) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&t.to_le_bytes());
        r.extend_from_slice(&0u16.to_le_bytes());
        r.extend_from_slice(&size.to_le_bytes());
        while r.len() < size as usize {
            r.extend_from_slice(&fill.to_le_bytes());
        }
        r
    }

    #[test]
    fn counts_across_the_wrap() {
        let data = [rec(9, 32, 1), rec(2, 32, 5), rec(9, 16, 0)].concat();
        for cut in 0..=data.len() {
            let mut c = RecordCounts::default();
            scan(Input::two(&data[..cut], &data[cut..]), &mut c);
            assert_eq!(
                c,
                RecordCounts {
                    records: 3,
                    samples: 2,
                    lost_records: 1,
                    lost_events: 5
                },
                "cut {cut}"
            );
        }
    }

    #[test]
    fn garbage_stops_the_scan() {
        let mut c = RecordCounts::default();
        scan(Input::one(&[0u8; 64]), &mut c);
        assert_eq!(c.records, 0);
    }
}
