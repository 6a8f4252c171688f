//! What a recording writes besides the rings' records: the side band perf
//! synthesizes (at the start, and for an output started later), the
//! LOST_SAMPLES records, the build ids and HEADER_COMPRESSED as announced.

use super::Recording;
use crate::event::sys;
use crate::event::target::Target;
use crate::format::attr::sample_type as st;
use crate::format::record::RecordType;
use crate::format::sample::id_trailer_offset;
use crate::format::{CompressedInfo, FeatureSet};
use crate::notes::Notes;
use crate::push::records::declared_mmap_len;
use crate::session::build_ids;
use crate::session::synth_side_band::SynthSideBand;
use crate::synth;
use crate::transform::scan::Hits;

impl Recording<'_> {
    /// The records perf synthesizes before the ring data.
    pub fn side_band(&self, notes: &mut Notes) -> Vec<u8> {
        self.side_band_of(&self.o.target, notes)
    }

    fn side_band_of(&self, target: &Target, notes: &mut Notes) -> Vec<u8> {
        SynthSideBand {
            target,
            call_graph: self.o.call_graph,
            synth: self.o.synth,
            tracking_flags: self.o.attr_extra.tracking_flags,
            map_timeout: self.o.proc_map_timeout,
            tgids: &self.prepared.tgids,
            trailer: self.prepared.trailer_size(),
        }
        .build(notes)
    }

    /// The side band of an output started after the recording's start (a
    /// switched output, a flight-recorder snapshot): the processes as /proc
    /// shows them now (a forked workload has exec'd since), plus every map
    /// and comm record seen so far, before FINISHED_INIT — a process exiting
    /// (or gone) by now has nothing left in /proc, but its samples are there.
    pub fn later_side_band(&self, map_history: &[u8], notes: &mut Notes) -> Vec<u8> {
        let target = match &self.o.target {
            Target::Workload(_) => Target::Pids(self.prepared.tgids.clone()),
            t => t.clone(),
        };
        let mut sb = self.side_band_of(&target, notes);
        let init = sb.split_off(sb.len() - 8);
        sb.extend_from_slice(map_history);
        sb.extend_from_slice(&init);
        sb
    }

    /// LOST_SAMPLES records for every event fd whose PERF_FORMAT_LOST count
    /// is non-zero, and the total.
    pub fn lost_samples(&self) -> (Vec<u8>, u64) {
        let p = &self.prepared;
        let (mut recs, mut total) = (Vec::new(), 0u64);
        let sample_type = p.set.attrs[0].attr.sample_type();
        for f in &p.set.fds {
            if let Ok(lost) = sys::read_lost(&f.fd, f.id) {
                if lost > 0 {
                    total += lost;
                    recs.extend(lost_samples_record(
                        lost,
                        f.id,
                        sample_type,
                        p.trailer_size(),
                        0,
                    ));
                }
            }
        }
        recs.extend(self.bpf_lost_samples(sample_type, p.trailer_size()));
        (recs, total)
    }

    /// HEADER_BUILD_ID (and the cache) for what `hits` saw, where asked.
    pub fn add_build_ids(&self, f: &mut FeatureSet, hits: &Hits, notes: &mut Notes) {
        if self.o.build_ids.table {
            let vmlinux = self.o.vmlinux.as_deref();
            build_ids::add(f, hits, &self.o.build_ids, vmlinux, notes);
        }
    }

    /// HEADER_COMPRESSED as an output announces it before its first
    /// COMPRESSED record (a pipe, a `--threads` directory): the ratio is
    /// unknown until the end (perf writes 0).
    pub fn announced_codec(&self) -> Option<CompressedInfo> {
        let id = self.o.codec.id();
        (id != perfz_codecs::CodecId::NONE).then(|| CompressedInfo {
            version: 0,
            codec: id.0,
            level: self.o.codec.level() as u32,
            ratio: 0,
            mmap_len: declared_mmap_len(id, 0),
        })
    }
}

/// LOST_SAMPLES: `u64 lost` and a sample_id trailer carrying the event's
/// id; `misc` marks what dropped them (0: the kernel, for want of room).
pub(super) fn lost_samples_record(
    lost: u64,
    id: u64,
    sample_type: u64,
    trailer: usize,
    misc: u16,
) -> Vec<u8> {
    let mut rec = synth::record(
        RecordType::LOST_SAMPLES.0,
        misc,
        &lost.to_le_bytes(),
        trailer,
    );
    // The id where the trailer has it: ID, IDENTIFIER (--sample-identifier)
    // or both.
    for field in [st::ID, st::IDENTIFIER] {
        if let Some(off) = id_trailer_offset(sample_type, field).filter(|_| trailer > 0) {
            let at = rec.len() - trailer + off;
            rec[at..at + 8].copy_from_slice(&id.to_le_bytes());
        }
    }
    rec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_samples_carries_the_id_where_the_trailer_has_it() {
        let stype = st::TID | st::TIME | st::ID | st::CPU;
        let rec = lost_samples_record(5, 0xabcd, stype, 32, 0);
        assert_eq!(rec.len(), 8 + 8 + 32);
        assert_eq!(u32::from_le_bytes(rec[0..4].try_into().unwrap()), 13);
        assert_eq!(u64::from_le_bytes(rec[8..16].try_into().unwrap()), 5);
        // tid (8) + time (8), then the id.
        assert_eq!(u64::from_le_bytes(rec[32..40].try_into().unwrap()), 0xabcd);
    }

    #[test]
    fn lost_samples_carries_the_id_as_its_identifier_too() {
        let stype = st::TID | st::TIME | st::CPU | st::IDENTIFIER;
        let rec = lost_samples_record(7, 0x1234, stype, 32, 1 << 15);
        assert_eq!(u16::from_le_bytes(rec[4..6].try_into().unwrap()), 1 << 15);
        // tid, time, cpu, then the identifier, last.
        assert_eq!(u64::from_le_bytes(rec[40..48].try_into().unwrap()), 0x1234);
    }
}
