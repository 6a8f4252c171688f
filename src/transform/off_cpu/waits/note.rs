//! Each event noted in its thread's waits: a switch-out sample's stack
//! kept, a switch out or in, a FORK or EXIT.

use super::{user_frame_as_ip, Seen, WaitsEnded, MAX_STACKS};
use crate::transform::off_cpu::thread::Thread;
use crate::transform::off_cpu::Fields;

impl WaitsEnded {
    /// Event `e` of thread `tid` (`th`, not gone) noted: a switch-out
    /// sample's stack kept (see [`keep_stack`](Self::keep_stack)), a
    /// switch out or in, a FORK or EXIT.
    #[inline]
    pub(super) fn note(
        &mut self,
        th: &mut Thread,
        tid: u32,
        e: Seen,
        f: &Fields,
        known: &mut Vec<(u32, u64)>,
    ) {
        match e {
            Seen::Sample {
                pid,
                time,
                key,
                bytes,
                ..
            } => {
                self.seen += 1;
                th.pid = pid;
                let key = key.map(|h| (tid, h));
                let (bytes, key) = self.keep_stack(key, bytes, f, known);
                th.sample(time, bytes, key);
            }
            Seen::Switch {
                pid,
                time,
                out: true,
                preempt,
                ..
            } => {
                th.pid = pid;
                th.switch_out(time, preempt);
            }
            Seen::Switch { pid, time, .. } => {
                th.pid = pid;
                th.switch_in(time);
            }
            Seen::Task { time, exit, .. } => {
                for w in th.task(time, exit) {
                    self.spare.give(w.sample);
                }
            }
        }
    }

    /// A switch-out sample of stack `key` (None: a stack of its own) and
    /// its `bytes` (empty: its stack's sample stands for it): what its
    /// wait keeps. The first sample of a stack is kept as the stack's
    /// (and the stack noted in `known`); a later one's bytes go spare.
    fn keep_stack(
        &mut self,
        key: Option<(u32, u64)>,
        mut bytes: Vec<u8>,
        f: &Fields,
        known: &mut Vec<(u32, u64)>,
    ) -> (Vec<u8>, Option<(u32, u64)>) {
        let Some(k) = key else {
            return (bytes, None);
        };
        if self.stacks.contains_key(&k) {
            if bytes.capacity() > 0 {
                self.spare.give(bytes);
            }
            return (Vec::new(), key);
        }
        if bytes.is_empty() || self.stacks.len() >= MAX_STACKS {
            // No room for another stack: the wait is written alone.
            return (bytes, None);
        }
        if f.user_ip {
            user_frame_as_ip(&mut bytes, f);
        }
        self.stacks.insert(k, bytes);
        known.push(k);
        (Vec::new(), key)
    }
}
