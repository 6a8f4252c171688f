//! The waits of `--off-cpu`: each thread's switch-out samples matched
//! with its switch-ins, whichever ring or drain unit they came through.

use rustc_hash::FxHashMap as HashMap;

use super::thread::Thread;
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
    /// A switch-out sample: the hash of its chain where it has one that
    /// stands for its stack (frame pointers), and its bytes (cut and
    /// copied), or none where the waits hold a sample of that stack
    /// already (see [`Waits::known`]).
    Sample {
        pid: u32,
        tid: u32,
        time: u64,
        key: Option<u64>,
        bytes: Vec<u8>,
    },
    /// A SWITCH record: `out` (with `preempt`) or in.
    Switch {
        pid: u32,
        tid: u32,
        time: u64,
        out: bool,
        preempt: bool,
    },
    /// A FORK (a new task with this tid) or an EXIT record.
    Task { tid: u32, time: u64, exit: bool },
}

impl Seen {
    pub(super) fn time(&self) -> u64 {
        match self {
            Seen::Sample { time, .. } | Seen::Switch { time, .. } | Seen::Task { time, .. } => {
                *time
            }
        }
    }

    fn tid(&self) -> u32 {
        match self {
            Seen::Sample { tid, .. } | Seen::Switch { tid, .. } | Seen::Task { tid, .. } => *tid,
        }
    }
}

/// How often the short waits added up are written (and threads gone
/// forgotten).
pub(super) const SUM_EVERY_NS: u64 = 1_000_000_000;

/// What a sample is added up by, with its thread: a 64-bit hash of its
/// pid and tid and its callchain (the bytes from the chain on: a
/// frame-pointer sample ends with it). None where the sample carries its
/// stack dump (dwarf): every dump differs.
pub(super) fn chain_hash(rec: &[u8], f: &Fields) -> Option<u64> {
    use std::hash::Hasher;
    if f.stack_dump {
        return None;
    }
    let mut h = rustc_hash::FxHasher::default();
    h.write(rec.get(f.tid..f.tid + 8)?);
    h.write(rec.get(f.callchain?..)?);
    Some(h.finish())
}

/// Stacks a recording keeps a sample of (past this, a new stack's waits
/// are written one by one, as a dwarf sample's are).
const MAX_STACKS: usize = 1 << 16;

/// How long events of several drain units are held before they are taken
/// in time order: a unit drains every ring at least each 100 ms, so by then
/// every unit has handed in what came before.
pub(super) const ORDER_DELAY_NS: u64 = 300_000_000;

/// The waits every drain unit of a recording shares.
#[derive(Default)]
pub(super) struct Waits {
    pub(super) threads: HashMap<u32, Thread>,
    /// Units feeding these waits.
    pub(super) units: usize,
    /// Several units: their events, held until every unit is past them.
    held: Vec<Seen>,
    /// The latest event time handed in: at the end, the end.
    pub(super) latest: u64,
    /// The earliest event time handed in (u64::MAX: none yet): the start.
    pub(super) start: u64,
    /// The off-CPU event's sample_type and an id of it: what a wait with
    /// no sample (a thread off CPU from the start) is written as.
    pub(super) bare: Option<(u64, u64)>,
    /// (pid, tid) of the threads there at the start (-p, -t, -a): each one
    /// never seen is written off CPU from the start to the end.
    pub(super) expected: Vec<(u32, u32)>,
    /// When the sums were last written.
    summed_at: u64,
    /// What the ended waits became.
    pub(super) ended: WaitsEnded,
    /// The stacks kept in [`WaitsEnded::stacks`], in the order they came:
    /// a unit that has seen them sends their waits' samples without bytes.
    pub(super) known: Vec<(u32, u64)>,
}

/// What the ended waits became: samples written, or short waits added up.
#[derive(Default)]
pub(super) struct WaitsEnded {
    /// Waits shorter than this are added up per (thread, stack) and
    /// written each [`SUM_EVERY_NS`] (perf 6.16's `--off-cpu-thresh`).
    thresh: u64,
    /// A sample of each stack (thread, chain hash), its ip the chain's
    /// first user frame where asked: it stands for every wait of that
    /// stack (their bytes differ in time and period, which are written).
    stacks: HashMap<(u32, u64), Vec<u8>>,
    /// The short waits added up: (thread, stack) -> time off CPU.
    sums: HashMap<(u32, u64), u64>,
    /// Sample buffers done with, for the units to use again.
    pub(super) spare: super::Spares,
    /// Switch-out samples seen.
    pub seen: u64,
    /// Off-CPU samples written.
    pub written: u64,
    /// Records of ids not the recording's, left out.
    pub foreign: u64,
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
            ended: WaitsEnded {
                thresh,
                ..Default::default()
            },
            start: u64::MAX,
            ..Default::default()
        }
    }

    /// A unit's pass's events (the latest time among them, and whether
    /// they are in time order): one unit's go in at once (sorted by time),
    /// several units' once they are [`ORDER_DELAY_NS`] old (or `all`, at
    /// the end), so one thread's records go in in time order whichever
    /// unit drained them.
    pub(super) fn take_in(
        &mut self,
        batch: &mut Vec<Seen>,
        latest: u64,
        sorted: bool,
        all: bool,
        f: &Fields,
        out: &mut Vec<u8>,
    ) {
        self.latest = self.latest.max(latest);
        // Stable: a sample and its SWITCH out keep their ring order. One
        // busy ring's pass is in order already.
        if !sorted {
            batch.sort_by_key(Seen::time);
        }
        if self.units <= 1 && self.held.is_empty() {
            // One unit: its pass goes in as it is.
            self.feed(batch.drain(..), f, out);
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
            self.feed(ready.into_iter(), f, out);
        }
        if all || self.latest.saturating_sub(self.summed_at) >= SUM_EVERY_NS {
            self.sweep(all, f, out);
            self.write_sums(f, out);
        }
    }

    /// The short waits added up since the last time, a sample per
    /// (thread, stack), stamped now (the latest time seen: later than any
    /// round already written).
    pub(super) fn write_sums(&mut self, f: &Fields, out: &mut Vec<u8>) {
        self.summed_at = self.latest;
        let t = &mut self.ended;
        for (key, ns) in t.sums.drain() {
            if let Some(s) = t.stacks.get(&key) {
                append(out, s, f, ns, self.latest);
                t.written += 1;
            }
        }
    }

    /// Takes events in time order; appends the samples of the waits they
    /// end to `out`.
    fn feed(&mut self, events: impl Iterator<Item = Seen>, f: &Fields, out: &mut Vec<u8>) {
        for e in events {
            let tid = e.tid();
            if self.threads.len() >= MAX_OPEN && !self.threads.contains_key(&tid) {
                // Threads gone while switched out never come back.
                self.threads.clear();
            }
            // One lookup an event: the thread is settled where it is.
            let Waits {
                threads,
                ended,
                known,
                ..
            } = self;
            let th = threads.entry(tid).or_default();
            if th.gone.is_some_and(|g| e.time() >= g) && !matches!(e, Seen::Task { .. }) {
                // The task exited: its last switches end in no wait.
                if let Seen::Sample { bytes, .. } = e {
                    ended.spare.give(bytes);
                }
                continue;
            }
            ended.note(th, tid, e, f, known);
            ended.settle(th, f, out);
        }
    }
}

impl WaitsEnded {
    /// Writes the waits of `th` that are known (ended, and whether
    /// blocked), or adds them up.
    pub(super) fn settle(&mut self, th: &mut Thread, f: &Fields, out: &mut Vec<u8>) {
        let mut i = 0;
        while i < th.waits.len() {
            let w = &th.waits[i];
            let (Some(blocked), Some(back)) = (w.blocked, w.back) else {
                i += 1;
                continue;
            };
            let w = th.waits.remove(i);
            self.preempted += !blocked as u64;
            let ns = back - w.out;
            match w.key {
                Some(k) if ns < self.thresh => {
                    *self.sums.entry(k).or_default() += ns;
                    self.waits_summed += 1;
                }
                Some(k) => {
                    if let Some(s) = self.stacks.get(&k) {
                        append(out, s, f, ns, back);
                        self.written += 1;
                    }
                }
                None if w.sample.is_empty() => {}
                None => {
                    let mut s = w.sample;
                    if f.user_ip {
                        user_frame_as_ip(&mut s, f);
                    }
                    append(out, &s, f, ns, back);
                    self.spare.give(s);
                    self.written += 1;
                }
            }
        }
    }
}

/// `sample` appended to `out` with its period `ns` and its time `time`.
pub(super) fn append(out: &mut Vec<u8>, sample: &[u8], f: &Fields, ns: u64, time: u64) {
    let at = out.len();
    out.extend_from_slice(sample);
    put(&mut out[at..], f.period, ns);
    put(&mut out[at..], f.time, time);
}

pub(super) fn put(s: &mut [u8], at: usize, v: u64) {
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

mod note;
#[cfg(test)]
mod tests;
