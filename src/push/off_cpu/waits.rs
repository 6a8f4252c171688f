//! The waits of `--off-cpu`: each thread's switch-out samples matched
//! with its switch-ins, whichever ring or drain unit they came through.

use rustc_hash::FxHashMap as HashMap;

use super::Fields;
use crate::format::record::misc;

/// Threads with a wait open at once; past this the oldest go (a thread
/// that exits while switched out never comes back).
const MAX_OPEN: usize = 1 << 16;

/// `PERF_CONTEXT_USER`: the user part of a callchain follows.
const CONTEXT_USER: u64 = 0xffff_ffff_ffff_fe00;

/// What one record of the off-CPU event said.
#[derive(Clone)]
pub(super) enum Seen {
    /// A switch-out sample, cut and copied.
    Sample { tid: u32, time: u64, bytes: Vec<u8> },
    /// A SWITCH record: `out` (with `preempt`) or in.
    Switch {
        tid: u32,
        time: u64,
        out: bool,
        preempt: bool,
    },
}

impl Seen {
    pub(super) fn time(&self) -> u64 {
        match self {
            Seen::Sample { time, .. } | Seen::Switch { time, .. } => *time,
        }
    }
}

/// One open wait of a thread.
struct Wait {
    out: u64,
    sample: Vec<u8>,
    /// Known once its SWITCH out came: a wait (true) or a preemption.
    blocked: Option<bool>,
    back: Option<u64>,
}

/// A thread's open waits and the switch-ins not matched yet, each in time
/// order: its records reach the waits out of order where they were in
/// different rings (or units).
#[derive(Default)]
struct Thread {
    waits: Vec<Wait>,
    ins: Vec<u64>,
}

/// At most this many of a thread's waits (or switch-ins) are kept open: a
/// record lost leaves one unmatched.
const PER_THREAD: usize = 8;

impl Thread {
    /// The wait a switch-in at `t` ends: the last switch-out before it
    /// (a thread switches out and in by turns).
    fn ending(&mut self, t: u64) -> Option<&mut Wait> {
        let i = self.waits.partition_point(|w| w.out < t);
        self.waits[..i].last_mut().filter(|w| w.back.is_none())
    }

    fn sample(&mut self, out: u64, sample: Vec<u8>) {
        let i = self.waits.partition_point(|w| w.out < out);
        // Its switch-in may have come first: the first one after it,
        // before the thread's next switch-out.
        let next = self.waits.get(i).map_or(u64::MAX, |w| w.out);
        let back = self.ins.iter().position(|&t| t > out && t < next);
        let back = back.map(|j| self.ins.remove(j));
        self.waits.insert(
            i,
            Wait {
                out,
                sample,
                blocked: None,
                back,
            },
        );
        if self.waits.len() > PER_THREAD {
            self.waits.remove(0);
        }
    }

    fn switch_out(&mut self, t: u64, preempt: bool) {
        let i = self.waits.partition_point(|w| w.out <= t);
        if let Some(w) = self.waits[..i].last_mut().filter(|w| w.blocked.is_none()) {
            w.blocked = Some(!preempt);
        }
    }

    fn switch_in(&mut self, t: u64) {
        match self.ending(t) {
            Some(w) => w.back = Some(t),
            None => {
                let i = self.ins.partition_point(|&x| x < t);
                self.ins.insert(i, t);
                if self.ins.len() > PER_THREAD {
                    self.ins.remove(0);
                }
            }
        }
    }
}

/// How often the short waits added up are written.
const SUM_EVERY_NS: u64 = 1_000_000_000;

/// What a sample is added up by: its thread and a 64-bit hash of its
/// callchain (the bytes from the chain on: a frame-pointer sample ends with
/// it). None where the sample carries its stack dump (dwarf): every dump
/// differs.
fn stack_key(s: &[u8], f: &Fields, tid: u32) -> Option<(u32, u64)> {
    use std::hash::Hasher;
    if f.stack_dump {
        return None;
    }
    let mut h = rustc_hash::FxHasher::default();
    h.write(s.get(f.callchain?..)?);
    Some((tid, h.finish()))
}

/// How long events of several drain units are held before they are taken
/// in time order: a unit drains every ring at least each 100 ms, so by then
/// every unit has handed in what came before.
const ORDER_DELAY_NS: u64 = 300_000_000;

/// The waits every drain unit of a recording shares.
#[derive(Default)]
pub(super) struct Waits {
    threads: HashMap<u32, Thread>,
    /// Drain units feeding these waits.
    pub(super) units: usize,
    /// Several units: their events, held until every unit is past them.
    held: Vec<Seen>,
    /// The latest event time handed in.
    latest: u64,
    /// When the sums were last written.
    summed_at: u64,
    /// What the ended waits became.
    pub(super) tally: WaitsEnded,
}

/// What the ended waits became: samples written, or short waits added up.
#[derive(Default)]
pub(super) struct WaitsEnded {
    /// Waits shorter than this are added up per (thread, stack) and
    /// written each [`SUM_EVERY_NS`] (perf 6.16's `--off-cpu-thresh`).
    thresh: u64,
    /// The short waits added up: (thread, stack) -> sample, time off CPU.
    sums: HashMap<(u32, u64), (Vec<u8>, u64)>,
    /// Sample buffers done with, for the units to use again.
    pub(super) spare: super::Spares,
    /// Switch-out samples seen.
    pub seen: u64,
    /// Off-CPU samples written.
    pub written: u64,
    /// Waits added up into those samples.
    pub waits_summed: u64,
    /// Switch-outs that were preemptions: written too (perf's BPF program
    /// leaves them out), so a thread's on- and off-CPU time add up to its
    /// wall time; the time runnable, waiting for a CPU, is off-CPU time.
    pub preempted: u64,
}

impl Waits {
    /// No waits yet; those shorter than `thresh` ns are added up.
    pub(super) fn with_thresh(thresh: u64) -> Waits {
        Waits {
            tally: WaitsEnded {
                thresh,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// A unit's pass's events: one unit's go in at once (sorted by time),
    /// several units' once they are [`ORDER_DELAY_NS`] old (or `all`, at
    /// the end), so one thread's records go in in time order whichever
    /// unit drained them.
    pub(super) fn take_in(
        &mut self,
        batch: &mut Vec<Seen>,
        all: bool,
        f: &Fields,
        user_ip: bool,
        out: &mut Vec<u8>,
    ) {
        self.latest = batch.iter().map(Seen::time).fold(self.latest, u64::max);
        // Stable: a sample and its SWITCH out keep their ring order. One
        // busy ring's pass is in order already.
        if !batch.is_sorted_by_key(Seen::time) {
            batch.sort_by_key(Seen::time);
        }
        if self.units <= 1 && self.held.is_empty() {
            // One unit: its pass goes in as it is.
            self.feed(batch.drain(..), f, user_ip, out);
        } else {
            self.held.append(batch);
            self.held.sort_by_key(Seen::time);
            let n = if all || self.units <= 1 {
                self.held.len()
            } else {
                let upto = self.latest.saturating_sub(ORDER_DELAY_NS);
                self.held.partition_point(|e| e.time() <= upto)
            };
            let ready: Vec<Seen> = self.held.drain(..n).collect();
            self.feed(ready.into_iter(), f, user_ip, out);
        }
        if all || self.latest.saturating_sub(self.summed_at) >= SUM_EVERY_NS {
            self.write_sums(f, out);
        }
    }

    /// The short waits added up since the last time, a sample per
    /// (thread, stack), stamped now (the latest time seen: later than any
    /// round already written).
    fn write_sums(&mut self, f: &Fields, out: &mut Vec<u8>) {
        self.summed_at = self.latest;
        let t = &mut self.tally;
        for (_, (mut s, ns)) in t.sums.drain() {
            put(&mut s, f.period, ns);
            put(&mut s, f.time, self.latest);
            out.extend_from_slice(&s);
            t.written += 1;
            t.spare.give(s);
        }
    }

    /// Takes events in time order; appends the samples of the waits they
    /// end to `out`.
    fn feed(
        &mut self,
        events: impl Iterator<Item = Seen>,
        f: &Fields,
        user_ip: bool,
        out: &mut Vec<u8>,
    ) {
        for e in events {
            let tid = match &e {
                Seen::Sample { tid, .. } | Seen::Switch { tid, .. } => *tid,
            };
            if self.threads.len() >= MAX_OPEN && !self.threads.contains_key(&tid) {
                // Threads gone while switched out never come back.
                self.threads.clear();
            }
            // One lookup an event: the thread is settled where it is.
            let Waits { threads, tally, .. } = self;
            let th = threads.entry(tid).or_default();
            match e {
                Seen::Sample { time, bytes, .. } => {
                    tally.seen += 1;
                    th.sample(time, bytes);
                }
                Seen::Switch {
                    time,
                    out: true,
                    preempt,
                    ..
                } => th.switch_out(time, preempt),
                Seen::Switch { time, .. } => th.switch_in(time),
            }
            tally.settle(th, tid, f, user_ip, out);
        }
    }
}

impl WaitsEnded {
    /// Writes the waits of `th` (thread `tid`) that are known (ended, and
    /// whether blocked), or adds them up.
    fn settle(&mut self, th: &mut Thread, tid: u32, f: &Fields, user_ip: bool, out: &mut Vec<u8>) {
        let mut i = 0;
        while i < th.waits.len() {
            let w = &th.waits[i];
            let (Some(blocked), Some(back)) = (w.blocked, w.back) else {
                i += 1;
                continue;
            };
            let w = th.waits.remove(i);
            self.preempted += !blocked as u64;
            let mut s = w.sample;
            let ns = back - w.out;
            // The key is the chain: the ip written from it changes nothing.
            let key = (ns < self.thresh).then(|| stack_key(&s, f, tid)).flatten();
            if let Some(sum) = key.and_then(|k| self.sums.get_mut(&k)) {
                sum.1 += ns;
                self.waits_summed += 1;
                self.spare.give(s);
                continue;
            }
            if user_ip {
                user_frame_as_ip(&mut s, f);
            }
            if let Some(key) = key {
                self.waits_summed += 1;
                self.sums.insert(key, (s, ns));
                continue;
            }
            put(&mut s, f.period, ns);
            put(&mut s, f.time, back);
            out.extend_from_slice(&s);
            self.spare.give(s);
            self.written += 1;
        }
    }
}

fn put(s: &mut [u8], at: usize, v: u64) {
    if let Some(w) = s.get_mut(at..at + 8) {
        w.copy_from_slice(&v.to_le_bytes());
    }
}

fn get(s: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(s.get(at..at + 8)?.try_into().ok()?))
}

/// The sample's ip made its chain's first user frame, in user mode (as
/// perf's off-CPU samples: chains of user frames only).
fn user_frame_as_ip(s: &mut [u8], f: &Fields) {
    if let Some(ip) = first_user_ip(s, f) {
        put(s, f.ip, ip);
        let m = u16::from_le_bytes([s[4], s[5]]);
        let m = (m & !misc::CPUMODE_MASK) | misc::USER;
        s[4..6].copy_from_slice(&m.to_le_bytes());
    }
}

/// The first address after the chain's `PERF_CONTEXT_USER`.
fn first_user_ip(s: &[u8], f: &Fields) -> Option<u64> {
    let at = f.callchain?;
    let nr = get(s, at)? as usize;
    let mut chain = (0..nr.min(512)).map_while(|i| get(s, at + 8 + 8 * i));
    chain.find(|&ip| ip == CONTEXT_USER)?;
    chain.next()
}

#[cfg(test)]
mod tests {
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
        Seen::Sample {
            tid: 7,
            time: t,
            bytes: s,
        }
    }

    fn switch(t: u64, out: bool) -> Seen {
        Seen::Switch {
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
        w.take_in(
            &mut vec![switch(20, false), sample(30), switch(31, true)],
            false,
            &f,
            true,
            &mut out,
        );
        w.take_in(
            &mut vec![sample(10), switch(11, true), switch(40, false)],
            true,
            &f,
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
        let mut seen = vec![
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
        w.take_in(&mut seen, true, &f, true, &mut out);
        // The 50-ns wait alone at its switch-in; the two 10-ns ones as one
        // sample of 20 ns, stamped at the latest time seen.
        assert_eq!(written(&out, &f), [(50, 100, 0x1234), (20, 100, 0x1234)]);
        assert_eq!(
            (w.tally.seen, w.tally.written, w.tally.waits_summed),
            (3, 2, 2)
        );
    }
}
