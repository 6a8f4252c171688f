//! One walk over a file's records, counting what `perfz stat` shows.

use std::collections::BTreeMap;

use super::Compression;
use crate::format::record::{misc, RecordType};
use crate::format::FormatError;

/// What one walk over a file's records counts.
#[derive(Default)]
pub(super) struct RecordWalk {
    pub(super) counts: BTreeMap<u32, (String, u64)>,
    pub(super) total: u64,
    pub(super) lost: u64,
    pub(super) lost_samples: u64,
    /// LOST_SAMPLES marked as a BPF filter's drops.
    pub(super) dropped_samples: u64,
    pub(super) largest_loss: u64,
    pub(super) data_size: u64,
    pub(super) comp_bytes: u64,
    pub(super) decomp_bytes: u64,
    /// Samples per attr index, and their bytes.
    pub(super) samples: BTreeMap<usize, u64>,
    pub(super) sample_bytes: u64,
    pub(super) stack_use: crate::transform::stack_use::StackUse,
}

impl RecordWalk {
    /// Counts one record.
    pub(super) fn add(&mut self, rec: &crate::format::Record<'_>, meta: &crate::format::Meta) {
        let t = rec.header.type_;
        self.total += 1;
        if !rec.nested {
            self.data_size += rec.bytes.len() as u64;
        } else {
            self.decomp_bytes += rec.bytes.len() as u64;
        }
        if t.is_compressed() {
            self.comp_bytes += rec.bytes.len() as u64;
        }
        self.counts
            .entry(t.0)
            .or_insert_with(|| (t.to_string(), 0))
            .1 += 1;
        let body = rec.body();
        let u64_at = |o: usize| {
            body.get(o..o + 8)
                .map_or(0, |b| meta.endian.u64(b.try_into().unwrap()))
        };
        match t {
            RecordType::LOST => {
                self.lost += u64_at(8);
                self.largest_loss = self.largest_loss.max(u64_at(8));
            }
            RecordType::LOST_SAMPLES if rec.header.misc & misc::LOST_SAMPLES_BPF != 0 => {
                self.dropped_samples += u64_at(0)
            }
            RecordType::LOST_SAMPLES => self.lost_samples += u64_at(0),
            RecordType::SAMPLE => {
                if let Some(i) = meta.attr_index_of_sample(rec) {
                    *self.samples.entry(i).or_default() += 1;
                    self.sample_bytes += rec.bytes.len() as u64;
                    self.stack_used(rec, meta, &meta.attrs[i]);
                }
            }
            _ => {}
        }
    }

    /// How much of its stack dump a dwarf sample used.
    fn stack_used(
        &mut self,
        rec: &crate::format::Record<'_>,
        meta: &crate::format::Meta,
        a: &crate::format::AttrEntry,
    ) {
        if a.attr.sample_type() & crate::format::attr::sample_type::STACK_USER == 0 {
            return;
        }
        let Ok(s) =
            crate::format::sample::Sample::parse(rec.body(), &a.attr, meta.endian, rec.offset)
        else {
            return;
        };
        if s.user_stack_size > 0 {
            self.stack_use.add(
                s.user_stack_len.min(s.user_stack_size),
                // A cut dump's size is what was kept: the asked size is in
                // the attr.
                u64::from(a.attr.sample_stack_user()).max(s.user_stack_size),
            );
        }
    }
}

impl RecordWalk {
    /// The file's codec (from `f`, its features) with the bytes read
    /// through it; None for a file without HEADER_COMPRESSED.
    pub(super) fn compression(
        &self,
        f: &crate::format::FeatureSet,
    ) -> Result<Option<Compression>, FormatError> {
        Ok(f.compressed()?.map(|c| Compression {
            codec: c.codec_id().name().unwrap_or("unknown").to_string(),
            codec_id: c.codec,
            level: c.level,
            declared_ratio: c.ratio,
            mmap_len: c.mmap_len,
            compressed_bytes: self.comp_bytes,
            decompressed_bytes: self.decomp_bytes,
        }))
    }

    /// The loss advice for what was read, where events were lost.
    pub(super) fn advice(&self) -> Option<crate::advice::Advice> {
        (self.lost > 0).then(|| {
            let n: u64 = self.samples.values().sum();
            let mix = crate::advice::Mix::samples(self.sample_bytes / n.max(1));
            let sample_share = n as f64 / self.total.max(1) as f64;
            let mix = crate::advice::Mix {
                sample_share,
                ..mix
            };
            crate::advice::advise(&self.stack_use, None, self.largest_loss, mix)
        })
    }
}
