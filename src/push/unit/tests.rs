//! The drain hands ring space back piece by piece.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

use perfz_codecs::{Input, NoneCodec};

use super::{piece_len, CodecUnit, Unit, HAND_BACK_PIECE};
use crate::event::ring::Ring;
use crate::push::{HandedBack, NoMeter, Output, Sink};
use crate::transform::scan::RecordCounts;
use crate::transform::{for_each_slice, Edit};

/// A sink of raw ring bytes that notes, at each write, how far the ring's
/// data_tail had been handed back to the kernel.
struct TailWatch {
    tail: *const AtomicU64,
    out: Vec<u8>,
    tails_at_writes: Vec<u64>,
}

impl TailWatch {
    fn of(ring: &Ring) -> TailWatch {
        TailWatch {
            tail: ring.kernel_tail(),
            out: Vec::new(),
            tails_at_writes: Vec::new(),
        }
    }

    fn note(&mut self) {
        // SAFETY: the pointer is into the control page of a ring the test
        // keeps mapped for as long as this sink lives.
        self.tails_at_writes
            .push(unsafe { &*self.tail }.load(Ordering::Acquire));
    }
}

impl Sink for TailWatch {
    fn write_raw(&mut self, region: Input<'_>) -> io::Result<usize> {
        self.note();
        region.parts().for_each(|p| self.out.extend_from_slice(p));
        Ok(0)
    }
    fn write_raw_edited(&mut self, region: Input<'_>, e: &[Edit]) -> io::Result<(usize, usize)> {
        self.note();
        let n = self.out.len();
        for_each_slice(region, e, |p| {
            self.out.extend_from_slice(p);
            Ok::<(), io::Error>(())
        })?;
        Ok((0, self.out.len() - n))
    }
    fn record_buf(&mut self) -> io::Result<&mut [u8]> {
        Err(io::Error::other("raw records only"))
    }
    fn commit(&mut self, _: usize) -> io::Result<()> {
        Err(io::Error::other("raw records only"))
    }
    fn write_plain(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.extend_from_slice(bytes);
        Ok(())
    }
    fn bytes_written(&self) -> u64 {
        self.out.len() as u64
    }
    // It writes nowhere: no output to lend or hand back.
    fn output(&self) -> Option<&Output> {
        None
    }
    fn lend(&mut self) -> io::Result<Option<&mut Output>> {
        Ok(None)
    }
    fn hand_over(&mut self, _: Option<Output>) -> HandedBack {
        HandedBack::default()
    }
}

/// `n` records of `size` bytes (a COMM record's type, bytes numbered from
/// `seed` so every record differs).
fn records(n: usize, size: usize, seed: u8) -> Vec<u8> {
    let mut v = Vec::new();
    for k in 0..n {
        let mut r: Vec<u8> = (0..size).map(|i| (i as u8) ^ seed ^ (k as u8)).collect();
        r[..4].copy_from_slice(&3u32.to_le_bytes());
        r[4..6].copy_from_slice(&0u16.to_le_bytes());
        r[6..8].copy_from_slice(&(size as u16).to_le_bytes());
        v.extend_from_slice(&r);
    }
    v
}

#[test]
fn a_pass_hands_each_piece_back_before_it_pushes_the_next() {
    let mut rings = vec![(0u32, Ring::anonymous(64))];
    let watch = TailWatch::of(&rings[0].1);
    let mut d =
        CodecUnit::<NoneCodec, TailWatch, NoMeter>::new(NoneCodec, watch, Default::default());
    let mut n = RecordCounts::default();
    // 10 records of 20 000 bytes: pieces end at the first record end past
    // 64 KiB, so 4 + 4 + 2 records.
    let first = records(10, 20_000, 1);
    rings[0].1.publish(&first);
    assert!(d.pass(&mut rings, 1, &mut n).unwrap());
    assert_eq!(d.pusher.sink().tails_at_writes, [0, 80_000, 160_000]);
    assert_eq!(rings[0].1.kernel_tail().load(Ordering::Acquire), 200_000);
    // Again across the end of the 256 KiB data area (the region wraps):
    // 3 + 3 records.
    let second = records(6, 30_000, 2);
    rings[0].1.publish(&second);
    assert!(d.pass(&mut rings, 1, &mut n).unwrap());
    assert_eq!(d.pusher.sink().tails_at_writes[3..], [200_000, 290_000]);
    assert_eq!(rings[0].1.kernel_tail().load(Ordering::Acquire), 380_000);
    assert_eq!(d.pusher.sink().out, [first, second].concat());
    assert!(!d.pass(&mut rings, 1, &mut n).unwrap());
}

/// [`piece_len`]'s piece of `region`; the records it counted are
/// the piece's.
fn piece_of(region: Input<'_>, at_least: usize) -> usize {
    let mut n = RecordCounts::default();
    let piece = piece_len(region, at_least, &mut n, None, &mut Vec::new());
    let mut whole = RecordCounts::default();
    crate::transform::scan::scan(region.split_at(piece).0, &mut whole);
    assert_eq!((n.records, n.samples), (whole.records, whole.samples));
    piece
}

#[test]
fn the_pieces_end_at_record_ends() {
    let r = records(5, 30_000, 3);
    let region = Input::one(&r);
    assert_eq!(piece_of(region, HAND_BACK_PIECE), 90_000);
    assert_eq!(piece_of(region, 60_000), 60_000);
    assert_eq!(piece_of(region, 60_001), 90_000);
    // A region no larger than a unit goes whole; unit 0: always whole.
    assert_eq!(piece_of(region, 150_000), 150_000);
    assert_eq!(piece_of(region, 0), 150_000);
    // Split anywhere between the ring's two slices.
    let (a, b) = r.split_at(31_000);
    assert_eq!(piece_of(Input::two(a, b), HAND_BACK_PIECE), 90_000);
}

#[test]
fn a_record_header_that_does_not_fit_ends_the_walk_whole() {
    let mut r = records(5, 30_000, 4);
    // A size of 0 at the second record: the rest goes as one piece.
    r[30_006..30_008].copy_from_slice(&0u16.to_le_bytes());
    assert_eq!(piece_of(Input::one(&r), 40_000), r.len());
    // A size past the region's end.
    let mut r = records(3, 30_000, 5);
    r[30_006..30_008].copy_from_slice(&60_000u16.to_le_bytes());
    assert_eq!(piece_of(Input::one(&r), 40_000), r.len());
    // A region ending inside a header.
    let r = records(3, 30_000, 6);
    assert_eq!(piece_of(Input::one(&r[..30_004]), 30_001), 30_004);
}
