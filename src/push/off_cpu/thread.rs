//! One thread's waits: its switch-out samples matched with its switch-ins,
//! whichever ring or drain unit they came through.

/// One open wait of a thread.
pub(super) struct Wait {
    pub(super) out: u64,
    /// Its sample's bytes; empty where its stack's sample stands for it.
    pub(super) sample: Vec<u8>,
    /// Its stack: (thread, hash of its chain), where a sample of that
    /// stack is kept (and stands for it).
    pub(super) key: Option<(u32, u64)>,
    /// Known once its SWITCH out came: a wait (true) or a preemption.
    pub(super) blocked: Option<bool>,
    pub(super) back: Option<u64>,
}

/// A thread's open waits and the switch-ins not matched yet, each in time
/// order: its records reach the waits out of order where they were in
/// different rings (or units).
#[derive(Default)]
pub(super) struct Thread {
    pub(super) waits: Vec<Wait>,
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

    pub(super) fn sample(&mut self, out: u64, sample: Vec<u8>, key: Option<(u32, u64)>) {
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
                key,
                blocked: None,
                back,
            },
        );
        if self.waits.len() > PER_THREAD {
            self.waits.remove(0);
        }
    }

    pub(super) fn switch_out(&mut self, t: u64, preempt: bool) {
        let i = self.waits.partition_point(|w| w.out <= t);
        if let Some(w) = self.waits[..i].last_mut().filter(|w| w.blocked.is_none()) {
            w.blocked = Some(!preempt);
        }
    }

    pub(super) fn switch_in(&mut self, t: u64) {
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
