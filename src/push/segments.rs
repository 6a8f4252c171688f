//! The flight recorder's memory (`--flight-recorder SIZE`), an
//! [`Output`](super::output::Output) like a file: records go into memory
//! segments. Each segment starts a new codec frame
//! (the push that closes a segment ends its frame), so the oldest segment
//! can be dropped while the rest still decodes with one decoder; segments
//! are dropped oldest first once they hold more than SIZE bytes. A snapshot
//! is the retained segments in order.
//!
//! The drain closes them: once the open segment is full, the push of a
//! region's last piece ends the codec's frame (`Codec::end_frame_at_flush`)
//! and then the segment closes. One decoder reads the segments in order
//! (zstd decoders take concatenated frames). The codec never holds bytes
//! across pushes here (`CodecUnit::new`): a segment is whole as
//! retained.
//!
//! Memory: SIZE, plus the open segment (SIZE/16, at least 16 KiB, plus one
//! push's output), plus one record buffer; the session adds the map history
//! for snapshots' side band and build ids, bounded by `scan::MAX_MAP_BYTES`
//! (16 MiB) and `scan::MAX_PAGES` pages.

use std::collections::VecDeque;

/// Keeps pushed records in memory segments, dropping the oldest once the
/// closed ones hold more than `cap` bytes.
pub struct Segments {
    cap: u64,
    segment_target: usize,
    segments: VecDeque<Vec<u8>>,
    /// Bytes in `segments`.
    retained: u64,
    cur: Vec<u8>,
    /// Segments and bytes dropped to stay within `cap`.
    pub(crate) dropped_segments: u64,
    /// Bytes in the dropped segments.
    pub(crate) dropped_bytes: u64,
    /// Bytes ever pushed in.
    written: u64,
}

impl Segments {
    /// Retains about `cap` bytes, in segments of `cap`/16 (at least 16 KiB).
    pub fn new(cap: u64) -> Self {
        let segment_target = ((cap / 16) as usize).clamp(16 << 10, cap.max(16 << 10) as usize);
        Segments {
            cap,
            segment_target,
            segments: VecDeque::new(),
            retained: 0,
            cur: Vec::with_capacity(segment_target),
            dropped_segments: 0,
            dropped_bytes: 0,
            written: 0,
        }
    }

    /// Whether the open segment is full: the next push should end the
    /// codec's frame and then [`close_segment`](Self::close_segment).
    pub fn segment_due(&self) -> bool {
        self.cur.len() >= self.segment_target
    }

    /// Closes the open segment and drops the oldest beyond the cap.
    pub fn close_segment(&mut self) {
        if self.cur.is_empty() {
            return;
        }
        let seg = std::mem::replace(&mut self.cur, Vec::with_capacity(self.segment_target));
        self.retained += seg.len() as u64;
        self.segments.push_back(seg);
        while self.retained > self.cap && self.segments.len() > 1 {
            let old = self.segments.pop_front().expect("non-empty");
            self.retained -= old.len() as u64;
            self.dropped_segments += 1;
            self.dropped_bytes += old.len() as u64;
        }
    }

    /// The retained records, oldest first (closed segments, then the open one).
    pub fn snapshot(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.retained as usize + self.cur.len());
        for s in &self.segments {
            out.extend_from_slice(s);
        }
        out.extend_from_slice(&self.cur);
        out
    }

    /// Bytes held now.
    pub fn held(&self) -> u64 {
        self.retained + self.cur.len() as u64
    }

    /// Appends records to the open segment.
    pub fn append(&mut self, b: &[u8]) {
        self.cur.extend_from_slice(b);
        self.written += b.len() as u64;
    }

    /// Bytes ever appended.
    pub fn written(&self) -> u64 {
        self.written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_segments_go_and_memory_stays_bounded() {
        let mut m = Segments::new(256 << 10);
        let chunk = vec![7u8; 10 << 10];
        for _ in 0..200 {
            m.append(&chunk);
            if m.segment_due() {
                m.close_segment();
            }
            assert!(m.held() <= (256 << 10) + (16 << 10) + (10 << 10));
        }
        assert!(m.dropped_segments > 0);
        assert_eq!(m.written(), 200 * (10 << 10));
        assert_eq!(m.snapshot().len() as u64, m.held());
    }
}
