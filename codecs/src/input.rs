//! The input of one push: a ring-buffer region, in one or two pieces.

/// One push worth of bytes: the readable region of a ring buffer, which is two
/// slices when it wraps around the end of the buffer. Codecs read the pieces in
/// order and never need them contiguous, so the ring is never copied to be
/// straightened.
#[derive(Clone, Copy, Debug, Default)]
pub struct Input<'a> {
    /// The bytes up to the end of the ring buffer (or all of them).
    pub first: &'a [u8],
    /// The bytes from the start of the ring buffer, empty unless the region wraps.
    pub second: &'a [u8],
}

impl<'a> Input<'a> {
    /// A region in one piece.
    pub fn one(first: &'a [u8]) -> Self {
        Input { first, second: &[] }
    }

    /// A region that wraps: `first` then `second`.
    pub fn two(first: &'a [u8], second: &'a [u8]) -> Self {
        Input { first, second }
    }

    /// Total number of bytes.
    pub fn len(&self) -> usize {
        self.first.len() + self.second.len()
    }

    /// True if both pieces are empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The non-empty pieces, in order.
    pub fn parts(&self) -> impl Iterator<Item = &'a [u8]> {
        [self.first, self.second]
            .into_iter()
            .filter(|p| !p.is_empty())
    }

    /// The 8 bytes at offset `at` of the concatenation (which may straddle
    /// the two slices). Panics if they run past the end.
    #[inline(always)]
    pub fn read8(&self, at: usize) -> [u8; 8] {
        let f = self.first.len();
        let mut b = [0u8; 8];
        if at + 8 <= f {
            b.copy_from_slice(&self.first[at..at + 8]);
        } else if at >= f {
            b.copy_from_slice(&self.second[at - f..at - f + 8]);
        } else {
            for (k, x) in b.iter_mut().enumerate() {
                let i = at + k;
                *x = if i < f {
                    self.first[i]
                } else {
                    self.second[i - f]
                };
            }
        }
        b
    }

    /// The first `n` bytes and the rest, as two inputs (for splitting a drain into
    /// record-sized chunks). `n` is clamped to `len()`.
    pub fn split_at(&self, n: usize) -> (Input<'a>, Input<'a>) {
        let n = n.min(self.len());
        if n <= self.first.len() {
            let (a, b) = self.first.split_at(n);
            (Input::one(a), Input::two(b, self.second))
        } else {
            let (a, b) = self.second.split_at(n - self.first.len());
            (Input::two(self.first, a), Input::one(b))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read8_at_every_point_across_the_wrap() {
        let data: Vec<u8> = (0..40u8).collect();
        for cut in 0..=data.len() {
            let input = Input::two(&data[..cut], &data[cut..]);
            for at in 0..=data.len() - 8 {
                assert_eq!(input.read8(at), data[at..at + 8], "cut {cut} at {at}");
            }
        }
    }

    #[test]
    fn split_at_every_point_keeps_bytes_in_order() {
        let (a, b) = (b"abc".as_slice(), b"defg".as_slice());
        let input = Input::two(a, b);
        for n in 0..=input.len() + 2 {
            let (x, y) = input.split_at(n);
            let mut joined: Vec<u8> = x.parts().flatten().copied().collect();
            assert_eq!(x.len(), n.min(7));
            joined.extend(y.parts().flatten());
            assert_eq!(joined, b"abcdefg");
        }
    }
}
