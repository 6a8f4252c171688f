//! The waits no switch-in ends: a thread off CPU from the start (its first
//! record a switch-in, or none at all) and the waits still open at the end;
//! and the threads gone, forgotten.

use rustc_hash::FxHashSet;

use super::bare::bare_sample;
use super::waits::{append, Waits, WaitsEnded, ORDER_DELAY_NS, SUM_EVERY_NS};
use super::Fields;

impl Waits {
    /// Each [`SUM_EVERY_NS`], and at the end (`all`): the threads whose
    /// first record, a switch-in old enough that no switch-out before it
    /// can still come, was their first: off CPU from the start to it. The
    /// threads gone a while are forgotten. At the end every wait still
    /// open is written up to the end, and each thread there at the start
    /// and never seen is written off CPU from the start to the end.
    pub(super) fn sweep(&mut self, all: bool, f: &Fields, out: &mut Vec<u8>) {
        let end = self.latest;
        let upto = if all {
            u64::MAX
        } else {
            end.saturating_sub(ORDER_DELAY_NS)
        };
        let (start, bare) = (self.start, self.bare);
        let mut forgotten = FxHashSet::default();
        let Waits { threads, ended, .. } = self;
        threads.retain(|&tid, th| {
            if let Some(t) = th.first_in.filter(|&t| t <= upto) {
                th.first_in = None;
                if let Some(i) = th.ins.iter().position(|&x| x == t) {
                    th.ins.remove(i);
                    ended.write_bare(bare, (th.pid, tid), (start, t), f, out);
                }
            }
            if all {
                th.close_open(end);
                ended.settle(th, f, out);
            }
            let keep = all
                || th
                    .gone
                    .is_none_or(|g| g.saturating_add(SUM_EVERY_NS) >= end);
            if !keep {
                forgotten.insert(tid);
            }
            keep
        });
        if !forgotten.is_empty() {
            self.expected.retain(|(_, tid)| !forgotten.contains(tid));
        }
        if all {
            for &(pid, tid) in &self.expected {
                if !self.threads.contains_key(&tid) {
                    self.ended
                        .write_bare(bare, (pid, tid), (start, end), f, out);
                }
            }
        }
    }
}

impl WaitsEnded {
    /// A wait of thread `(pid, tid)` from `from` to `to`, that no
    /// switch-out sample began: written as a sample of the off-CPU event
    /// (`bare`: its sample_type and an id) with no stack.
    fn write_bare(
        &mut self,
        bare: Option<(u64, u64)>,
        (pid, tid): (u32, u32),
        (from, to): (u64, u64),
        f: &Fields,
        out: &mut Vec<u8>,
    ) {
        let Some((sample_type, id)) = bare else {
            return;
        };
        if from >= to {
            return;
        }
        if let Some(s) = bare_sample(sample_type, id, pid, tid) {
            append(out, &s, f, to - from, to);
            self.written += 1;
        }
    }
}
