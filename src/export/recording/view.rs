//! The maps of one process over a stretch of time in which none of them
//! was made or ended, sorted by address: each frame of a sample is found
//! by a binary search, and one view serves every sample of its stretch
//! (maps change at an exec or a dlopen; samples come by thousands between).

use std::ops::Range;

use rustc_hash::FxHashMap;

use crate::export::recording::process::{Mapping, Timeline};

/// The mappings one process (or the kernel) held over `valid`.
pub(crate) struct View<'a> {
    /// By start, then by when made.
    pub(crate) maps: Vec<&'a Mapping>,
    /// The furthest end of `maps[..=i]` (mappings may overlap).
    reach: Vec<u64>,
    /// Whether `maps[i]` overlaps another of the view's mappings.
    overlaps: Vec<bool>,
    /// The mapping `find` found last: consecutive frames are mostly in one
    /// file, and one that overlaps no other is the answer for all its
    /// addresses.
    last: std::cell::Cell<usize>,
    /// The times it holds for: no mapping of its process was made or ended
    /// within.
    valid: Range<u64>,
    /// Distinct for every view built in one export.
    pub(crate) id: u64,
}

impl<'a> View<'a> {
    /// The view of `all` (one process's mappings through time) at `time`.
    fn build(all: &'a [Mapping], time: u64, id: u64) -> View<'a> {
        let (mut lo, mut hi) = (0, u64::MAX);
        for m in all {
            for edge in [m.from, m.until()] {
                if edge <= time {
                    lo = lo.max(edge);
                } else {
                    hi = hi.min(edge);
                }
            }
        }
        let mut maps: Vec<&Mapping> = all.iter().filter(|m| m.held_at(time)).collect();
        maps.sort_by_key(|m| (m.start, m.from));
        let reach: Vec<u64> = maps
            .iter()
            .scan(0, |far, m| {
                *far = m.end.max(*far);
                Some(*far)
            })
            .collect();
        let overlaps = (0..maps.len())
            .map(|i| {
                let before = i > 0 && reach[i - 1] > maps[i].start;
                let after = maps.get(i + 1).is_some_and(|n| n.start < maps[i].end);
                before || after
            })
            .collect();
        View {
            maps,
            reach,
            overlaps,
            last: std::cell::Cell::new(0),
            valid: lo..hi,
            id,
        }
    }

    /// The mapping that holds `addr`: the latest made of those that do.
    pub(crate) fn find(&self, addr: u64) -> Option<&'a Mapping> {
        let last = self.last.get();
        if let Some(m) = self.maps.get(last) {
            if m.start <= addr && addr < m.end && !self.overlaps[last] {
                return Some(m);
            }
        }
        let i = self.maps.partition_point(|m| m.start <= addr);
        let j = (0..i)
            .rev()
            .take_while(|&j| self.reach[j] > addr)
            .filter(|&j| addr < self.maps[j].end)
            .max_by_key(|&j| self.maps[j].from)?;
        self.last.set(j);
        Some(self.maps[j])
    }

    /// Whether a mapping of code (not one of data: the heap, a thread's
    /// stack) holds `addr`.
    pub(crate) fn holds_code(&self, addr: u64) -> bool {
        self.find(addr).is_some_and(|m| !m.data)
    }
}

/// The views of one export's processes and kernel, each rebuilt only when
/// a sample falls outside its stretch.
pub(crate) struct Views<'a> {
    procs: &'a Timeline,
    users: FxHashMap<u32, View<'a>>,
    kernel: Option<View<'a>>,
    built: u64,
}

impl<'a> Views<'a> {
    /// The views of `procs`, none built yet.
    pub(crate) fn new(procs: &'a Timeline) -> Views<'a> {
        Views {
            procs,
            users: FxHashMap::default(),
            kernel: None,
            built: 0,
        }
    }

    /// The views of process `pid` and of the kernel at `time`.
    pub(crate) fn at(&mut self, pid: u32, time: u64) -> (&View<'a>, &View<'a>) {
        let procs = self.procs;
        let built = &mut self.built;
        let mut fresh = |all: &'a [Mapping]| {
            *built += 1;
            View::build(all, time, *built)
        };
        let user = self.users.entry(pid).or_insert_with(|| View {
            maps: Vec::new(),
            reach: Vec::new(),
            overlaps: Vec::new(),
            last: std::cell::Cell::new(0),
            valid: 0..0,
            id: 0,
        });
        if !user.valid.contains(&time) {
            *user = fresh(procs.maps_of(pid));
        }
        let kernel = self
            .kernel
            .get_or_insert_with(|| fresh(procs.kernel_maps()));
        if !kernel.valid.contains(&time) {
            *kernel = fresh(procs.kernel_maps());
        }
        (user, kernel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(start: u64, end: u64, from: u64, until: u64) -> Mapping {
        let mut m = Mapping::whole_time(start, end, 0, "f");
        m.from = from;
        m.set_until(until);
        m
    }

    #[test]
    fn a_view_finds_what_a_scan_finds_and_holds_while_nothing_changes() {
        let all = vec![
            map(0x1000, 0x3000, 0, 50),
            map(0x2000, 0x4000, 10, u64::MAX),
            map(0x1000, 0x2000, 50, u64::MAX),
            map(0x8000, 0x9000, 70, 90),
        ];
        for time in [0, 5, 10, 49, 50, 60, 70, 89, 90, 1000] {
            let v = View::build(&all, time, 1);
            assert!(v.valid.contains(&time));
            for t in [v.valid.start, v.valid.end.saturating_sub(1)] {
                for addr in (0..0xa000).step_by(0x400) {
                    let scan = all
                        .iter()
                        .filter(|m| m.held_at(t) && (m.start..m.end).contains(&addr))
                        .max_by_key(|m| m.from);
                    assert_eq!(
                        v.find(addr).map(|m| (m.start, m.from)),
                        scan.map(|m| (m.start, m.from)),
                        "view at {time}, asked at {t}, addr {addr:#x}"
                    );
                }
            }
        }
    }
}
