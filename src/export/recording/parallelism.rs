//! How many threads of the recorded program ran at each moment, from its
//! context switches (`perfz record --latency`, perf's `--latency`), for a
//! latency profile: a sample weighs its period divided by that number, as
//! `perf report --latency` weighs it (perf 6.15's machine.c and event.c: one
//! count for the machine, 1 at the start, +1 at each switch in and -1 at
//! each switch out or exit (an exiting task has no switch out), in time
//! order; a sample takes the count then, kept within 1 and the CPUs the
//! recording had).

/// The count through time.
#[derive(Debug, Default)]
pub(crate) struct Parallelism {
    /// (time, count from that time on), in time order.
    steps: Vec<(u64, i64)>,
    /// The CPUs the recording had (HEADER_NRCPUS' available ones).
    cpus: i64,
}

impl Parallelism {
    /// The count from `switches` (time, +1 in or -1 out or exit), in the order read
    /// where times tie, on a machine of `cpus` CPUs.
    pub(crate) fn new(mut switches: Vec<(u64, i8)>, cpus: u32) -> Parallelism {
        switches.sort_by_key(|&(t, _)| t); // stable: ties stay as read
        let mut count = 1i64;
        let steps = switches
            .into_iter()
            .map(|(t, d)| {
                count += i64::from(d);
                (t, count)
            })
            .collect();
        Parallelism {
            steps,
            cpus: i64::from(cpus.max(1)),
        }
    }

    /// Whether the recording has context switches to count.
    pub(crate) fn is_known(&self) -> bool {
        !self.steps.is_empty()
    }

    /// The count at `time`: after every switch up to it.
    pub(crate) fn at(&self, time: u64) -> u64 {
        let after = self.steps.partition_point(|&(t, _)| t <= time);
        let count = after.checked_sub(1).map_or(1, |i| self.steps[i].1);
        count.clamp(1, self.cpus) as u64
    }

    /// What a sample of `period` at `time` weighs in a latency profile: its
    /// share of the wall-clock time, in the period's unit, rounded (perf
    /// multiplies by 1000 first, as it shows only percentages; a clock
    /// event's period of 10^4 ns or more loses less than 10^-4 here).
    pub(crate) fn weight(&self, period: u64, time: u64) -> u64 {
        let n = self.at(time);
        period.saturating_add(n / 2) / n
    }
}

/// What a recording says of its threads' comings and goings, read record
/// by record, for a [`Parallelism`].
#[derive(Debug, Default)]
pub(crate) struct Switches {
    /// (time, +1 in or -1 out or exit), as read.
    steps: Vec<(u64, i8)>,
    /// The most CPUs an input had.
    cpus: u32,
    /// Whether any context switch was read (exits alone count nothing).
    switched: bool,
}

impl Switches {
    /// A context switch at `time`: out of its CPU, or onto it.
    pub(crate) fn switch(&mut self, time: u64, out: bool) {
        self.steps.push((time, if out { -1 } else { 1 }));
        self.switched = true;
    }

    /// A task's exit at `time` (it is switched out without a record).
    pub(crate) fn exit(&mut self, time: u64) {
        self.steps.push((time, -1));
    }

    /// An input of a machine with `cpus` CPUs.
    pub(crate) fn cpus(&mut self, cpus: u32) {
        self.cpus = self.cpus.max(cpus);
    }

    /// The count through time; none without context switches.
    pub(crate) fn parallelism(self) -> Parallelism {
        match self.switched {
            true => Parallelism::new(self.steps, self.cpus),
            false => Parallelism::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_starts_at_one_and_follows_the_switches_within_the_cpus() {
        let p = Parallelism::new(vec![(30, -1), (10, 1), (20, 1), (20, 1), (40, -1)], 3);
        assert_eq!(p.at(5), 1);
        assert_eq!(p.at(10), 2);
        assert_eq!(p.at(20), 3, "4 threads on 3 CPUs");
        assert_eq!(p.at(30), 3);
        assert_eq!(p.at(45), 2);
        assert_eq!(p.weight(250_000, 10), 125_000);
        assert_eq!(p.weight(250_000, 20), 83_333);
        let out_first = Parallelism::new(vec![(1, -1), (2, -1)], 2);
        assert_eq!(out_first.at(3), 1, "never below one");
    }
}
