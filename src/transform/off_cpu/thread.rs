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
    pub(super) ins: Vec<u64>,
    /// Its process (from its records).
    pub(super) pid: u32,
    /// Its EXIT's time: records after it end no wait.
    pub(super) gone: Option<u64>,
    /// Any record of it seen (or its FORK: it was not there at the start).
    seen: bool,
    /// Its first record was a switch-in at this time: off CPU since the
    /// start, unless a switch-out before it turns up (settled in a sweep).
    pub(super) first_in: Option<u64>,
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
        self.seen = true;
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
        self.seen = true;
        let i = self.waits.partition_point(|w| w.out <= t);
        if let Some(w) = self.waits[..i].last_mut().filter(|w| w.blocked.is_none()) {
            w.blocked = Some(!preempt);
        }
    }

    pub(super) fn switch_in(&mut self, t: u64) {
        if !std::mem::replace(&mut self.seen, true) {
            self.first_in = Some(t);
        }
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

    /// Its EXIT (`exit`) or FORK at `t`: the waits not ended go (the task
    /// is gone, or a new one has its tid), returned for their buffers.
    pub(super) fn task(&mut self, t: u64, exit: bool) -> Vec<Wait> {
        let open = self.waits.iter().any(|w| w.back.is_none());
        let dropped = if open {
            let (keep, gone) = std::mem::take(&mut self.waits)
                .into_iter()
                .partition(|w| w.back.is_some());
            self.waits = keep;
            gone
        } else {
            Vec::new()
        };
        if exit {
            self.gone = Some(t);
        } else {
            *self = Thread {
                seen: true,
                waits: std::mem::take(&mut self.waits),
                ..Thread::default()
            };
        }
        dropped
    }

    /// The recording ends at `end`: every wait still open ends there.
    pub(super) fn close_open(&mut self, end: u64) {
        for w in self.waits.iter_mut().filter(|w| w.back.is_none()) {
            w.back = Some(end.max(w.out));
            w.blocked.get_or_insert(true);
        }
    }
}
