//! Sample buffers used again: a switch-out sample is copied out of the
//! ring into a buffer that lives until its wait ends, hundreds of thousands
//! a second on a switch-heavy program; the buffers go round instead of
//! through the allocator, up to 8 MiB of them a pool.

/// Bytes of buffers one pool keeps (a pass's samples, at a frame-pointer
/// sample's 200-odd bytes, are tens of thousands of buffers).
const BUDGET: usize = 8 << 20;

/// A pool of buffers, at most [`BUDGET`] bytes of them.
#[derive(Default)]
pub(super) struct Spares {
    bufs: Vec<Vec<u8>>,
    bytes: usize,
}

impl Spares {
    /// An empty buffer: one used before, or a new one.
    pub(super) fn get(&mut self) -> Vec<u8> {
        match self.bufs.pop() {
            Some(mut b) => {
                self.bytes -= b.capacity();
                b.clear();
                b
            }
            None => Vec::new(),
        }
    }

    /// `b` kept for later, where the budget has room.
    pub(super) fn give(&mut self, b: Vec<u8>) {
        if b.capacity() > 0 && self.bytes + b.capacity() <= BUDGET {
            self.bytes += b.capacity();
            self.bufs.push(b);
        }
    }

    /// The fuller of the two pools here, the emptier there: a unit whose
    /// buffers ran out takes the ones the waits gave back, in one move.
    pub(super) fn refill_from(&mut self, other: &mut Spares) {
        if self.bufs.len() < other.bufs.len() {
            std::mem::swap(self, other);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_go_round_within_the_budget() {
        let mut waits = Spares::default();
        let mut unit = Spares::default();
        let b = Vec::with_capacity(100);
        let p = b.as_ptr();
        waits.give(b);
        unit.refill_from(&mut waits);
        let again = unit.get();
        assert_eq!(again.as_ptr(), p, "the same buffer again");
        assert_eq!((unit.bytes, waits.bytes), (0, 0));
        // Past the budget a buffer is let go.
        waits.give(Vec::with_capacity(BUDGET));
        waits.give(Vec::with_capacity(1));
        assert_eq!((waits.bufs.len(), waits.bytes), (1, BUDGET));
    }
}
