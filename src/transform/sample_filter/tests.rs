use super::*;
use crate::format::attr::sample_type as st;

/// A SAMPLE of IP | TID | PERIOD.
fn sample(ip: u64, pid: u32, tid: u32, period: u64) -> Vec<u8> {
    let mut r = RecordHeader {
        type_: RecordType::SAMPLE,
        misc: 2,
        size: 32,
    }
    .to_le()
    .to_vec();
    r.extend(ip.to_le_bytes());
    r.extend(pid.to_le_bytes());
    r.extend(tid.to_le_bytes());
    r.extend(period.to_le_bytes());
    r
}

fn filter(s: &str) -> SampleFilter {
    let t = st::IP | st::TID | st::PERIOD;
    let c = compile(&parse(s, |_| 0).unwrap(), "cycles", t).unwrap();
    SampleFilter::new(vec![Some(c)], None, Vec::new()).unwrap()
}

fn skips(edits: &[Edit]) -> Vec<(usize, usize)> {
    edits
        .iter()
        .filter_map(|e| match e {
            Edit::Skip { at, len } => Some((*at, *len)),
            Edit::Replace { .. } => None,
        })
        .collect()
}

#[test]
fn samples_failing_the_filter_are_skipped_and_counted() {
    let mut region = Vec::new();
    for (ip, period) in [(0x1000, 1), (0x2000, 5), (0xffff_ffff_8100_0000, 10)] {
        region.extend(sample(ip, 7, 8, period));
    }
    let mut f = filter("period > 4");
    let mut edits = Vec::new();
    f.edits(Input::one(&region), &mut edits);
    assert_eq!(skips(&edits), [(0, 32)]);
    assert_eq!(f.dropped(), 1);
    let mut f = filter("ip < 0xffffffff00000000, pid == 7 || tid == 1");
    let mut edits = vec![
        Edit::Replace {
            at: 64,
            with: [0; 8],
        },
        Edit::Skip { at: 80, len: 8 },
    ];
    f.edits(Input::one(&region), &mut edits);
    // The edits inside the skipped sample go with it.
    assert_eq!(edits, [Edit::Skip { at: 64, len: 32 }]);
    let mut f = filter("tid == 9 || pid == 9");
    let mut edits = Vec::new();
    f.edits(Input::one(&region), &mut edits);
    assert_eq!(skips(&edits), [(0, 32), (32, 32), (64, 32)]);
    assert_eq!(f.dropped(), 3);
}

#[test]
fn a_wrapped_region_and_other_records_are_read_whole() {
    let mut bytes = sample(1, 1, 1, 1);
    bytes.extend(sample(2, 2, 2, 100));
    let (a, b) = bytes.split_at(44);
    let region = Input {
        first: a,
        second: b,
    };
    let mut f = filter("period >= 100");
    let mut edits = Vec::new();
    f.edits(region, &mut edits);
    assert_eq!(skips(&edits), [(0, 32)]);
}

#[test]
fn any_bytes_are_walked_without_a_panic() {
    let t = st::IP | st::TID | st::PERIOD | st::WEIGHT | st::PHYS_ADDR;
    let f = parse("weight > 1, phys_addr & 0x10 || uid == 0, pid != 3", |_| 0).unwrap();
    let c = compile(&f, "cycles", t).unwrap();
    let mut filter =
        SampleFilter::new(vec![Some(c.clone()), Some(c)], Some(0), vec![(5, 1)]).unwrap();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..2000 {
        let mut bytes = Vec::new();
        for _ in 0..64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            bytes.push(x as u8);
        }
        // A plausible header now and then: a SAMPLE of 8..64 bytes.
        if x % 3 == 0 {
            bytes[..8].copy_from_slice(
                &RecordHeader {
                    type_: RecordType::SAMPLE,
                    misc: 0,
                    size: 8 + (x % 57) as u16,
                }
                .to_le(),
            );
        }
        let (a, b) = bytes.split_at((x % 64) as usize);
        let mut edits = Vec::new();
        filter.edits(
            Input {
                first: a,
                second: b,
            },
            &mut edits,
        );
    }
}
