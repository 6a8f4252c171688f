//! The processes of a recording through time, from its side band: each
//! thread's names and each process's maps, with when they held. Built from
//! every side-band record first (sorted by time: a `--threads` directory's
//! streams, and a recording's CPUs, interleave), then asked about each
//! sample at its own time, so samples may come in any order.
//!
//! A map's build id comes from its MMAP2 record or from HEADER_BUILD_ID.

use std::collections::HashMap;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::format::side_band::SideBand;

/// One mapping of a file into a process, and when it held.
#[derive(Debug, Clone)]
pub(crate) struct Mapping {
    /// First address mapped.
    pub(crate) start: u64,
    /// Address just past the mapping.
    pub(crate) end: u64,
    /// File offset mapped at `start`, in bytes.
    pub(crate) pgoff: u64,
    /// The mapped file, as the MMAP record names it.
    pub(crate) path: Arc<str>,
    /// The file's build id, from MMAP2 or HEADER_BUILD_ID, if known.
    pub(crate) build_id: Option<Arc<[u8]>>,
    /// When it was made (the side band's time).
    pub(crate) from: u64,
    until: u64,
    /// Not executable (the MMAP record's MMAP_DATA bit): a word of the
    /// stack that points into it is no return address.
    pub(crate) data: bool,
}

impl Mapping {
    /// A mapping held from the start to the end of the recording.
    pub(crate) fn whole_time(start: u64, end: u64, pgoff: u64, path: &str) -> Mapping {
        Mapping {
            start,
            end,
            pgoff,
            path: path.into(),
            build_id: None,
            from: 0,
            until: u64::MAX,
            data: false,
        }
    }

    /// Whether it was held at `time`.
    pub(crate) fn held_at(&self, time: u64) -> bool {
        (self.from..self.until).contains(&time)
    }

    /// When it ended (u64::MAX: it did not).
    pub(crate) fn until(&self) -> u64 {
        self.until
    }

    /// Ends it at `until` (tests build timelines by hand).
    #[cfg(test)]
    pub(crate) fn set_until(&mut self, until: u64) {
        self.until = until;
    }
}

/// Every thread's names and every process's (and the kernel's) maps through
/// the recording, from its side-band records.
#[derive(Default)]
pub(crate) struct Timeline {
    events: Vec<(u64, SideBand)>,
    /// Build ids by file name, from the header (HEADER_BUILD_ID).
    build_ids: HashMap<String, Arc<[u8]>>,
    comms: FxHashMap<u32, Vec<(u64, Arc<str>)>>,
    maps: FxHashMap<u32, Vec<Mapping>>,
    /// The kernel's maps (the image and its modules), for every process.
    kernel: Vec<Mapping>,
}

/// Whether a mapping named `path` is memory of no file whose end moves
/// (the heap, a stack, anonymous memory).
fn grows(path: &str) -> bool {
    matches!(path, "[heap]" | "[stack]" | "//anon")
}

impl Timeline {
    /// Notes a side-band record at `time` (0: synthesized before the start).
    pub(crate) fn push(&mut self, time: u64, ev: SideBand) {
        self.events.push((time, ev));
    }

    /// Notes the build id the header gives `path` (for its maps that carry
    /// none).
    pub(crate) fn note_build_id(&mut self, path: String, id: Vec<u8>) {
        if !id.is_empty() {
            self.build_ids.entry(path).or_insert_with(|| id.into());
        }
    }

    /// Orders what was pushed by time (stable: records of one time keep
    /// their order) and follows it.
    pub(crate) fn build(&mut self) {
        let mut events = std::mem::take(&mut self.events);
        events.sort_by_key(|(t, _)| *t);
        for (t, ev) in events {
            self.apply(t, ev);
        }
    }

    fn apply(&mut self, t: u64, ev: SideBand) {
        match ev {
            SideBand::Map {
                pid,
                start,
                len,
                pgoff,
                path,
                build_id,
                kernel,
                data,
            } => {
                // A build id of no bytes (a damaged or hostile MMAP2) is
                // none.
                let build_id = build_id
                    .filter(|b| !b.is_empty())
                    .map(Into::into)
                    .or_else(|| self.build_ids.get(&path).cloned());
                let m = Mapping {
                    start,
                    end: start.saturating_add(len),
                    pgoff,
                    path: path.into(),
                    build_id,
                    from: t,
                    until: u64::MAX,
                    data,
                };
                self.add_map(if kernel { None } else { Some(pid) }, m);
            }
            SideBand::Comm { tid, comm, .. } => {
                // An exec's COMM comes while the kernel loads the new
                // image, before its maps, with the old image's user stack
                // (in execve) still sampled: the old maps stay until new
                // ones overlap them, as perf keeps them (its exec only
                // flushes the unwinder's cache).
                self.comms.entry(tid).or_default().push((t, comm.into()));
            }
            SideBand::Fork { pid, ppid, tid } => self.fork(t, pid, ppid, tid),
            SideBand::Exit { .. } => {}
        }
    }

    /// Mapping `m` made in process `pid` (None: the kernel's, for every
    /// process) at `m.from`.
    fn add_map(&mut self, pid: Option<u32>, m: Mapping) {
        let maps = match pid {
            None => &mut self.kernel,
            Some(pid) => self.maps.entry(pid).or_default(),
        };
        // Memory of no file that moves its end (the heap at every
        // brk: 25 000 maps in 4 s of a Rust program recorded with
        // dwarf stacks, which record data maps) stays one mapping,
        // as far as it ever reached: perf keeps what a new map
        // does not overlap too, and no code is named from it. Not where
        // it turns to code (a JIT reserves `//anon` memory without
        // access, then maps code at the same start): that one ends the
        // reservation as any mapping ends what it covers.
        if grows(&m.path) {
            let same = maps.iter_mut().rev().find(|o| {
                o.until == u64::MAX && o.start == m.start && o.path == m.path && o.data == m.data
            });
            if let Some(o) = same {
                o.end = o.end.max(m.end);
                return;
            }
        }
        // A new mapping ends what it covers of older ones (mmap over a
        // range), which keep the rest, as perf keeps them
        // (maps__fixup_overlap_and_insert): the loader maps an ELF whose
        // code starts at file offset 0 (gold, `-z noseparate-code`) with
        // one mapping as long as the whole image, then maps its data over
        // the tail; ending all of it left every frame of the file unnamed.
        let mut rest = Vec::new();
        for o in maps
            .iter_mut()
            .filter(|o| o.until == u64::MAX && o.start < m.end && m.start < o.end)
        {
            let part = |start: u64, end: u64| Mapping {
                start,
                end,
                pgoff: o.pgoff.saturating_add(start - o.start),
                from: m.from,
                ..o.clone()
            };
            if o.start < m.start {
                rest.push(part(o.start, m.start));
            }
            if m.end < o.end {
                rest.push(part(m.end, o.end));
            }
            o.until = m.from;
        }
        maps.extend(rest);
        maps.push(m);
    }

    /// Thread `tid` of `pid` forked from `ppid` at `t`: it takes `ppid`'s
    /// name, and a new process (`pid` other than `ppid`) the maps `ppid`
    /// holds.
    fn fork(&mut self, t: u64, pid: u32, ppid: u32, tid: u32) {
        if let Some(c) = self.comm_at(ppid, t) {
            let own = self.comms.entry(tid).or_default();
            if own.is_empty() {
                own.push((t, c));
            }
        }
        if pid != ppid {
            let inherited: Vec<Mapping> = self
                .maps
                .get(&ppid)
                .map(|m| m.iter().filter(|m| m.until == u64::MAX).cloned().collect())
                .unwrap_or_default();
            let own = self.maps.entry(pid).or_default();
            own.extend(inherited.into_iter().map(|m| Mapping { from: t, ..m }));
        }
    }

    fn comm_at(&self, tid: u32, t: u64) -> Option<Arc<str>> {
        let v = self.comms.get(&tid)?;
        let i = v.partition_point(|(at, _)| *at <= t);
        // Before its first name: the first (a thread's COMM may follow its
        // first sample by a few microseconds).
        Some(v[i.saturating_sub(1)].1.clone())
    }

    /// The name of thread `tid` at `time` (perf prints `:tid` for one it
    /// never saw, and `swapper` for the idle task, 0, which has no COMM).
    pub(crate) fn comm(&self, tid: u32, time: u64) -> Arc<str> {
        self.comm_at(tid, time).unwrap_or_else(|| match tid {
            0 => "swapper".into(),
            _ => format!(":{tid}").into(),
        })
    }

    /// Process `pid`'s mappings through the recording.
    pub(crate) fn maps_of(&self, pid: u32) -> &[Mapping] {
        self.maps.get(&pid).map_or(&[], Vec::as_slice)
    }

    /// The jitdumps each process mapped (`jit-PID.dump`, PID its own), as
    /// JITs that speak perf's jitdump format map them for the recording to
    /// see.
    pub(crate) fn jitdumps(&self) -> Vec<(u32, Arc<str>)> {
        let mut v: Vec<(u32, Arc<str>)> = self
            .maps
            .iter()
            .flat_map(|(&pid, maps)| {
                maps.iter()
                    .filter(move |m| crate::export::name::jitdump::is_dump(&m.path) == Some(pid))
                    .map(move |m| (pid, m.path.clone()))
            })
            .collect();
        v.sort();
        v.dedup_by_key(|d| d.0);
        v
    }

    /// The kernel's mappings (the image and its modules) through the
    /// recording.
    pub(crate) fn kernel_maps(&self) -> &[Mapping] {
        &self.kernel
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(start: u64, len: u64, path: &str) -> SideBand {
        SideBand::Map {
            pid: 7,
            start,
            len,
            pgoff: 0,
            path: path.into(),
            build_id: None,
            kernel: false,
            data: false,
        }
    }

    /// The heap's maps at every brk stay one mapping as far as it reached;
    /// a file mapped over another ends it.
    #[test]
    fn the_heap_grows_in_one_mapping_files_replace_each_other() {
        let mut t = Timeline::default();
        for (i, len) in [0x21000, 0x42000, 0x31000, 0x63000].into_iter().enumerate() {
            t.push(10 + i as u64, map(0x5000_0000, len, "[heap]"));
        }
        t.push(20, map(0x7000_0000, 0x1000, "/lib/a.so"));
        t.push(30, map(0x7000_0000, 0x1000, "/lib/b.so"));
        t.build();
        let maps = t.maps_of(7);
        let heap: Vec<_> = maps.iter().filter(|m| &*m.path == "[heap]").collect();
        assert_eq!(heap.len(), 1);
        assert_eq!(
            (heap[0].start, heap[0].end, heap[0].from),
            (0x5000_0000, 0x5006_3000, 10)
        );
        let a = maps.iter().find(|m| &*m.path == "/lib/a.so").unwrap();
        assert_eq!((a.from, a.until()), (20, 30));
        let b = maps.iter().find(|m| &*m.path == "/lib/b.so").unwrap();
        assert_eq!((b.from, b.until()), (30, u64::MAX));
    }

    /// A JIT's reservation (`//anon` without access: a data map) then its
    /// code at the same start: the code is a mapping of code, not the
    /// reservation grown.
    #[test]
    fn code_mapped_over_a_reservation_is_code() {
        let mut t = Timeline::default();
        let mut reservation = map(0x6000_0000, 0x10_0000, "//anon");
        if let SideBand::Map { data, .. } = &mut reservation {
            *data = true;
        }
        t.push(10, reservation);
        t.push(20, map(0x6000_0000, 0x1000, "//anon"));
        t.build();
        let maps = t.maps_of(7);
        let at = |time: u64| {
            maps.iter()
                .find(|m| m.start == 0x6000_0000 && m.from <= time && time < m.until())
        };
        assert!(at(15).unwrap().data);
        assert!(!at(25).unwrap().data);
        // What the code does not cover stays reserved.
        assert!(maps
            .iter()
            .any(|m| m.start == 0x6000_1000 && m.data && m.from == 20));
    }

    /// An image mapped whole from offset 0 (gold, `-z noseparate-code`),
    /// then its data mapped over part of it: the code keeps its mapping
    /// (before the data: the same offsets; after it: offsets moved on), as
    /// perf keeps what a new mapping does not cover.
    #[test]
    fn a_mapping_over_part_of_another_ends_only_that_part() {
        let mut t = Timeline::default();
        t.push(10, map(0x40_0000, 0x8000, "/lib/libgold.so"));
        t.push(20, map(0x40_5000, 0x1000, "/lib/data"));
        t.build();
        let maps = t.maps_of(7);
        let held: Vec<_> = maps
            .iter()
            .filter(|m| m.until() == u64::MAX)
            .map(|m| (&*m.path, m.start, m.end, m.pgoff, m.from))
            .collect();
        assert_eq!(
            held,
            [
                ("/lib/libgold.so", 0x40_0000, 0x40_5000, 0, 20),
                ("/lib/libgold.so", 0x40_6000, 0x40_8000, 0x6000, 20),
                ("/lib/data", 0x40_5000, 0x40_6000, 0, 20),
            ]
        );
        // Before the data was mapped, the whole image was the library's.
        let whole = maps.iter().find(|m| m.from == 10).unwrap();
        assert_eq!((whole.end, whole.until()), (0x40_8000, 20));
    }

    #[test]
    fn a_build_id_of_no_bytes_is_none() {
        let mut t = Timeline::default();
        let ev = SideBand::Map {
            pid: 7,
            start: 0x1000,
            len: 0x1000,
            pgoff: 0,
            path: "/bin/x".into(),
            build_id: Some(Vec::new()),
            kernel: false,
            data: false,
        };
        t.push(1, ev);
        t.build();
        assert_eq!(t.maps_of(7)[0].build_id, None);
    }

    #[test]
    fn threads_never_named_are_named_as_perf_names_them() {
        let t = Timeline::default();
        assert_eq!(&*t.comm(0, 1), "swapper");
        assert_eq!(&*t.comm(42, 1), ":42");
    }
}
