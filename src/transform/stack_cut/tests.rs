use super::*;
use crate::format::attr::{read_format as rf, sample_type as st};
use crate::format::Attr;
use crate::transform::for_each_slice;

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
    record(body)
}

fn record(body: Vec<u8>) -> Vec<u8> {
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

fn apply(t: &StackCut, region: Input<'_>) -> (Vec<u8>, Walked) {
    let mut edits = Vec::new();
    let w = t.edits(region, &mut edits);
    let mut got = Vec::new();
    for_each_slice(region, &edits, |p| {
        got.extend_from_slice(p);
        Ok::<(), ()>(())
    })
    .unwrap();
    (got, w)
}

const STYPE: u64 =
    st::IP | st::TID | st::TIME | st::PERIOD | st::CALLCHAIN | st::REGS_USER | st::STACK_USER;

#[test]
fn cuts_every_sample_to_its_written_stack_at_every_wrap_point() {
    let t = StackCut::for_samples(STYPE, 0b111).unwrap();
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
        let (got, w) = apply(&t, region);
        assert_eq!(w.dropped, dropped, "cut {cut_at}");
        assert_eq!(got, want, "cut {cut_at}");
    }
}

#[test]
fn damaged_samples_are_left_whole_and_the_walk_goes_on() {
    assert_eq!(StackCut::for_samples(st::IP | st::CALLCHAIN, 0), None);
    let t = StackCut::for_samples(STYPE, 0b111).unwrap();
    // A lying dyn_size: that sample whole, the next one cut.
    let mut s = sample(1, 64, 16);
    let n = s.len();
    s[n - 8..].copy_from_slice(&1000u64.to_le_bytes());
    let mut data = s.clone();
    data.extend(sample(1, 64, 16));
    let (got, w) = apply(&t, Input::one(&data));
    assert_eq!(
        w,
        Walked {
            dropped: 48,
            uncut: 1,
            // The cut sample used 16 of its 64 bytes.
            used: {
                let mut u = crate::transform::stack_use::StackUse::default();
                u.add(16, 64);
                u
            },
        }
    );
    assert_eq!(got, [s, cut(1, 64, 16)].concat());
}

/// Crafted counts and sizes near u64::MAX: no overflow, nothing cut.
#[test]
fn crafted_counts_and_sizes_do_not_overflow() {
    let t = StackCut::for_samples(STYPE, 0b111).unwrap();
    let base = sample(1, 64, 16);
    let nr_at = 8 + 32;
    let size_at = 8 + 32 + 16 + 32;
    for (at, v) in [
        (nr_at, u64::MAX),
        (nr_at, u64::MAX / 8 + 1),
        (nr_at, (usize::MAX / 8) as u64),
        (size_at, u64::MAX),
        (size_at, u64::MAX - 7),
        (size_at, (usize::MAX - 15) as u64),
    ] {
        let mut s = base.clone();
        s[at..at + 8].copy_from_slice(&v.to_le_bytes());
        let (got, w) = apply(&t, Input::one(&s));
        assert_eq!(
            w,
            Walked {
                dropped: 0,
                uncut: 1,
                ..Default::default()
            },
            "{at} {v:#x}"
        );
        assert_eq!(got, s);
    }
}

fn attr(sample_type: u64, read_format: u64, ids: &[u64]) -> AttrEntry {
    let mut a = Attr::new();
    a.set_u64(24, sample_type);
    a.set_u64(32, read_format);
    a.set_u64(80, 0b111);
    AttrEntry {
        attr: a,
        ids: ids.to_vec(),
        name: None,
    }
}

/// cpu-clock and a tracepoint (RAW, CPU) with ID at the same place: each
/// sample cut by its own event's layout.
#[test]
fn mixed_events_are_cut_by_their_own_layout() {
    let clock = STYPE | st::ID;
    let tp = clock | st::RAW | st::CPU;
    let attrs = [attr(clock, 0, &[11, 12]), attr(tp, 0, &[21])];
    let t = StackCut::for_attrs(&attrs).unwrap().unwrap();
    // ip tid time id [cpu] period callchain(0) [raw] regs(abi 0) stack
    let mk = |id: u64, raw: Option<&[u8]>, size: usize, dyn_size: usize, cut: bool| {
        let mut b = Vec::new();
        for v in [1u64, 2, 3, id] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        if raw.is_some() {
            b.extend_from_slice(&5u64.to_le_bytes());
        }
        b.extend_from_slice(&1u64.to_le_bytes()); // period
        b.extend_from_slice(&0u64.to_le_bytes()); // callchain nr
        if let Some(r) = raw {
            b.extend_from_slice(&(r.len() as u32).to_le_bytes());
            b.extend_from_slice(r);
        }
        b.extend_from_slice(&0u64.to_le_bytes()); // abi none
        let keep = if cut {
            dyn_size.div_ceil(8).max(1) * 8
        } else {
            size
        };
        b.extend_from_slice(&(keep as u64).to_le_bytes());
        b.extend(std::iter::repeat_n(0xaa, dyn_size));
        b.extend(std::iter::repeat_n(0xee, keep - dyn_size));
        b.extend_from_slice(&(dyn_size as u64).to_le_bytes());
        record(b)
    };
    let raw = [7u8; 12];
    let data = [
        mk(11, None, 512, 40, false),
        mk(21, Some(&raw), 512, 9, false),
        mk(12, None, 256, 256, false),
        mk(99, None, 512, 8, false),
    ]
    .concat();
    let want = [
        mk(11, None, 512, 40, true),
        mk(21, Some(&raw), 512, 9, true),
        mk(12, None, 256, 256, true),
        mk(99, None, 512, 8, false),
    ]
    .concat();
    let (got, w) = apply(&t, Input::one(&data));
    assert_eq!(got, want);
    assert_eq!(w.uncut, 1, "the unknown id 99 is left whole");
}

#[test]
fn events_that_cannot_be_told_apart_say_why() {
    let a = attr(STYPE, 0, &[1]);
    let b = attr(STYPE | st::RAW, 0, &[2]);
    assert_eq!(StackCut::for_attrs(&[a.clone(), b]), Err(Uncut::NoId));
    let odd = attr(STYPE | (1 << 40), 0, &[3]);
    assert!(matches!(
        StackCut::for_attrs(&[odd]),
        Err(Uncut::UnknownFields(_))
    ));
    // No event with a stack: nothing to cut, nothing to say.
    let fp = attr(st::IP | st::CALLCHAIN, 0, &[4]);
    assert_eq!(StackCut::for_attrs(&[fp]), Ok(None));
    // The same layout for every event: no id needed.
    let t = StackCut::for_attrs(&[a.clone(), a]).unwrap().unwrap();
    assert!(t.layouts.is_empty());
}

/// A leader-sampling group: READ with GROUP, ID and LOST, then the stack.
#[test]
fn group_reads_are_stepped_over() {
    let stype = STYPE | st::READ | st::IDENTIFIER;
    let f = rf::GROUP | rf::ID | rf::LOST;
    let t = StackCut::for_attrs(&[attr(stype, f, &[5, 6])])
        .unwrap()
        .unwrap();
    let mk = |keep: usize| {
        let mut b = Vec::new();
        for v in [5u64, 1, 2, 3, 1] {
            b.extend_from_slice(&v.to_le_bytes()); // id ip tid time period
        }
        b.extend_from_slice(&2u64.to_le_bytes()); // read nr
        for v in [100u64, 5, 0, 200, 6, 0] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&0u64.to_le_bytes()); // callchain nr
        b.extend_from_slice(&0u64.to_le_bytes()); // abi none
        b.extend_from_slice(&(keep as u64).to_le_bytes());
        b.extend(std::iter::repeat_n(0xaa, 16));
        b.extend(std::iter::repeat_n(0xee, keep - 16));
        b.extend_from_slice(&16u64.to_le_bytes());
        record(b)
    };
    let (got, w) = apply(&t, Input::one(&mk(1024)));
    assert_eq!(got, mk(16));
    assert_eq!(w.dropped, 1008);
}
