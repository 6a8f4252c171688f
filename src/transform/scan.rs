//! Counting records in a ring region without copying it: samples (and
//! their times) for the summary, LOST records for the lost-event total and
//! the largest single loss. Record headers are 8-byte aligned and never
//! split by the wrap; bodies may be.
//!
//! The same walk notes what the build-id pass needs ([`Hits`], one per
//! drain unit): each sample's `(pid, ip page)` and a copy of the MMAP,
//! MMAP2, FORK and COMM records, bounded ([`MAX_MAP_BYTES`], oldest dropped
//! first; [`MAX_PAGES`]) so a capture that runs for days stays bounded. The
//! drain calls [`note`] per record as it cuts a region into pieces, one walk
//! for counts and hits; [`scan_hits`] walks a whole buffer (a side band,
//! for the map history). Executable map records are also offered to the
//! DSO capture ([`capture_maps_to`]).

use perfz_codecs::Input;

use crate::format::record::misc;
use crate::format::record::{RecordHeader, RecordType};

/// What a drain counted in the ring regions it pushed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct RecordCounts {
    /// Records of every type.
    pub records: u64,
    /// SAMPLE records.
    pub samples: u64,
    /// LOST records seen.
    pub lost_records: u64,
    /// Sum of their `lost` fields: events the kernel dropped (ring full).
    pub lost_events: u64,
    /// The largest `lost` of one LOST record: the worst single overflow.
    pub max_lost: u64,
    /// The earliest and latest sample times seen (HEADER_SAMPLE_TIME).
    #[serde(skip)]
    pub times: SampleTimes,
}

/// The first and last sample times of a stretch of records, as
/// HEADER_SAMPLE_TIME says them: the least and the greatest `time` of its
/// SAMPLE records (perf takes the first and last in file order; rings
/// drained one after another are not in time order, so the extremes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleTimes {
    /// The least sample time (`u64::MAX` before the first sample).
    pub first: u64,
    /// The greatest sample time (0 before the first sample).
    pub last: u64,
}

impl Default for SampleTimes {
    fn default() -> Self {
        SampleTimes {
            first: u64::MAX,
            last: 0,
        }
    }
}

impl SampleTimes {
    /// Notes one sample's time.
    #[inline]
    pub fn note(&mut self, t: u64) {
        self.first = self.first.min(t);
        self.last = self.last.max(t);
    }

    /// Adds another stretch's times.
    pub fn merge(&mut self, o: SampleTimes) {
        self.first = self.first.min(o.first);
        self.last = self.last.max(o.last);
    }

    /// `(first, last)`, or `None` when no sample was seen.
    pub fn range(&self) -> Option<(u64, u64)> {
        (self.first <= self.last).then_some((self.first, self.last))
    }
}

/// Offset of `u64 time` in a SAMPLE record: perfz's attrs sample IP, TID
/// and TIME, never IDENTIFIER, so it follows the header, ip and pid/tid.
const SAMPLE_TIME_FIELD: usize = RecordHeader::SIZE + 16;

/// Offset of `u64 lost` in a LOST record (after the header and `u64 id`).
const LOST_FIELD: usize = RecordHeader::SIZE + 8;

/// What the build-id pass needs, gathered while draining so the recording
/// is never read back: the code pages samples hit, per process, and the
/// records that say what is mapped where. Bounded for captures that run for
/// days: at most [`MAX_MAP_BYTES`] of map records (the oldest go first:
/// processes alive later are synthesized from /proc again) and
/// [`MAX_PAGES`] pages (later pages are not noted).
#[derive(Debug, Default, Clone)]
pub struct Hits {
    /// `(pid, ip >> 12)` of every sample; kernel samples under pid
    /// `u32::MAX`.
    pub pages: rustc_hash::FxHashSet<(u32, u64)>,
    /// MMAP, MMAP2, FORK and COMM records, whole, one after another.
    pub maps: Vec<u8>,
}

/// Where the executable MMAP/MMAP2 records go as they are drained, for the
/// capture of DSOs a recording may not reach at its end (a container's
/// private files, deleted ones: `session/dso_capture/`); `None` unless a
/// capture runs. The drain only offers a copy (rare: maps are made when
/// programs start) and never waits.
static CAPTURE: std::sync::RwLock<Option<std::sync::mpsc::SyncSender<Vec<u8>>>> =
    std::sync::RwLock::new(None);

/// Map records the capture took, and those it had no room for.
static OFFERED: [std::sync::atomic::AtomicU64; 2] = [
    std::sync::atomic::AtomicU64::new(0),
    std::sync::atomic::AtomicU64::new(0),
];

/// How many map records the capture took so far, and how many it had no
/// room for.
pub fn offered() -> (u64, u64) {
    use std::sync::atomic::Ordering::Relaxed;
    (OFFERED[0].load(Relaxed), OFFERED[1].load(Relaxed))
}

/// Sends every executable map record drained from now on to `to` (`None`:
/// stops).
pub fn capture_maps_to(to: Option<std::sync::mpsc::SyncSender<Vec<u8>>>) {
    if let Ok(mut g) = CAPTURE.write() {
        *g = to;
    }
}

/// Offers one map record to the capture, if one runs.
#[cold]
fn offer(rec: &[u8]) {
    if let Ok(g) = CAPTURE.read() {
        if let Some(tx) = g.as_ref() {
            let took = tx.try_send(rec.to_vec()).is_ok();
            OFFERED[usize::from(!took)].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// Most bytes of map records a [`Hits`] keeps.
pub const MAX_MAP_BYTES: usize = 16 << 20;
/// Most sample pages a [`Hits`] keeps.
pub const MAX_PAGES: usize = 1 << 18;

impl Hits {
    /// Notes one record of `region` at `at`.
    #[inline]
    fn record(&mut self, region: Input<'_>, at: usize, h: &RecordHeader) {
        match h.type_ {
            // Every sample starts with IP, then pid and tid (perfz's attrs
            // always sample both and never IDENTIFIER).
            RecordType::SAMPLE if h.size >= 24 => {
                let ip = u64::from_le_bytes(region.read8(at + 8));
                let pidtid = region.read8(at + 16);
                let pid = if h.misc & misc::CPUMODE_MASK == misc::KERNEL {
                    u32::MAX
                } else {
                    u32::from_le_bytes(pidtid[..4].try_into().unwrap())
                };
                if self.pages.len() < MAX_PAGES {
                    self.pages.insert((pid, ip >> 12));
                }
            }
            RecordType::MMAP | RecordType::MMAP2 | RecordType::FORK | RecordType::COMM => {
                let (_, from) = region.split_at(at);
                let (rec, _) = from.split_at(h.size as usize);
                let start = self.maps.len();
                for p in rec.parts() {
                    self.maps.extend_from_slice(p);
                }
                let exec_map = matches!(h.type_, RecordType::MMAP | RecordType::MMAP2)
                    && h.misc & misc::MMAP_DATA == 0;
                if exec_map {
                    offer(&self.maps[start..]);
                }
                self.trim();
            }
            _ => {}
        }
    }

    /// Adds another collector's findings.
    pub fn merge(&mut self, other: Hits) {
        let room = MAX_PAGES.saturating_sub(self.pages.len());
        self.pages.extend(other.pages.into_iter().take(room));
        self.maps.extend(other.maps);
        self.trim();
    }

    /// Drops the oldest whole map records beyond [`MAX_MAP_BYTES`] (down
    /// to three quarters of it, so this runs rarely).
    fn trim(&mut self) {
        if self.maps.len() <= MAX_MAP_BYTES {
            return;
        }
        let goal = self.maps.len() - MAX_MAP_BYTES / 4 * 3;
        let mut at = 0;
        while at < goal && at + 8 <= self.maps.len() {
            let size = u16::from_le_bytes([self.maps[at + 6], self.maps[at + 7]]) as usize;
            if size < 8 {
                break;
            }
            at += size;
        }
        self.maps.drain(..at.min(self.maps.len()));
    }
}

/// The records of a ring region in order, as (offset, header). Stops at a
/// header that cannot be right (size < 8, or past the region's end): every
/// walk over ring data ends there rather than loop or read past the end.
#[inline]
pub fn headers(region: Input<'_>) -> Headers<'_> {
    Headers { region, at: 0 }
}

/// The walk of [`headers`].
#[derive(Clone)]
pub struct Headers<'a> {
    region: Input<'a>,
    at: usize,
}

impl Iterator for Headers<'_> {
    type Item = (usize, RecordHeader);

    #[inline]
    fn next(&mut self) -> Option<(usize, RecordHeader)> {
        let (len, at) = (self.region.len(), self.at);
        if at + RecordHeader::SIZE > len {
            return None;
        }
        let h = RecordHeader::from_le(self.region.read8(at));
        let size = h.size as usize;
        if size < RecordHeader::SIZE || size > len - at {
            return None;
        }
        self.at = at + size;
        Some((at, h))
    }
}

/// Adds the records of `region` to `counts`. Stops at a header that cannot be
/// right (size < 8 or past the end) instead of looping. (Tests' oracle: the
/// drain counts as it cuts pieces, `note`.)
#[cfg(test)]
pub fn scan(region: Input<'_>, counts: &mut RecordCounts) {
    scan_hits(region, counts, None)
}

/// Adds the records of `region` to `counts`, noting what the build-id pass
/// needs into `hits`; stops at a header that cannot be right.
pub fn scan_hits(region: Input<'_>, counts: &mut RecordCounts, mut hits: Option<&mut Hits>) {
    for (at, h) in headers(region) {
        note(region, (at, &h), counts, hits.as_deref_mut());
    }
}

/// Counts the record at `at` (header `h`) of `region` into `counts`, and
/// notes what the build-id pass needs into `hits`.
#[inline]
pub fn note(
    region: Input<'_>,
    (at, h): (usize, &RecordHeader),
    counts: &mut RecordCounts,
    hits: Option<&mut Hits>,
) {
    let size = h.size as usize;
    counts.records += 1;
    if let Some(hits) = hits {
        hits.record(region, at, h);
    }
    match h.type_ {
        RecordType::SAMPLE => {
            counts.samples += 1;
            if size >= SAMPLE_TIME_FIELD + 8 {
                let t = u64::from_le_bytes(region.read8(at + SAMPLE_TIME_FIELD));
                counts.times.note(t);
            }
        }
        RecordType::LOST if size >= LOST_FIELD + 8 => {
            let lost = u64::from_le_bytes(region.read8(at + LOST_FIELD));
            counts.lost_records += 1;
            counts.lost_events += lost;
            counts.max_lost = counts.max_lost.max(lost);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(t: u32, size: u16, fill: u64) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&t.to_le_bytes());
        r.extend_from_slice(&0u16.to_le_bytes());
        r.extend_from_slice(&size.to_le_bytes());
        while r.len() < size as usize {
            r.extend_from_slice(&fill.to_le_bytes());
        }
        r
    }

    #[test]
    fn counts_across_the_wrap() {
        let data = [rec(9, 32, 1), rec(2, 32, 5), rec(9, 16, 0)].concat();
        for cut in 0..=data.len() {
            let mut c = RecordCounts::default();
            scan(Input::two(&data[..cut], &data[cut..]), &mut c);
            assert_eq!(
                c,
                RecordCounts {
                    records: 3,
                    samples: 2,
                    lost_records: 1,
                    lost_events: 5,
                    max_lost: 5,
                    // The first sample's body (1s) reaches its time field.
                    times: SampleTimes { first: 1, last: 1 },
                },
                "cut {cut}"
            );
        }
    }

    #[test]
    fn hits_keep_sample_pages_and_map_records_across_the_wrap() {
        // A sample: header, ip 0x5000, pid 7 / tid 7; an MMAP2 of 24 bytes.
        let mut sample = rec(9, 24, 0);
        sample[8..16].copy_from_slice(&0x5123u64.to_le_bytes());
        sample[16..20].copy_from_slice(&7u32.to_le_bytes());
        let mmap = rec(10, 24, 0xabcdef);
        let data = [sample, mmap.clone()].concat();
        for cut in 0..=data.len() {
            let mut h = Hits::default();
            scan_hits(
                Input::two(&data[..cut], &data[cut..]),
                &mut RecordCounts::default(),
                Some(&mut h),
            );
            assert!(h.pages.contains(&(7, 5)), "cut {cut}");
            assert_eq!(h.maps, mmap, "cut {cut}");
        }
    }

    #[test]
    fn hits_stay_bounded() {
        let mut h = Hits::default();
        let mmap = rec(10, 64, 0x1234);
        for i in 0..(MAX_MAP_BYTES / 64 * 2) {
            h.record(
                Input::one(&mmap),
                0,
                &RecordHeader::from_le(mmap[..8].try_into().unwrap()),
            );
            if i % 100_000 == 0 {
                assert!(h.maps.len() <= MAX_MAP_BYTES);
            }
        }
        assert!(h.maps.len() <= MAX_MAP_BYTES && h.maps.len() >= MAX_MAP_BYTES / 2);
        assert_eq!(h.maps.len() % 64, 0, "whole records only");
        let mut s = rec(9, 24, 0);
        for i in 0..(MAX_PAGES as u64 + 10) {
            s[8..16].copy_from_slice(&(i << 12).to_le_bytes());
            h.record(
                Input::one(&s),
                0,
                &RecordHeader::from_le(s[..8].try_into().unwrap()),
            );
        }
        assert_eq!(h.pages.len(), MAX_PAGES);
    }

    #[test]
    fn garbage_stops_the_scan() {
        let mut c = RecordCounts::default();
        scan(Input::one(&[0u8; 64]), &mut c);
        assert_eq!(c.records, 0);
    }
}
