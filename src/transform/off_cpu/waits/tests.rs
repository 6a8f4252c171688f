//! The waits, from made-up switch records.

use super::*;
use crate::format::attr::sample_type as st;

const TYPE: u64 = st::IP | st::TID | st::TIME | st::ID | st::PERIOD | st::CALLCHAIN;

/// A switch-out sample of thread 7 at `t`: header, ip, pid/tid, time,
/// id, period, a chain of [PERF_CONTEXT_USER, 0x1234].
fn sample(t: u64) -> Seen {
    let mut s = vec![9u8, 0, 0, 0, 1, 0, 72, 0];
    for w in [
        0xffff_ffff_8100_0000u64,
        7 << 32 | 7,
        t,
        5,
        1,
        2,
        CONTEXT_USER,
        0x1234,
    ] {
        s.extend_from_slice(&w.to_le_bytes());
    }
    let key = chain_hash(&s, &Fields::of(TYPE).unwrap());
    Seen::Sample {
        pid: 7,
        tid: 7,
        time: t,
        key,
        bytes: s,
    }
}

/// `events` handed in as a unit hands them: with their latest time and
/// whether they are in order.
fn take_in(w: &mut Waits, mut events: Vec<Seen>, all: bool, out: &mut Vec<u8>) {
    let f = Fields {
        user_ip: true,
        ..Fields::of(TYPE).unwrap()
    };
    let latest = events.iter().map(Seen::time).max().unwrap_or(0);
    let sorted = events.is_sorted_by_key(Seen::time);
    w.take_in(&mut events, latest, sorted, all, &f, out);
}

/// Bytes of a stackless sample of [`TYPE`]: header, ip, pid/tid, time,
/// id, period, an empty chain.
const FIXED_SAMPLE: usize = 56;

fn switch(t: u64, out: bool) -> Seen {
    Seen::Switch {
        pid: 7,
        tid: 7,
        time: t,
        out,
        preempt: false,
    }
}

/// (period, time, ip) of each sample written.
fn written(out: &[u8], f: &Fields) -> Vec<(u64, u64, u64)> {
    out.chunks(72)
        .map(|s| {
            (
                get(s, f.period).unwrap(),
                get(s, f.time).unwrap(),
                get(s, f.ip).unwrap(),
            )
        })
        .collect()
}

#[test]
fn two_units_records_out_of_order_give_each_wait_its_own_switch_in() {
    let f = Fields::of(TYPE).unwrap();
    let mut w = Waits::with_thresh(0);
    w.units = 2;
    let mut out = Vec::new();
    // Unit B drained first: the first wait's switch-in and the second
    // wait; unit A then: the first wait and the second's switch-in.
    take_in(
        &mut w,
        vec![switch(20, false), sample(30), switch(31, true)],
        false,
        &mut out,
    );
    take_in(
        &mut w,
        vec![sample(10), switch(11, true), switch(40, false)],
        true,
        &mut out,
    );
    // Written with the user frame as ip, stamped at the switch-in.
    assert_eq!(written(&out, &f), [(10, 20, 0x1234), (10, 40, 0x1234)]);
}

#[test]
fn short_waits_are_added_up_per_stack_and_long_ones_written_alone() {
    let f = Fields::of(TYPE).unwrap();
    let mut w = Waits::with_thresh(15);
    let mut out = Vec::new();
    let seen = vec![
        sample(10),
        switch(11, true),
        switch(20, false),
        sample(30),
        switch(31, true),
        switch(40, false),
        sample(50),
        switch(51, true),
        switch(100, false),
    ];
    take_in(&mut w, seen, true, &mut out);
    // The 50-ns wait alone at its switch-in; the two 10-ns ones as one
    // sample of 20 ns, stamped at the latest time seen.
    assert_eq!(written(&out, &f), [(50, 100, 0x1234), (20, 100, 0x1234)]);
    assert_eq!(
        (w.ended.seen, w.ended.written, w.ended.waits_summed),
        (3, 2, 2)
    );
}

#[test]
fn a_sample_without_its_bytes_is_written_as_its_stacks_sample() {
    let f = Fields::of(TYPE).unwrap();
    let mut w = Waits::with_thresh(0);
    let mut out = Vec::new();
    take_in(
        &mut w,
        vec![sample(10), switch(11, true), switch(20, false)],
        false,
        &mut out,
    );
    // The stack is known now: a unit sends its next sample bare.
    assert_eq!(w.known.len(), 1);
    let Seen::Sample { key, .. } = sample(30) else {
        unreachable!()
    };
    let bare = Seen::Sample {
        pid: 7,
        tid: 7,
        time: 30,
        key,
        bytes: Vec::new(),
    };
    take_in(
        &mut w,
        vec![bare, switch(31, true), switch(45, false)],
        true,
        &mut out,
    );
    assert_eq!(written(&out, &f), [(10, 20, 0x1234), (15, 45, 0x1234)]);
    // A bare sample of a stack never kept is not written (nothing to
    // write it from).
    let mut w = Waits::with_thresh(0);
    let mut out = Vec::new();
    let lost = Seen::Sample {
        pid: 7,
        tid: 7,
        time: 30,
        key: Some(1),
        bytes: Vec::new(),
    };
    take_in(
        &mut w,
        vec![lost, switch(31, true), switch(45, false)],
        true,
        &mut out,
    );
    assert!(out.is_empty());
}

/// `e` as thread `tid`'s (of process `tid`).
fn of(tid: u32, e: Seen) -> Seen {
    match e {
        Seen::Sample {
            time, key, bytes, ..
        } => Seen::Sample {
            pid: tid,
            tid,
            time,
            key,
            bytes,
        },
        Seen::Switch {
            time, out, preempt, ..
        } => Seen::Switch {
            pid: tid,
            tid,
            time,
            out,
            preempt,
        },
        Seen::Task { time, exit, .. } => Seen::Task { tid, time, exit },
    }
}

fn task(t: u64, exit: bool) -> Seen {
    Seen::Task {
        tid: 7,
        time: t,
        exit,
    }
}

#[test]
fn a_task_gone_leaves_no_wait_for_the_next_task_with_its_tid() {
    // Issue 41, item 8: the task's EXIT, then its last switch-out (the
    // kernel's order); its tid reused 1000 ns later: the new task's first
    // switch-in ends no wait of the old one's.
    let mut w = Waits::with_thresh(0);
    let mut out = Vec::new();
    let seen = vec![
        task(5, true),
        sample(10),
        switch(11, true),
        task(1000, false),
        switch(1010, false),
        sample(1020),
        switch(1021, true),
        switch(1030, false),
    ];
    take_in(&mut w, seen, true, &mut out);
    let f = Fields::of(TYPE).unwrap();
    assert_eq!(written(&out, &f), [(10, 1030, 0x1234)]);
    // A wait open at an EXIT (its switch-in lost) goes with it.
    let mut w = Waits::with_thresh(0);
    let mut out = Vec::new();
    let seen = vec![sample(10), switch(11, true), task(20, true)];
    take_in(&mut w, seen, false, &mut out);
    assert!(w.threads[&7].waits.is_empty());
}

#[test]
fn threads_gone_are_forgotten_with_their_samples() {
    // Issue 41, item 17: a fork-churning machine's tasks each leave a
    // switched-out thread behind; a second after its EXIT it is forgotten.
    let mut w = Waits::with_thresh(0);
    let mut out = Vec::new();
    for tid in 100..1100 {
        let t = u64::from(tid) * 1000;
        let seen = vec![
            of(tid, task(t, true)),
            of(tid, sample(t + 10)),
            of(tid, switch(t + 11, true)),
        ];
        take_in(&mut w, seen, false, &mut out);
    }
    take_in(
        &mut w,
        vec![switch(3 * SUM_EVERY_NS, false)],
        false,
        &mut out,
    );
    assert_eq!(w.threads.len(), 1, "only thread 7 is left");
    assert!(out.is_empty());
}

#[test]
fn a_wait_open_at_the_end_is_written_up_to_the_end() {
    // Issue 41, item 9: thread 7 switches out at 10 and never comes back;
    // the recording's last event (thread 8's) is at 500.
    let f = Fields::of(TYPE).unwrap();
    let mut w = Waits::with_thresh(0);
    let mut out = Vec::new();
    let seen = vec![sample(10), switch(11, true), of(8, switch(500, false))];
    take_in(&mut w, seen, true, &mut out);
    assert_eq!(written(&out, &f), [(490, 500, 0x1234)]);
}

#[test]
fn a_thread_off_cpu_from_the_start_is_written_from_the_start() {
    // Issue 41, item 9 (-p): the recording starts at 10 (thread 8 comes
    // back then); thread 7's first record is a switch-in at 50; thread 9
    // was there at the start and never ran until the end, at 300. Each
    // gets a stackless sample from the start.
    let f = Fields::of(TYPE).unwrap();
    let mut w = Waits::with_thresh(0);
    w.bare = Some((TYPE, 1));
    w.expected = vec![(7, 7), (9, 9)];
    w.start = 10;
    let mut out = Vec::new();
    let seen = vec![
        of(8, switch(10, false)),
        switch(50, false),
        of(8, switch(300, false)),
    ];
    take_in(&mut w, seen, true, &mut out);
    let got: Vec<(u64, u64, u64)> = out
        .chunks(FIXED_SAMPLE)
        .map(|s| {
            let tid = get(s, f.tid).unwrap() >> 32;
            (tid, get(s, f.period).unwrap(), get(s, f.time).unwrap())
        })
        .collect();
    assert_eq!(got, [(7, 40, 50), (9, 290, 300)], "{out:?}");
}
