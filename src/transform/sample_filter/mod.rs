//! Sample filters: perf's `--filter` on a non-tracepoint event (perf 6.6+,
//! perf's grammar in [`parse()`]), run in the kernel where perfz's BPF
//! program loads and attaches ([`kernel`]: a sample dropped there never
//! reaches the ring), else applied in the push path: a sample of a
//! filtered event that fails its filter is left out of the stream (an
//! [`Edit::Skip`] over its record) before the codec, and counted (the ring
//! carries it, the file does not).

mod build;
pub mod compile;
pub mod fields;
pub mod kernel;
pub mod owners;
pub mod parse;

use perfz_codecs::Input;

pub use build::for_attrs;
pub use compile::{compile, Compiled};
pub use parse::parse;

use super::scan::headers;
use super::Edit;
use crate::format::record::{RecordHeader, RecordType};
use compile::{Loc, Probe};
use fields::Term;
use owners::Owners;

/// The filters of a recording's events, found by a sample's id where
/// events differ, and the samples they left out.
#[derive(Clone, Debug)]
pub struct SampleFilter {
    /// Per event (attr order): its filter, if any.
    per_event: Vec<Option<Compiled>>,
    /// Offset of the id in a sample's body (more than one event).
    id_at: usize,
    /// Event ids, sorted, with their event's index.
    ids: Vec<(u64, usize)>,
    owners: Owners,
    /// Samples left out so far.
    dropped: u64,
    /// The current piece's samples left out: (offset, length).
    drops: Vec<(usize, usize)>,
}

impl SampleFilter {
    /// The filters `per_event` of events whose samples carry their id at
    /// `id_at` (None: one event), with `ids` (id, event index).
    pub fn new(
        per_event: Vec<Option<Compiled>>,
        id_at: Option<usize>,
        mut ids: Vec<(u64, usize)>,
    ) -> Option<Self> {
        if per_event.iter().all(Option::is_none) {
            return None;
        }
        ids.sort_unstable();
        Some(SampleFilter {
            id_at: id_at.unwrap_or(usize::MAX),
            per_event,
            ids,
            owners: Owners::default(),
            dropped: 0,
            drops: Vec::new(),
        })
    }

    /// Each event's filter, placed in its samples (attr order).
    pub fn compiled(&self) -> &[Option<Compiled>] {
        &self.per_event
    }

    /// Samples left out so far.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The filter of the sample at `at` (of `size` bytes).
    fn filter_of(&self, region: Input<'_>, at: usize, size: usize) -> Option<usize> {
        if self.per_event.len() == 1 {
            return Some(0);
        }
        let p = at.checked_add(RecordHeader::SIZE + self.id_at)?;
        if p.checked_add(8)? > at + size {
            return None;
        }
        let id = u64::from_le_bytes(region.read8(p));
        let k = self.ids.binary_search_by_key(&id, |&(id, _)| id).ok()?;
        Some(self.ids[k].1)
    }

    /// Adds to `edits` (in order of offset) a skip over every sample of
    /// `region` its event's filter leaves out; edits inside a skipped
    /// sample are dropped with it.
    pub fn edits(&mut self, region: Input<'_>, edits: &mut Vec<Edit>) {
        self.drops.clear();
        for (at, h) in headers(region) {
            let size = h.size as usize;
            match h.type_ {
                RecordType::SAMPLE => {}
                RecordType::COMM | RecordType::FORK if size >= RecordHeader::SIZE + 8 => {
                    if self.per_event.iter().flatten().any(|c| c.owners) {
                        let pid = u64::from_le_bytes(region.read8(at + RecordHeader::SIZE));
                        self.owners.renew(pid as u32);
                    }
                    continue;
                }
                _ => continue,
            }
            let Some(k) = self.filter_of(region, at, size) else {
                continue;
            };
            let Some(c) = self.per_event.get(k).and_then(Option::as_ref) else {
                continue;
            };
            if !keeps(c, region, at, size, &mut self.owners) {
                self.drops.push((at, size));
            }
        }
        if self.drops.is_empty() {
            return;
        }
        self.dropped += self.drops.len() as u64;
        let drops = &self.drops;
        let inside = |p: usize| {
            let i = drops.partition_point(|&(at, _)| at <= p);
            i > 0 && p < drops[i - 1].0 + drops[i - 1].1
        };
        edits.retain(|e| match e {
            Edit::Replace { at, .. } | Edit::Skip { at, .. } => !inside(*at),
        });
        edits.extend(drops.iter().map(|&(at, len)| Edit::Skip { at, len }));
        edits.sort_by_key(|e| match e {
            Edit::Replace { at, .. } | Edit::Skip { at, .. } => *at,
        });
    }
}

/// Whether the sample at `at` (`size` bytes) passes `c`: every group holds
/// a check that does. A word outside the record fails its check.
#[inline]
fn keeps(c: &Compiled, region: Input<'_>, at: usize, size: usize, owners: &mut Owners) -> bool {
    c.groups
        .iter()
        .all(|g| g.iter().any(|k| holds(k, region, at, size, owners)))
}

#[inline]
fn holds(k: &Probe, region: Input<'_>, at: usize, size: usize, owners: &mut Owners) -> bool {
    let body = RecordHeader::SIZE;
    let p = match k.loc {
        Loc::Start(o) => body + o,
        Loc::End(o) => match size.checked_sub(o) {
            Some(p) if p >= body => p,
            _ => return false,
        },
    };
    if p + 8 > size {
        return false;
    }
    let w = u64::from_le_bytes(region.read8(at + p));
    let v = match k.term {
        Term::Uid | Term::Gid => {
            let Some((uid, gid)) = owners.of(w as u32) else {
                return false;
            };
            u64::from(if k.term == Term::Uid { uid } else { gid })
        }
        t => t.part_of(w),
    };
    k.op.holds(v, k.value)
}

#[cfg(test)]
mod tests;
