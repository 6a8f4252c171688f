//! Which of the async sink's writes landed: the file offset below which
//! every byte was written, in order, before any write failed. A salvage
//! after a failed write keeps the records up to there.

use crate::push::sink::RecentEnds;

/// The sink's writes in submission (= offset) order.
#[derive(Default)]
pub struct Landed {
    /// Submitted, not settled as a prefix yet: (start, end, landed).
    waiting: Vec<(u64, u64, bool)>,
    /// Every byte below this offset landed. A write that failed (or was
    /// never submitted) never lands, so nothing after it counts.
    end: u64,
    /// Recent values of `end` (buffer ends, so record boundaries).
    ends: RecentEnds,
}

impl Landed {
    /// Nothing in flight; everything below `offset` is in the file.
    pub fn new(offset: u64) -> Self {
        let mut l = Landed {
            end: offset,
            ..Default::default()
        };
        l.ends.push(offset);
        l
    }

    /// A write of `[start, end)` was submitted.
    pub fn submitted(&mut self, start: u64, end: u64) {
        self.waiting.push((start, end, false));
    }

    /// The write that starts at `start` landed whole.
    pub fn landed(&mut self, start: u64) {
        if let Some(w) = self.waiting.iter_mut().find(|w| w.0 == start) {
            w.2 = true;
        }
        // Writes are submitted back to back, so the landed ones at the
        // front extend the prefix (at most MAX_BUFFERS are waiting).
        while let Some(&(_, end, true)) = self.waiting.first() {
            self.end = end;
            self.ends.push(end);
            self.waiting.remove(0);
        }
    }

    /// The offset below which everything landed.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// Recent prefix ends, newest included (file offsets, in no order).
    pub fn recent_ends(&self) -> &[u64] {
        self.ends.as_slice()
    }
}

#[cfg(test)]
mod tests {
    use super::Landed;

    #[test]
    fn the_prefix_grows_only_over_writes_that_landed_in_order() {
        let mut l = Landed::new(100);
        l.submitted(100, 200);
        l.submitted(200, 250);
        l.submitted(250, 400);
        // The second lands first: not a prefix yet.
        l.landed(200);
        assert_eq!(l.end(), 100);
        l.landed(100);
        assert_eq!(l.end(), 250);
        l.landed(250);
        assert_eq!(l.end(), 400);
        let mut ends = l.recent_ends().to_vec();
        ends.sort_unstable();
        assert_eq!(ends, [100, 200, 250, 400]);
    }

    #[test]
    fn nothing_after_a_failed_write_counts() {
        let mut l = Landed::new(0);
        l.submitted(0, 10);
        l.submitted(10, 20);
        l.submitted(20, 30);
        l.landed(0);
        // The write at 10 failed (it never lands); the one at 20 landed.
        l.landed(20);
        assert_eq!(l.end(), 10);
    }
}
