//! `--off-cpu`: the time threads spend off the CPU, by stack, turned into
//! samples as perf's `--off-cpu` writes them (an `offcpu-time` event whose
//! period is the nanoseconds off CPU), on the way from the ring to the
//! codec.
//!
//! The kernel gives, for every thread of the target, a `context-switches`
//! sample at each switch-out (its stack at that moment) and, from the same
//! event (`context_switch`), a SWITCH record out (with the preemption bit)
//! and one in. The push leaves all three out of the stream; the sample is
//! kept (with its stack cut), and when the thread comes back it is written
//! with period = switch-in − switch-out, time = switch-in, and for
//! frame-pointer chains the first user frame as its ip (perf's layout:
//! chains of user frames only). Preemptions are written too (perf's BPF
//! program counts only sleeps): the time a thread was runnable, waiting for
//! a CPU, is off-CPU time, and so each thread's on- and off-CPU time add up
//! to its wall time. A wait still open at the end is written up to the end,
//! and a thread off CPU when the recording starts (`-p`, `-t`, `-a`) gets a
//! wait from the start to its first switch-in, or to the end (a sample with
//! no stack: none was taken). A thread's EXIT ends its waits (its last
//! switch-out, after the EXIT, opens none): a task that reuses its tid
//! starts afresh. Waits
//! shorter than `--off-cpu-thresh` are added up per (thread, stack) and
//! written each second, as perf 6.16 does.
//!
//! The records of one thread can reach different rings (it migrates) and,
//! with `--threads`, different drain units: each unit gathers a pass's
//! events and hands them to the waits all units share (one lock a pass),
//! which take them in time order (several units' once 300 ms old).
//!
//! The event's records leave the region (take.rs) as skip edits beside the stack
//! cut's (`edits.rs`); records of ids not this recording's go too, counted.
//! With frame-pointer chains one sample per (thread, chain) is kept and
//! stands for that stack's later waits. The drain pushes the samples a pass
//! made through the codec at the pass's end.

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashSet;

use crate::format::attr::{flags, sample_type as st, OFF_CPU_NAME, SW_BPF_OUTPUT};
use crate::format::sample::{id_offset, FIXED_WORDS};
use crate::format::AttrEntry;
use crate::transform::Edit;
use waits::{Seen, Waits};

mod bare;
mod edits;
mod ends;
mod spares;
mod take;
mod thread;
mod waits;

use spares::Spares;

/// Where a SAMPLE of the off-CPU event keeps its fields (from the record's
/// start; all before any field of variable size).
#[derive(Clone, Debug)]
pub(super) struct Fields {
    pub(super) id: usize,
    pub(super) ip: usize,
    pub(super) tid: usize,
    pub(super) time: usize,
    pub(super) period: usize,
    /// The callchain's `nr`, where samples carry one.
    pub(super) callchain: Option<usize>,
    /// The samples carry a stack dump (dwarf): no two are alike.
    pub(super) stack_dump: bool,
    /// Frame-pointer chains of user frames: the first is the sample's ip.
    pub(super) user_ip: bool,
}

impl Fields {
    fn of(sample_type: u64) -> Option<Fields> {
        let need = st::IP | st::TID | st::TIME | st::PERIOD;
        if sample_type & need != need || sample_type & st::READ != 0 {
            return None;
        }
        let at = |bit: u64| {
            let before = FIXED_WORDS;
            let i = before
                .iter()
                .position(|&b| b == bit)
                .expect("a fixed field");
            8 + 8 * before[..i]
                .iter()
                .filter(|&&b| sample_type & b != 0)
                .count()
        };
        Some(Fields {
            id: 8 + id_offset(sample_type)?,
            ip: at(st::IP),
            tid: at(st::TID),
            time: at(st::TIME),
            period: at(st::PERIOD),
            callchain: (sample_type & st::CALLCHAIN != 0).then(|| at(st::PERIOD) + 8),
            stack_dump: sample_type & st::STACK_USER != 0,
            // Set by the caller, which knows the call graph.
            user_ip: false,
        })
    }
}

/// One drain unit's part of `--off-cpu`.
pub struct OffCpu {
    /// The ids of the off-CPU event.
    ids: FxHashSet<u64>,
    /// The ids of every event of the recording: a record with another id
    /// (a software event of another recorder's can stamp this recording's
    /// samples with its own id) is left out, and counted.
    all_ids: Arc<FxHashSet<u64>>,
    sample_type: u64,
    fields: Fields,
    waits: Arc<Mutex<Waits>>,
    /// This pass's events.
    batch: Vec<Seen>,
    /// Sample buffers to use again (from waits written or added up).
    spare: Spares,
    /// Scratch kept across pushes (no allocation once warm): the records
    /// taken out of a region, a record that wraps the ring, one sample's
    /// edits.
    skips: Vec<(usize, usize)>,
    wrapped: Vec<u8>,
    rec_edits: Vec<Edit>,
    /// The stacks the waits keep a sample of (the first `known.len()` of
    /// [`Waits::known`], which lists each once): a sample of one goes
    /// without its bytes.
    known: rustc_hash::FxHashSet<(u32, u64)>,
    /// This pass's events: the latest time, the last one's, and whether
    /// they came in time order; the earliest time of any sample seen.
    latest: u64,
    last: u64,
    sorted: bool,
    first: u64,
    /// Records of ids not this recording's, left out this pass.
    foreign: u64,
}

/// A unit per clone: the recording's own copy is the template the drain
/// units are cloned from, each counted (their events are ordered across
/// units).
impl Clone for OffCpu {
    fn clone(&self) -> Self {
        self.waits.lock().unwrap_or_else(|e| e.into_inner()).units += 1;
        let mut u = OffCpu::unit(
            self.ids.clone(),
            self.sample_type,
            self.fields.clone(),
            self.waits.clone(),
        );
        u.all_ids = self.all_ids.clone();
        u
    }
}

/// What the units of a recording counted: switch-outs seen, off-CPU
/// samples written, records of other recorders' ids left out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct OffCpuCounts {
    /// Switch-out samples seen.
    pub seen: u64,
    /// Off-CPU samples written.
    pub written: u64,
    /// Records of other recorders' ids left out.
    pub foreign: u64,
}

impl OffCpu {
    /// `--off-cpu`'s part of a recording whose events are `attrs`, where
    /// one is the off-CPU event: its attr as the file states it becomes
    /// perf's `offcpu-time` (`PERF_COUNT_SW_BPF_OUTPUT`, no switch records:
    /// the push takes them out). `user_ip`: its chains are user frames only
    /// (frame pointers); waits shorter than `thresh_ns` are added up per
    /// (thread, stack) and written each second (perf 6.16's
    /// `--off-cpu-thresh`); `threads` (pid, tid): those there at the start,
    /// each written off CPU from the start where it first comes back (or
    /// never). None without an off-CPU event, or where its samples lack a
    /// field the conversion needs.
    pub fn for_attrs(
        attrs: &mut [AttrEntry],
        user_ip: bool,
        thresh_ns: u64,
        threads: Vec<(u32, u32)>,
    ) -> Option<OffCpu> {
        let all_ids: FxHashSet<u64> = attrs.iter().flat_map(|e| e.ids.iter().copied()).collect();
        let e = attrs
            .iter_mut()
            .find(|e| e.name.as_deref() == Some(OFF_CPU_NAME))?;
        e.attr.set_u64(8, SW_BPF_OUTPUT);
        e.attr.set_u64(40, e.attr.flags() & !flags::CONTEXT_SWITCH);
        let (ids, sample_type) = (e.ids.iter().copied().collect(), e.attr.sample_type());
        let mut waits = Waits::with_thresh(thresh_ns);
        waits.bare = e.ids.first().map(|&id| (sample_type, id));
        waits.expected = threads;
        let waits = Arc::new(Mutex::new(waits));
        let mut o = OffCpu::new(ids, sample_type, user_ip, waits)?;
        o.all_ids = Arc::new(all_ids);
        Some(o)
    }

    /// The off-CPU event's `ids` and `sample_type` (every event's: they
    /// share one), its waits shared by every unit; `user_ip`: its chains
    /// are user frames only. None where its samples lack a field it needs.
    fn new(
        ids: FxHashSet<u64>,
        sample_type: u64,
        user_ip: bool,
        waits: Arc<Mutex<Waits>>,
    ) -> Option<OffCpu> {
        let fields = Fields {
            user_ip,
            ..Fields::of(sample_type)?
        };
        let mut o = OffCpu::unit(ids, sample_type, fields, waits);
        o.all_ids = Arc::new(o.ids.clone());
        Some(o)
    }

    /// A unit with nothing taken yet.
    fn unit(
        ids: FxHashSet<u64>,
        sample_type: u64,
        fields: Fields,
        waits: Arc<Mutex<Waits>>,
    ) -> OffCpu {
        OffCpu {
            ids,
            all_ids: Default::default(),
            fields,
            sample_type,
            waits,
            batch: Vec::new(),
            spare: Spares::default(),
            skips: Vec::new(),
            wrapped: Vec::new(),
            rec_edits: Vec::new(),
            known: Default::default(),
            latest: 0,
            last: 0,
            sorted: true,
            first: u64::MAX,
            foreign: 0,
        }
    }

    /// The end of a pass: its events to the shared waits; the samples of
    /// the waits they ended, to push.
    /// With `all` (the recording ends), every event held for order too,
    /// and the waits still open written up to the end.
    pub fn settle(&mut self, out: &mut Vec<u8>, all: bool) {
        let foreign = std::mem::take(&mut self.foreign);
        if self.batch.is_empty() && !all && foreign == 0 && self.first == u64::MAX {
            return;
        }
        let mut w = self.waits.lock().unwrap_or_else(|e| e.into_inner());
        w.ended.foreign += foreign;
        w.start = w.start.min(std::mem::replace(&mut self.first, u64::MAX));
        w.take_in(
            &mut self.batch,
            self.latest,
            self.sorted,
            all,
            &self.fields,
            out,
        );
        (self.last, self.sorted) = (0, true);
        self.spare.refill_from(&mut w.ended.spare);
        let seen = self.known.len();
        self.known.extend(&w.known[seen..]);
    }

    /// What every unit counted.
    pub fn counts(&self) -> OffCpuCounts {
        let w = self.waits.lock().unwrap_or_else(|e| e.into_inner());
        OffCpuCounts {
            seen: w.ended.seen,
            written: w.ended.written,
            foreign: w.ended.foreign,
        }
    }
}
