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
//! to its wall time. A wait still open at the end is not written. Waits
//! shorter than `--off-cpu-thresh` are added up per (thread, stack) and
//! written each second, as perf 6.16 does.
//!
//! The records of one thread can reach different rings (it migrates) and,
//! with `--threads`, different drain units: each unit gathers a pass's
//! events and hands them to the waits all units share (one lock a pass),
//! which take them in time order (several units' once 300 ms old).

use std::sync::{Arc, Mutex};

use perfz_codecs::Input;

use super::scan::headers;
use super::stack_tail::{for_each_piece, Edit};
use crate::format::attr::{flags, sample_type as st, OFF_CPU_NAME, SW_BPF_OUTPUT};
use crate::format::record::RecordType;
use crate::format::sample::{id_offset, id_trailer_offset, id_trailer_size, FIXED_WORDS};
use crate::format::AttrEntry;
use waits::{chain_hash, Seen, Waits};

mod spares;
mod thread;
mod waits;

use spares::Spares;

/// `PERF_RECORD_MISC_SWITCH_OUT`.
const SWITCH_OUT: u16 = 1 << 13;
/// `PERF_RECORD_MISC_SWITCH_OUT_PREEMPT`: the thread was runnable.
const SWITCH_OUT_PREEMPT: u16 = 1 << 14;

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
        })
    }
}

/// One drain unit's part of `--off-cpu`.
pub struct OffCpu {
    /// The ids of the off-CPU event.
    ids: Vec<u64>,
    sample_type: u64,
    fields: Fields,
    /// Frame-pointer chains of user frames: the first is the sample's ip.
    user_ip: bool,
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
    /// they came in time order.
    latest: u64,
    last: u64,
    sorted: bool,
}

/// A unit per clone: the recording's own copy is the template the drain
/// units are cloned from, each counted (their events are ordered across
/// units).
impl Clone for OffCpu {
    fn clone(&self) -> Self {
        self.waits.lock().unwrap_or_else(|e| e.into_inner()).units += 1;
        let (ids, waits) = (self.ids.clone(), self.waits.clone());
        OffCpu::unit(
            ids,
            self.sample_type,
            self.fields.clone(),
            self.user_ip,
            waits,
        )
    }
}

impl OffCpu {
    /// `--off-cpu`'s part of a recording whose events are `attrs`, where
    /// one is the off-CPU event: its attr as the file states it becomes
    /// perf's `offcpu-time` (`PERF_COUNT_SW_BPF_OUTPUT`, no switch records:
    /// the push takes them out). `user_ip`: its chains are user frames only
    /// (frame pointers); waits shorter than `thresh_ns` are added up per
    /// (thread, stack) and written each second (perf 6.16's
    /// `--off-cpu-thresh`). None without an off-CPU event, or where its
    /// samples lack a field the conversion needs.
    pub fn for_attrs(attrs: &mut [AttrEntry], user_ip: bool, thresh_ns: u64) -> Option<OffCpu> {
        let e = attrs
            .iter_mut()
            .find(|e| e.name.as_deref() == Some(OFF_CPU_NAME))?;
        e.attr.set_u64(8, SW_BPF_OUTPUT);
        e.attr.set_u64(40, e.attr.flags() & !flags::CONTEXT_SWITCH);
        let (ids, sample_type) = (e.ids.clone(), e.attr.sample_type());
        let waits = Waits::with_thresh(thresh_ns);
        OffCpu::new(ids, sample_type, user_ip, Arc::new(Mutex::new(waits)))
    }

    /// The off-CPU event's `ids` and `sample_type` (every event's: they
    /// share one), its waits shared by every unit; `user_ip`: its chains
    /// are user frames only. None where its samples lack a field it needs.
    fn new(
        ids: Vec<u64>,
        sample_type: u64,
        user_ip: bool,
        waits: Arc<Mutex<Waits>>,
    ) -> Option<OffCpu> {
        let fields = Fields::of(sample_type)?;
        Some(OffCpu::unit(ids, sample_type, fields, user_ip, waits))
    }

    /// A unit with nothing taken yet.
    fn unit(
        ids: Vec<u64>,
        sample_type: u64,
        fields: Fields,
        user_ip: bool,
        waits: Arc<Mutex<Waits>>,
    ) -> OffCpu {
        OffCpu {
            ids,
            fields,
            sample_type,
            user_ip,
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
        }
    }

    /// The sample at `[at, end)` of `region` (`rec`, contiguous) as the
    /// stack cut's `edits` inside it make it, in a spare buffer.
    fn copy(
        &mut self,
        region: Input<'_>,
        at_end: (usize, usize),
        rec: &[u8],
        edits: &[Edit],
    ) -> Vec<u8> {
        let mut bytes = self.spare.get();
        if edits.is_empty() {
            bytes.extend_from_slice(rec);
        } else {
            cut_copy(region, at_end, edits, &mut self.rec_edits, &mut bytes);
        }
        bytes
    }

    /// Notes an event's `time` for the pass's order.
    fn order(&mut self, time: u64) {
        self.sorted &= time >= self.last;
        self.last = time;
        self.latest = self.latest.max(time);
    }

    /// Takes the off-CPU event's records out of `region`: they are left out
    /// of the push (`edits`, which hold the stack cut's, gain a skip for
    /// each and lose theirs inside), its samples kept as the cut made them.
    pub fn take(&mut self, region: Input<'_>, edits: &mut Vec<Edit>) {
        let trailer = id_trailer_size(self.sample_type);
        let tr_id = id_trailer_offset(self.sample_type, st::ID)
            .or_else(|| id_trailer_offset(self.sample_type, st::IDENTIFIER));
        let tr_tid = id_trailer_offset(self.sample_type, st::TID);
        let tr_time = id_trailer_offset(self.sample_type, st::TIME);
        let mut skips = std::mem::take(&mut self.skips);
        skips.clear();
        let mut scratch = std::mem::take(&mut self.wrapped);
        // The edits (sorted) from the current record on.
        let mut ei = 0;
        for (at, h) in headers(region) {
            let t = h.type_;
            let switch = t == RecordType::SWITCH || t == RecordType::SWITCH_CPU_WIDE;
            if t != RecordType::SAMPLE && !switch {
                continue;
            }
            let end = at + h.size as usize;
            let rec = contiguous(region, at, end, &mut scratch);
            let word = |o: usize| {
                rec.get(o..o + 8)
                    .map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            };
            if !switch {
                if end < at + self.fields.period + 8 || !self.ids.contains(&word(self.fields.id)) {
                    continue;
                }
                let tid = (word(self.fields.tid) >> 32) as u32;
                let time = word(self.fields.time);
                while ei < edits.len() && edit_at(&edits[ei]) < at {
                    ei += 1;
                }
                let ej = ei + edits[ei..].partition_point(|e| edit_at(e) < end);
                // A stack the waits keep a sample of: this one's bytes are
                // not needed (and no cut edits a chain's sample).
                let key = chain_hash(rec, &self.fields);
                let bytes = if key.is_some_and(|h| self.known.contains(&(tid, h))) {
                    Vec::new()
                } else {
                    self.copy(region, (at, end), rec, &edits[ei..ej])
                };
                self.order(time);
                self.batch.push(Seen::Sample {
                    tid,
                    time,
                    key,
                    bytes,
                });
                skip(&mut skips, at, end);
            } else {
                let (Some(i), Some(ti), Some(tm)) = (tr_id, tr_tid, tr_time) else {
                    continue;
                };
                let Some(tr) = (end - at).checked_sub(trailer).filter(|&s| s >= 8) else {
                    continue;
                };
                if !self.ids.contains(&word(tr + i)) {
                    continue;
                }
                let out = h.misc & SWITCH_OUT != 0;
                let time = word(tr + tm);
                self.order(time);
                self.batch.push(Seen::Switch {
                    tid: (word(tr + ti) >> 32) as u32,
                    time,
                    out,
                    preempt: out && h.misc & SWITCH_OUT_PREEMPT != 0,
                });
                skip(&mut skips, at, end);
            }
        }
        skip_records(edits, &skips);
        self.skips = skips;
        self.wrapped = scratch;
    }

    /// The end of a pass: its events to the shared waits; the samples of
    /// the waits they ended, to push.
    /// With `all` (the recording ends), every event held for order too.
    pub fn settle(&mut self, out: &mut Vec<u8>, all: bool) {
        if self.batch.is_empty() && !all {
            return;
        }
        let mut w = self.waits.lock().unwrap_or_else(|e| e.into_inner());
        let order = (self.latest, self.sorted);
        w.take_in(&mut self.batch, order, all, &self.fields, self.user_ip, out);
        (self.last, self.sorted) = (0, true);
        self.spare.refill_from(&mut w.ended.spare);
        let seen = self.known.len();
        self.known.extend(&w.known[seen..]);
    }

    /// Switch-outs seen, and off-CPU samples written, by every unit.
    pub fn counts(&self) -> (u64, u64) {
        let w = self.waits.lock().unwrap_or_else(|e| e.into_inner());
        (w.ended.seen, w.ended.written)
    }
}

/// `[at, end)` added to `skips` (in order): records one after another are
/// one skip, so a run of them is one edit (and one gap in the push).
fn skip(skips: &mut Vec<(usize, usize)>, at: usize, end: usize) {
    match skips.last_mut() {
        Some(last) if last.1 == at => last.1 = end,
        _ => skips.push((at, end)),
    }
}

/// `edits` (sorted) with a skip for each record of `skips` (sorted) and
/// none inside them.
fn skip_records(edits: &mut Vec<Edit>, skips: &[(usize, usize)]) {
    if skips.is_empty() {
        return;
    }
    // Both in order: the edits inside a skipped record go, in one walk.
    let mut k = 0;
    edits.retain(|e| {
        let a = edit_at(e);
        while k < skips.len() && skips[k].1 <= a {
            k += 1;
        }
        !(k < skips.len() && skips[k].0 <= a)
    });
    edits.extend(
        skips
            .iter()
            .map(|&(at, end)| Edit::Skip { at, len: end - at }),
    );
    // No two at one offset: the edits inside a skip are gone.
    edits.sort_unstable_by_key(edit_at);
}

fn edit_at(e: &Edit) -> usize {
    match e {
        Edit::Replace { at, .. } | Edit::Skip { at, .. } => *at,
    }
}

/// The bytes `[at, end)` of `region` as one slice: borrowed where they
/// lie in one of its two, else gathered into `buf`.
fn contiguous<'a>(region: Input<'a>, at: usize, end: usize, buf: &'a mut Vec<u8>) -> &'a [u8] {
    let f = region.first.len();
    if end <= f {
        return &region.first[at..end];
    }
    if at >= f {
        return &region.second[at - f..end - f];
    }
    buf.clear();
    buf.extend_from_slice(&region.first[at..]);
    buf.extend_from_slice(&region.second[..end - f]);
    buf
}

/// The record at `[at, end)` of `region` as the stack cut's `edits` (those
/// inside it) make it, into `v`.
fn cut_copy(
    region: Input<'_>,
    (at, end): (usize, usize),
    edits: &[Edit],
    mine: &mut Vec<Edit>,
    v: &mut Vec<u8>,
) {
    let (_, rest) = region.split_at(at);
    let (rec, _) = rest.split_at(end - at);
    mine.clear();
    mine.extend(edits.iter().map(|e| match *e {
        Edit::Replace { at: a, with } => Edit::Replace { at: a - at, with },
        Edit::Skip { at: a, len } => Edit::Skip { at: a - at, len },
    }));
    let _ = for_each_piece(rec, mine, |p| {
        v.extend_from_slice(p);
        Ok::<(), ()>(())
    });
}
