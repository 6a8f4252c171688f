//! The off-CPU event's records taken out of a region: its samples, SWITCH
//! records and the FORK and EXIT records noted, into the pass's events.

use perfz_codecs::Input;

use super::edits::{contiguous, cut_copy, edit_at, skip, skip_records, word};
use super::waits::{chain_hash, Seen};
use super::OffCpu;
use crate::format::attr::sample_type as st;
use crate::format::record::misc::SWITCH_OUT;
use crate::format::record::RecordType;
use crate::format::sample::{id_trailer_offset, id_trailer_size};
use crate::transform::scan::headers;
use crate::transform::Edit;

/// `PERF_RECORD_MISC_SWITCH_OUT_PREEMPT`: the thread was runnable.
const SWITCH_OUT_PREEMPT: u16 = 1 << 14;

impl OffCpu {
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
        self.first = self.first.min(time);
    }

    /// Takes the off-CPU event's records out of `region`: they are left out
    /// of the push (`edits`, which hold the stack cut's, gain a skip for
    /// each and lose theirs inside), its samples kept as the cut made them.
    /// Records of ids not the recording's go too; FORK and EXIT records
    /// stay, noted.
    pub fn take(&mut self, region: Input<'_>, edits: &mut Vec<Edit>) {
        let mut skips = std::mem::take(&mut self.skips);
        skips.clear();
        let mut scratch = std::mem::take(&mut self.wrapped);
        // The edits (sorted) from the current record on.
        let mut ei = 0;
        for (at, h) in headers(region) {
            let t = h.type_;
            let task = t == RecordType::FORK || t == RecordType::EXIT;
            let switch = t == RecordType::SWITCH || t == RecordType::SWITCH_CPU_WIDE;
            if t != RecordType::SAMPLE && !switch && !task {
                continue;
            }
            let end = at + h.size as usize;
            let rec = contiguous(region, at, end, &mut scratch);
            if task {
                self.task(rec, t == RecordType::EXIT);
                continue;
            }
            if switch {
                if self.switch(rec, h.misc) {
                    skip(&mut skips, at, end);
                }
                continue;
            }
            if end < at + self.fields.period + 8 {
                continue;
            }
            let id = word(rec, self.fields.id);
            if !self.all_ids.contains(&id) {
                self.foreign += 1;
                skip(&mut skips, at, end);
                continue;
            }
            let time = word(rec, self.fields.time);
            self.first = self.first.min(time);
            if !self.ids.contains(&id) {
                self.latest = self.latest.max(time);
                continue;
            }
            while ei < edits.len() && edit_at(&edits[ei]) < at {
                ei += 1;
            }
            let ej = ei + edits[ei..].partition_point(|e| edit_at(e) < end);
            self.sample(region, (at, end), rec, &edits[ei..ej]);
            skip(&mut skips, at, end);
        }
        skip_records(edits, &skips);
        self.skips = skips;
        self.wrapped = scratch;
    }

    /// A switch-out sample of the off-CPU event, into the pass's events.
    fn sample(&mut self, region: Input<'_>, at_end: (usize, usize), rec: &[u8], edits: &[Edit]) {
        let pid_tid = word(rec, self.fields.tid);
        let (pid, tid) = (pid_tid as u32, (pid_tid >> 32) as u32);
        let time = word(rec, self.fields.time);
        // A stack the waits keep a sample of: this one's bytes are not
        // needed (and no cut edits a chain's sample).
        let key = chain_hash(rec, &self.fields);
        let bytes = if key.is_some_and(|h| self.known.contains(&(tid, h))) {
            Vec::new()
        } else {
            self.copy(region, at_end, rec, edits)
        };
        self.order(time);
        self.batch.push(Seen::Sample {
            pid,
            tid,
            time,
            key,
            bytes,
        });
    }

    /// A SWITCH record: the off-CPU event's into the pass's events. True
    /// where it leaves the stream (the off-CPU event's, or another
    /// recorder's id).
    fn switch(&mut self, rec: &[u8], misc: u16) -> bool {
        let st = self.sample_type;
        let trailer = id_trailer_size(st);
        let tr_id = id_trailer_offset(st, st::ID).or_else(|| id_trailer_offset(st, st::IDENTIFIER));
        let (Some(i), Some(ti), Some(tm)) = (
            tr_id,
            id_trailer_offset(st, st::TID),
            id_trailer_offset(st, st::TIME),
        ) else {
            return false;
        };
        let Some(tr) = rec.len().checked_sub(trailer).filter(|&s| s >= 8) else {
            return false;
        };
        let id = word(rec, tr + i);
        if !self.ids.contains(&id) {
            self.foreign += !self.all_ids.contains(&id) as u64;
            return !self.all_ids.contains(&id);
        }
        let out = misc & SWITCH_OUT != 0;
        let time = word(rec, tr + tm);
        let pid_tid = word(rec, tr + ti);
        self.order(time);
        self.batch.push(Seen::Switch {
            pid: pid_tid as u32,
            tid: (pid_tid >> 32) as u32,
            time,
            out,
            preempt: out && misc & SWITCH_OUT_PREEMPT != 0,
        });
        true
    }

    /// A FORK (a task that may reuse a tid gone) or EXIT record, noted:
    /// its body is pid, ppid, tid, ptid (u32 each), time.
    fn task(&mut self, rec: &[u8], exit: bool) {
        if rec.len() < 32 {
            return;
        }
        let tid = (word(rec, 16)) as u32;
        let time = word(rec, 24);
        self.order(time);
        self.batch.push(Seen::Task { tid, time, exit });
    }
}
