//! Which of the async sink's writes landed: the file offset below which
//! every byte was written, in order, before any write failed. A salvage
//! after a failed write keeps the records up to there.

use std::io;

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

    /// The write of `len` bytes at `start` landed whole. A completion that
    /// matches no submitted write (another offset or length) means the
    /// backend wrote something else than it was handed: an error, and
    /// nothing after it counts as landed.
    pub fn landed(&mut self, start: u64, len: usize) -> io::Result<()> {
        let end = start + len as u64;
        let Some(w) = self
            .waiting
            .iter_mut()
            .find(|w| (w.0, w.1) == (start, end) && !w.2)
        else {
            return Err(io::Error::other(format!(
                "a write completed for {len} bytes at offset {start}, which matches no write submitted: what reached the file is not what was handed in"
            )));
        };
        w.2 = true;
        // Writes are submitted back to back, so the landed ones at the
        // front extend the prefix (at most MAX_BUFFERS are waiting).
        while let Some(&(_, end, true)) = self.waiting.first() {
            self.end = end;
            self.ends.push(end);
            self.waiting.remove(0);
        }
        Ok(())
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
        l.landed(200, 50).unwrap();
        assert_eq!(l.end(), 100);
        l.landed(100, 100).unwrap();
        assert_eq!(l.end(), 250);
        l.landed(250, 150).unwrap();
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
        l.landed(0, 10).unwrap();
        // The write at 10 failed (it never lands); the one at 20 landed.
        l.landed(20, 10).unwrap();
        assert_eq!(l.end(), 10);
    }

    #[test]
    fn a_completion_no_submission_matches_is_an_error() {
        let mut l = Landed::new(0);
        l.submitted(0, 10);
        l.submitted(10, 20);
        assert!(l.landed(10, 5).is_err(), "a short length");
        assert!(l.landed(12, 8).is_err(), "another offset");
        l.landed(0, 10).unwrap();
        assert!(l.landed(0, 10).is_err(), "the same write twice");
        assert_eq!(l.end(), 10);
    }
}
