//! How much of their stack dumps dwarf samples used (`dyn_size` against
//! the dump's `size`), gathered where the stack cut reads them anyway: the
//! base of the loss advice (which dwarf size would have held the stacks).
//! A histogram in 1 KiB steps, merged across drain units.

use serde::Serialize;

/// Width of one histogram bucket.
const STEP: u64 = 1024;
/// Buckets: 0..1 KiB, 1..2 KiB, ... the last holds 64 KiB and up.
const BUCKETS: usize = 65;

/// A histogram of the bytes of stack samples used, by 1 KiB steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct StackUse {
    /// Samples with a stack dump.
    pub samples: u64,
    /// The most any sample used.
    pub max: u64,
    /// The largest dump size (the dwarf size asked for).
    pub dump: u64,
    #[serde(skip)]
    buckets: [u64; BUCKETS],
}

impl Default for StackUse {
    fn default() -> StackUse {
        StackUse {
            samples: 0,
            max: 0,
            dump: 0,
            buckets: [0; BUCKETS],
        }
    }
}

impl StackUse {
    /// Counts a sample that used `used` of a `dump`-byte stack dump.
    #[inline]
    pub fn add(&mut self, used: u64, dump: u64) {
        self.samples += 1;
        self.max = self.max.max(used);
        self.dump = self.dump.max(dump);
        self.buckets[((used / STEP) as usize).min(BUCKETS - 1)] += 1;
    }

    /// Adds the samples counted in `o` (a region's, or another drain's).
    pub fn merge(&mut self, o: &StackUse) {
        self.samples += o.samples;
        self.max = self.max.max(o.max);
        self.dump = self.dump.max(o.dump);
        for (a, b) in self.buckets.iter_mut().zip(o.buckets.iter()) {
            *a += b;
        }
    }

    /// The bytes that held the stacks of `q` (0..=1) of the samples: the
    /// top of the bucket that reaches it (`max` for the last).
    pub fn quantile(&self, q: f64) -> u64 {
        if self.samples == 0 {
            return 0;
        }
        let want = (q * self.samples as f64).ceil() as u64;
        let mut seen = 0;
        for (i, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= want.max(1) {
                if i == BUCKETS - 1 {
                    return self.max;
                }
                return ((i as u64 + 1) * STEP).min(self.max.max(1));
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_and_merge() {
        let mut a = StackUse::default();
        for used in [100, 200, 1500, 5000] {
            a.add(used, 8192);
        }
        let mut b = StackUse::default();
        b.add(70_000, 65528);
        a.merge(&b);
        assert_eq!((a.samples, a.max, a.dump), (5, 70_000, 65528));
        assert_eq!(a.quantile(0.4), 1024);
        assert_eq!(a.quantile(0.6), 2048);
        assert_eq!(a.quantile(0.8), 5120);
        assert_eq!(a.quantile(1.0), 70_000);
        assert_eq!(StackUse::default().quantile(0.5), 0);
    }
}
