//! A model of what a kernel writes into a ring for events of random sample
//! layouts, and the reference cut: each sample is built twice from its
//! fields, once as the kernel writes it (the stack dump padded to `size`
//! with stale bytes) and once as the cut must leave it (the dump
//! `round_up(dyn_size, 8)` bytes, at least 8). Nothing here uses perfz's
//! cutter; it is shared by tests/stack_cut.rs and the `stack_cut` fuzz
//! target.

#![allow(dead_code)]

use perfz::format::attr::{read_format as rf, sample_type as st};
use perfz::format::{Attr, AttrEntry};

/// SplitMix64: the whole model follows from one seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
}

/// One event: its sample layout and ids.
#[derive(Clone, Debug)]
pub struct Event {
    pub stype: u64,
    pub read_format: u64,
    pub hw_idx: bool,
    pub regs_user: u64,
    pub regs_intr: u64,
    pub ids: Vec<u64>,
}

/// Bits that may be on in an event besides the shared prefix.
const OPTIONAL: [u64; 17] = [
    st::STREAM_ID,
    st::CPU,
    st::PERIOD,
    st::READ,
    st::CALLCHAIN,
    st::RAW,
    st::BRANCH_STACK,
    st::REGS_USER,
    st::STACK_USER,
    st::WEIGHT,
    st::DATA_SRC,
    st::TRANSACTION,
    st::REGS_INTR,
    st::PHYS_ADDR,
    st::CGROUP,
    st::DATA_PAGE_SIZE,
    st::CODE_PAGE_SIZE,
];

/// 1 to 3 events. Where there are several, they share where the id sits
/// (IDENTIFIER, or ID after the same fixed words) as perf arranges it.
pub fn events(rng: &mut Rng) -> Vec<Event> {
    let n = 1 + rng.below(3) as usize;
    let mut prefix = 0;
    for b in [st::IP, st::TID, st::TIME, st::ADDR] {
        if !rng.chance(4) {
            prefix |= b;
        }
    }
    prefix |= if rng.chance(2) {
        st::IDENTIFIER
    } else {
        st::ID
    };
    let mut next_id = 100;
    (0..n)
        .map(|_| {
            let mut stype = prefix;
            for b in OPTIONAL {
                if rng.chance(3) {
                    stype |= b;
                }
            }
            // Most events sample a stack: that is what is cut.
            if !rng.chance(5) {
                stype |= st::STACK_USER | st::REGS_USER;
            }
            if rng.chance(8) {
                stype |= st::AUX;
            }
            let mut read_format = 0;
            for b in [
                rf::TOTAL_TIME_ENABLED,
                rf::TOTAL_TIME_RUNNING,
                rf::ID,
                rf::GROUP,
                rf::LOST,
            ] {
                if rng.chance(2) {
                    read_format |= b;
                }
            }
            let ids = (0..1 + rng.below(3))
                .map(|_| {
                    next_id += 1 + rng.below(1000);
                    next_id
                })
                .collect();
            Event {
                stype,
                read_format,
                hw_idx: rng.chance(2),
                regs_user: rng.next() & 0xffff,
                regs_intr: rng.next() & 0xff,
                ids,
            }
        })
        .collect()
}

/// The attrs perfz is given for `events`.
pub fn attrs(events: &[Event]) -> Vec<AttrEntry> {
    events
        .iter()
        .map(|e| {
            let mut a = Attr::new();
            a.set_u32(0, 1);
            a.set_u64(24, e.stype);
            a.set_u64(32, e.read_format);
            a.set_u64(72, if e.hw_idx { 1 << 17 } else { 0 });
            a.set_u64(80, e.regs_user);
            a.set_u64(96, e.regs_intr);
            AttrEntry {
                attr: a,
                ids: e.ids.clone(),
                name: None,
            }
        })
        .collect()
}

fn word(b: &mut Vec<u8>, v: u64) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn finish(type_: u32, body: Vec<u8>) -> Vec<u8> {
    let mut r = Vec::with_capacity(8 + body.len());
    r.extend_from_slice(&type_.to_le_bytes());
    r.extend_from_slice(&2u16.to_le_bytes());
    r.extend_from_slice(&((8 + body.len()) as u16).to_le_bytes());
    r.extend(body);
    r
}

/// One record as the kernel writes it, as the cut must leave it, and
/// whether leaving it whole is right too: a sample of an event with
/// BRANCH_STACK and hw_idx for which the kernel had no branch stack (it
/// then writes `nr` = 0 without hw_idx) may parse both ways; a cutter
/// must not guess.
pub fn record(rng: &mut Rng, events: &[Event]) -> (Vec<u8>, Vec<u8>, bool) {
    let mut either = false;
    if rng.chance(6) {
        // COMM, EXIT, MMAP2, SWITCH...: passed through untouched.
        let type_ = [1u32, 3, 4, 7, 10, 14][rng.below(6) as usize];
        let body: Vec<u8> = (0..rng.below(40) * 8).map(|_| rng.next() as u8).collect();
        let r = finish(type_, body);
        return (r.clone(), r, false);
    }
    let e = &events[rng.below(events.len() as u64) as usize];
    let id = e.ids[rng.below(e.ids.len() as u64) as usize];
    let t = e.stype;
    // Fields before the stack: the same in both.
    let mut head = Vec::new();
    let put = |bit: u64, v: u64, b: &mut Vec<u8>| {
        if t & bit != 0 {
            word(b, v);
        }
    };
    put(st::IDENTIFIER, id, &mut head);
    put(st::IP, rng.next(), &mut head);
    put(st::TID, rng.next(), &mut head);
    put(st::TIME, rng.next(), &mut head);
    put(st::ADDR, rng.next(), &mut head);
    put(st::ID, id, &mut head);
    put(st::STREAM_ID, rng.next(), &mut head);
    put(st::CPU, rng.below(256), &mut head);
    put(st::PERIOD, rng.next(), &mut head);
    if t & st::READ != 0 {
        let f = e.read_format;
        let per = 1 + (f & rf::ID != 0) as u64 + (f & rf::LOST != 0) as u64;
        let times =
            (f & rf::TOTAL_TIME_ENABLED != 0) as u64 + (f & rf::TOTAL_TIME_RUNNING != 0) as u64;
        if f & rf::GROUP != 0 {
            let nr = 1 + rng.below(3);
            word(&mut head, nr);
            for _ in 0..times + nr * per {
                word(&mut head, rng.next());
            }
        } else {
            for _ in 0..per + times {
                word(&mut head, rng.next());
            }
        }
    }
    if t & st::CALLCHAIN != 0 {
        let nr = rng.below(6);
        word(&mut head, nr);
        for _ in 0..nr {
            word(&mut head, rng.next());
        }
    }
    if t & st::RAW != 0 {
        // u32 size + data, a multiple of 8 together.
        let len = rng.below(5) * 8 + 4;
        head.extend_from_slice(&(len as u32).to_le_bytes());
        head.extend((0..len).map(|_| rng.next() as u8));
    }
    if t & st::BRANCH_STACK != 0 {
        if rng.chance(4) {
            // No branch stack at all: the kernel writes nr = 0 alone.
            word(&mut head, 0);
            either = e.hw_idx;
        } else {
            let nr = rng.below(3);
            word(&mut head, nr);
            // nr = 0 with hw_idx reads the same as no branch stack.
            either = e.hw_idx && nr == 0;
            if e.hw_idx {
                word(&mut head, rng.next());
            }
            for _ in 0..nr * 3 {
                word(&mut head, rng.next());
            }
        }
    }
    if t & st::REGS_USER != 0 {
        let abi = [0, 1, 2][rng.below(3) as usize];
        word(&mut head, abi);
        if abi != 0 {
            for _ in 0..e.regs_user.count_ones() {
                word(&mut head, rng.next());
            }
        }
    }
    // The fields after the stack: the same in both.
    let mut tail = Vec::new();
    for b in [st::WEIGHT, st::DATA_SRC, st::TRANSACTION] {
        if t & b != 0 {
            word(&mut tail, rng.next());
        }
    }
    if t & st::REGS_INTR != 0 {
        let abi = rng.below(3);
        word(&mut tail, abi);
        if abi != 0 {
            for _ in 0..e.regs_intr.count_ones() {
                word(&mut tail, rng.next());
            }
        }
    }
    for b in [
        st::PHYS_ADDR,
        st::CGROUP,
        st::DATA_PAGE_SIZE,
        st::CODE_PAGE_SIZE,
    ] {
        if t & b != 0 {
            word(&mut tail, rng.next());
        }
    }
    if t & st::AUX != 0 {
        let n = rng.below(4) * 8;
        word(&mut tail, n);
        tail.extend((0..n).map(|_| rng.next() as u8));
    }
    if t & st::STACK_USER == 0 {
        let r = finish(9, [head, tail].concat());
        return (r.clone(), r, false);
    }
    // The stack: size 0 (no user regs), or words with dyn_size 0, odd, all, any.
    let room = (65_000 - 8 - head.len() - tail.len() - 16) as u64 / 8;
    let size = if rng.chance(8) {
        0
    } else {
        8 * (1 + rng.below(room.min(600)))
    };
    let dyn_size = match rng.below(5) {
        0 => 0,
        1 => size,
        2 => (rng.below(size + 1) | 1).min(size),
        _ => rng.below(size + 1),
    };
    let stack = |keep: u64, rng: &mut Rng| {
        let mut s = Vec::new();
        word(&mut s, keep);
        if keep > 0 {
            s.extend((0..dyn_size.min(keep)).map(|i| (i as u8) ^ 0x5a));
            s.extend(std::iter::repeat_n(
                0xee,
                (keep - dyn_size.min(keep)) as usize,
            ));
            word(&mut s, dyn_size);
        }
        let _ = rng;
        s
    };
    let keep = if size == 0 {
        0
    } else {
        (dyn_size.div_ceil(8).max(1) * 8).min(size)
    };
    let whole = finish(9, [&head[..], &stack(size, rng), &tail].concat());
    let cut = finish(9, [&head[..], &stack(keep, rng), &tail].concat());
    (whole, cut, either)
}

/// A ring's worth of records.
pub struct Stream {
    /// As the kernel wrote them.
    pub whole: Vec<Vec<u8>>,
    /// As the cut must leave them.
    pub cut: Vec<Vec<u8>>,
    /// Where leaving the record whole is right too.
    pub either: Vec<bool>,
}

impl Stream {
    /// Whether `got` is the cut of record `i`.
    pub fn accepts(&self, i: usize, got: &[u8]) -> bool {
        got == self.cut[i] || (self.either[i] && got == self.whole[i])
    }

    /// Whether `out` is the cut of the whole stream, record by record.
    pub fn accepts_all(&self, out: &[u8]) -> bool {
        let mut at = 0;
        for i in 0..self.whole.len() {
            let Some(h) = out.get(at..at + 8) else {
                return false;
            };
            let n = u16::from_le_bytes([h[6], h[7]]) as usize;
            if at + n > out.len() || !self.accepts(i, &out[at..at + n]) {
                return false;
            }
            at += n;
        }
        at == out.len()
    }
}

pub fn stream(rng: &mut Rng, events: &[Event], n: usize) -> Stream {
    let mut s = Stream {
        whole: Vec::new(),
        cut: Vec::new(),
        either: Vec::new(),
    };
    for _ in 0..n {
        let (w, c, e) = record(rng, events);
        s.whole.push(w);
        s.cut.push(c);
        s.either.push(e);
    }
    s
}
