//! Unwritten bytes in dwarf samples, dropped before they are written.
//!
//! A `PERF_SAMPLE_STACK_USER` sample reserves `size` bytes for the user stack
//! (`--call-graph dwarf,SIZE`) but the kernel copies only `dyn_size` of them —
//! the stack above the sampled thread's stack pointer usually ends long
//! before SIZE bytes — and *skips* the rest (`perf_output_skip`): those bytes
//! keep whatever an earlier record left at that place in the ring. Nothing
//! reads them: perf unwinds from the first `dyn_size` bytes. On the repo's
//! dwarf workload they are 94 % of the ring data.
//!
//! [`StackCut::edits`] walks the samples of a ring region and describes,
//! per sample, the same sample with its stack dump cut to
//! `round_up(dyn_size, 8)` bytes (at least 8): the record header and the
//! stack `size` field get new values, the unwritten bytes are skipped. Such a
//! sample is one the kernel itself writes when less stack is available, and
//! perf parses it the same way (it checks only `dyn_size <= size`).
//! [`for_each_slice`](super::for_each_slice) hands the region to a codec or a `writev` as ring
//! slices and the two 8-byte replacements per sample: the ring is never
//! written (its data pages are read-only) and nothing is copied.
//!
//! Where events differ, each sample's event is found by its id (IDENTIFIER,
//! or ID at the same place in every event's samples; else nothing is cut:
//! [`Uncut::NoId`]). Its [`Layout`] must end exactly at the record's end,
//! else the sample is left whole and counted ([`Walked::uncut`], the
//! summary's uncut samples). The same walk serves `perfz recompress`
//! (src/convert/mod.rs) and eval.

use perfz_codecs::Input;

use super::edit::Edit;
pub use super::sample_layout::Uncut;
use super::sample_layout::{Layout, StackAt};
use super::scan::headers;
use crate::format::record::{RecordHeader, RecordType};
use crate::format::AttrEntry;

/// Where the samples of a recording keep their user-stack dumps: one
/// `Layout` per event, found by the sample's id where events differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StackCut {
    /// The layout of every sample, where all events share one.
    single: Option<Layout>,
    /// Offset of the id in a sample's body (where events differ).
    id_at: usize,
    /// Event ids, sorted, with the index of their layout in `layouts`.
    ids: Vec<(u64, usize)>,
    layouts: Vec<Option<Layout>>,
}

/// What one walk did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Walked {
    /// Stack bytes left out.
    pub dropped: u64,
    /// Samples of an event with a stack that were left whole: their fields
    /// did not parse as their event's layout, or their id is unknown.
    pub uncut: u64,
    /// How much of their dumps the cut samples used.
    pub used: super::stack_use::StackUse,
}

impl StackCut {
    /// The layout for samples of one event, or `None` where its samples
    /// have no user stack or fields this walker does not know.
    pub fn for_samples(sample_type: u64, sample_regs_user: u64) -> Option<StackCut> {
        let mut attr = crate::format::Attr::new();
        attr.set_u64(24, sample_type);
        attr.set_u64(80, sample_regs_user);
        Self::for_attrs(&[AttrEntry::new(attr, None)])
            .ok()
            .flatten()
    }

    /// The layouts of a recording's events: `Ok(None)` where no event
    /// samples a user stack, an error naming why where they cannot be cut.
    pub fn for_attrs(attrs: &[AttrEntry]) -> Result<Option<StackCut>, Uncut> {
        let layouts = attrs
            .iter()
            .map(|e| Layout::for_attr(&e.attr))
            .collect::<Result<Vec<_>, _>>()?;
        if layouts.iter().all(Option::is_none) {
            return Ok(None);
        }
        if layouts.iter().all(|l| *l == layouts[0]) {
            return Ok(Some(StackCut {
                single: layouts[0],
                id_at: 0,
                ids: Vec::new(),
                layouts: Vec::new(),
            }));
        }
        let at = crate::format::sample::id_offset(attrs[0].attr.sample_type());
        if at.is_none()
            || attrs
                .iter()
                .any(|e| crate::format::sample::id_offset(e.attr.sample_type()) != at)
        {
            return Err(Uncut::NoId);
        }
        let mut ids: Vec<(u64, usize)> = attrs
            .iter()
            .enumerate()
            .flat_map(|(i, e)| e.ids.iter().map(move |&id| (id, i)))
            .collect();
        ids.sort_unstable();
        Ok(Some(StackCut {
            single: None,
            id_at: at.unwrap_or(0),
            ids,
            layouts,
        }))
    }

    /// The layout of the sample at `at` (size known to be in the region).
    fn layout_of(&self, region: Input<'_>, at: usize, size: usize) -> Result<Option<Layout>, ()> {
        if self.layouts.is_empty() {
            return Ok(self.single);
        }
        let p = at + RecordHeader::SIZE + self.id_at;
        if p.checked_add(8).is_none_or(|e| e > at + size) {
            return Err(());
        }
        let id = u64::from_le_bytes(region.read8(p));
        match self.ids.binary_search_by_key(&id, |&(id, _)| id) {
            Ok(k) => Ok(self.layouts[self.ids[k].1]),
            Err(_) => Err(()),
        }
    }

    /// Appends the edits that cut every sample of `region` to its written
    /// stack bytes (in order of offset). A record header that runs past the
    /// region ends the walk; a sample that does not parse as its event's
    /// layout is left whole and the walk goes on with the next record.
    pub fn edits(&self, region: Input<'_>, edits: &mut Vec<Edit>) -> Walked {
        let mut w = Walked::default();
        for (at, h) in headers(region) {
            let size = h.size as usize;
            if h.type_ == RecordType::SAMPLE {
                let stack = match self.layout_of(region, at, size) {
                    Ok(Some(l)) => l.stack(region, at, size).map(Cut::of),
                    Ok(None) => Some(Cut::NONE),
                    Err(()) => None,
                };
                if let Some(c) = &stack {
                    if c.size_field != 0 {
                        w.used.add(c.keep as u64, (c.keep + c.drop) as u64);
                    }
                }
                match stack {
                    Some(Cut { drop: 0, .. }) => {}
                    Some(c) => {
                        let header = RecordHeader {
                            size: (size - c.drop) as u16,
                            ..h
                        };
                        edits.push(Edit::Replace {
                            at,
                            with: header.to_le(),
                        });
                        edits.push(Edit::Replace {
                            at: c.size_field,
                            with: (c.keep as u64).to_le_bytes(),
                        });
                        edits.push(Edit::Skip {
                            at: c.size_field + 8 + c.keep,
                            len: c.drop,
                        });
                        w.dropped += c.drop as u64;
                    }
                    None => w.uncut += 1,
                }
            }
        }
        w
    }
}

impl Cut {
    const NONE: Cut = Cut {
        size_field: 0,
        keep: 0,
        drop: 0,
    };

    /// Keep whole 8-byte words of the written stack, and at least one: a
    /// size of 0 would mean "no dyn_size field" to a reader.
    fn of(s: StackAt) -> Cut {
        if s.size == 0 {
            return Cut::NONE;
        }
        // dyn_size <= size and size % 8 == 0 were checked by the walk, and
        // size fits in the record (< 64 KiB).
        let (size, dyn_size) = (s.size as usize, s.dyn_size as usize);
        let keep = (dyn_size.div_ceil(8).max(1) * 8).min(size);
        Cut {
            size_field: s.size_field,
            keep,
            drop: size - keep,
        }
    }
}

/// How one sample's stack dump is cut.
#[derive(Clone, Copy, Debug)]
struct Cut {
    /// Offset of the stack `size` field in the region.
    size_field: usize,
    /// Stack bytes kept.
    keep: usize,
    /// Stack bytes dropped.
    drop: usize,
}

#[cfg(test)]
mod tests;
