//! The record cutter of output-driven codecs (zstd streaming): the codec's
//! output fills a record window the compressor keeps, and records are cut
//! wherever it is full — by output, as perf does (format notes 5.7b).
//!
//! perf 6.1's rules: every record holds a block end (a record that decodes
//! to nothing is fatal), no record holds two frame ends, none decodes to
//! more than `mmap_len`. The cutter keeps them while letting zstd make
//! blocks as large as a record allows, without capping its block size:
//!
//! - Block ends are the cutter's: it flushes the codec once a block has
//!   taken its *allowance*, the most input whose output (`Codec::bound`)
//!   still ends in this window when the window holds no block end yet, or
//!   in the next one when it does. So a window filled up holds a block end,
//!   and the next one holds the end of the block it continues. (zstd's own
//!   block ends, 128 KiB apart, only add ends.)
//! - Pushes need not end with a flush ([`Compressor::set_hold`]): the window
//!   and zstd's input stay open across pushes, so blocks stay long and a
//!   push costs nothing at its end. Whoever holds flushes
//!   ([`Compressor::flush_into`]) before anything that must follow the held
//!   bytes in the file, and now and then.
//! - A record takes at most [`RECORD_RAW_LIMIT`] raw bytes: with what was
//!   held when it began it decodes within [`DECLARED_MMAP_LEN`].
//! - lz4, which only perfz reads, needs neither rule
//!   (`Codec::BLOCK_ENDS_PER_RECORD`): its records end where they are full,
//!   its blocks where its encoder ends them (1 MiB) or a flush does.
//! - A frame ends only at the last flush of a push (flight-recorder
//!   segments), and the record is sealed right after it.

use perfz_codecs::{Codec, Input, MAX_RECORD_PAYLOAD};

use super::compress::{Compressor, Records, DECLARED_MMAP_LEN, RECORD_MAX};
use super::record::{RecordHeader, RecordType};

const P: usize = MAX_RECORD_PAYLOAD;

/// Input a block may have taken when a record begins: at most its allowance
/// (under two windows).
const HELD_MAX: usize = 2 * P;

/// Raw bytes a record takes before it is flushed and sealed: with the
/// [`HELD_MAX`] bytes a block may have taken before it began, it decodes to
/// at most [`DECLARED_MMAP_LEN`], the room perf's reader makes per record.
pub const RECORD_RAW_LIMIT: usize = DECLARED_MMAP_LEN as usize - HELD_MAX;

/// The record being cut and the block being filled.
pub struct RecordWindow {
    /// Header, then the payload so far (empty for unit codecs).
    buf: Box<[u8]>,
    fill: usize,
    /// The window holds a block end.
    has_end: bool,
    /// Input the current block has taken, and may take before it is flushed.
    block_in: usize,
    allow: usize,
    /// Raw bytes taken since this record began, and what the block had
    /// taken then: together they bound what the record decodes to.
    fed: usize,
    held_before: usize,
    /// Pushes end without a flush.
    pub(super) hold: bool,
    /// The push's last flush ends the frame.
    pub(super) end_frame_due: bool,
}

impl RecordWindow {
    pub fn new<C: Codec>(codec: &C) -> RecordWindow {
        let len = if C::OUTPUT_DRIVEN { RECORD_MAX } else { 0 };
        RecordWindow::with_buf(codec, vec![0u8; len].into_boxed_slice())
    }

    fn with_buf<C: Codec>(codec: &C, buf: Box<[u8]>) -> RecordWindow {
        RecordWindow {
            buf,
            fill: 0,
            has_end: false,
            block_in: 0,
            allow: codec.max_input(P),
            fed: 0,
            held_before: 0,
            hold: false,
            end_frame_due: false,
        }
    }

    /// A new stream (nothing held); the buffer and `hold` stay.
    pub fn reset<C: Codec>(&mut self, codec: &C) {
        let hold = self.hold;
        *self = RecordWindow::with_buf(codec, std::mem::take(&mut self.buf));
        self.hold = hold;
    }
}

impl<C: Codec> Compressor<C> {
    /// Whether pushes end without a flush. Only output-driven codecs hold;
    /// for the others this does nothing.
    pub fn set_hold(&mut self, hold: bool) {
        self.window.hold = hold && C::OUTPUT_DRIVEN;
    }

    /// True when pushed bytes are not in a written record yet: a flush is
    /// needed before anything that must follow them.
    pub fn holds(&self) -> bool {
        self.window.block_in > 0 || self.window.fill > 0
    }

    /// Feeds one piece of a push to the codec; full records go to `out`.
    pub fn feed<R: Records>(&mut self, piece: &[u8], out: &mut R) -> Result<(), R::Error> {
        let mut rest = piece;
        while !rest.is_empty() {
            let w = &self.window;
            // A codec only perfz reads needs neither (see
            // `Codec::BLOCK_ENDS_PER_RECORD`): records end where full.
            let room = if !C::BLOCK_ENDS_PER_RECORD {
                usize::MAX
            } else if w.fed >= RECORD_RAW_LIMIT {
                self.flush_into(out)?;
                continue;
            } else {
                (w.allow - w.block_in).min(RECORD_RAW_LIMIT - w.fed)
            };
            if room == 0 {
                self.end_block(out)?;
                continue;
            }
            let now = &rest[..rest.len().min(room)];
            let w = &mut self.window;
            let step = self.codec.stream(
                Input::one(now),
                &mut w.buf[RecordHeader::SIZE + w.fill..],
                false,
            )?;
            w.fill += step.produced;
            w.block_in += step.consumed;
            w.fed += step.consumed;
            self.raw_bytes += step.consumed as u64;
            out.took(step.consumed);
            rest = &rest[step.consumed..];
            if self.window.fill == P {
                self.seal(out)?;
            } else if step.consumed == 0 && step.produced == 0 {
                return Err(perfz_codecs::Error::NoProgress.into());
            }
        }
        Ok(())
    }

    /// Ends a push: with hold, nothing (the record stays open); else, or
    /// where the frame must end, a flush and the record sealed.
    pub fn end<R: Records>(&mut self, out: &mut R) -> Result<(), R::Error> {
        if self.window.hold && !self.window.end_frame_due {
            return Ok(());
        }
        self.flush_into(out)
    }

    /// Flushes what the codec holds and seals the record: everything pushed
    /// is then in records given to `out`.
    pub fn flush_into<R: Records>(&mut self, out: &mut R) -> Result<(), R::Error> {
        // The frame ends with a block that has input (after a push it has):
        // an empty last block alone in a record would decode to nothing.
        let end_frame = self.window.end_frame_due && self.window.block_in > 0;
        if end_frame {
            self.window.end_frame_due = false;
            self.codec.end_frame_at_flush();
        }
        if self.window.block_in > 0 {
            self.end_block(out)?;
        }
        if self.window.fill > 0 {
            self.seal(out)?;
        }
        // A fresh window with nothing held: its first block must end in it.
        let w = &mut self.window;
        w.fed = 0;
        w.held_before = 0;
        w.allow = self.codec.max_input(P);
        Ok(())
    }

    /// Flushes the current block: its end lands in this window or, when
    /// this one fills, in the next (the allowance saw to it).
    fn end_block<R: Records>(&mut self, out: &mut R) -> Result<(), R::Error> {
        loop {
            let w = &mut self.window;
            let step = self.codec.stream(
                Input::one(&[]),
                &mut w.buf[RecordHeader::SIZE + w.fill..],
                true,
            )?;
            w.fill += step.produced;
            if self.window.fill == P {
                self.seal(out)?;
            }
            if step.done {
                break;
            }
            if step.produced == 0 {
                return Err(perfz_codecs::Error::NoProgress.into());
            }
        }
        let w = &mut self.window;
        // Everything is out: the last byte written ends a block.
        w.has_end = w.fill > 0;
        w.block_in = 0;
        // The next block may end in the next window only if this one holds
        // an end; it starts at `fill`.
        let room = if w.has_end { 2 * P } else { P } - w.fill;
        w.allow = self.codec.max_input(room).max(1);
        Ok(())
    }

    /// Makes the window one COMPRESSED record and hands it to `out`.
    fn seal<R: Records>(&mut self, out: &mut R) -> Result<(), R::Error> {
        let w = &mut self.window;
        let size = RecordHeader::SIZE + w.fill; // fill ≤ MAX_RECORD_PAYLOAD
        let h = RecordHeader {
            type_: RecordType::COMPRESSED,
            misc: 0,
            size: size as u16,
        };
        w.buf[..RecordHeader::SIZE].copy_from_slice(&h.to_le());
        self.out_bytes += size as u64;
        self.records += 1;
        self.max_record_raw = self.max_record_raw.max(w.fed + w.held_before);
        out.emit(&w.buf[..size])?;
        w.fill = 0;
        w.has_end = false;
        w.fed = 0;
        w.held_before = w.block_in.min(C::MAX_HELD);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfz_codecs::{CodecSpec, ZstdCodec};
    use zstd_oracle::stream::raw::{Decoder, InBuffer, Operation, OutBuffer};

    fn bytes(kind: usize, n: usize) -> Vec<u8> {
        let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ kind as u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        match kind {
            // Incompressible (raw blocks).
            0 => (0..n).map(|_| rnd() as u8).collect(),
            // About 4:3: 128 KiB blocks stay compressed blocks larger than
            // a record (the case a window could hold no block end in).
            1 => (0..n).map(|_| rnd() as u8 & 63).collect(),
            // Runs of one byte (tiny blocks).
            2 => vec![0u8; n],
            // Repeats with variation, like perf records.
            _ => (0..n)
                .map(|i| {
                    if rnd() % 16 == 0 {
                        rnd() as u8
                    } else {
                        (i % 251) as u8
                    }
                })
                .collect(),
        }
    }

    /// The records `data` makes in pushes of `push` bytes (each split in two
    /// slices somewhere, as a ring wrap does), flushed after every
    /// `flush_every` pushes and at the end.
    fn records_of<C: Codec>(
        c: &mut Compressor<C>,
        data: &[u8],
        push: usize,
        flush_every: usize,
    ) -> Vec<Vec<u8>> {
        let mut recs: Vec<Vec<u8>> = Vec::new();
        let mut keep = |r: &[u8]| {
            recs.push(r.to_vec());
            Ok::<(), perfz_codecs::Error>(())
        };
        for (i, chunk) in data.chunks(push).enumerate() {
            let k = (i * 7919) % (chunk.len() + 1);
            c.push(Input::two(&chunk[..k], &chunk[k..]), &mut keep)
                .unwrap();
            if i % flush_every == flush_every - 1 {
                c.flush(&mut keep).unwrap();
            }
        }
        c.flush(&mut keep).unwrap();
        recs
    }

    /// Every record holds a block end (decodes to at least one byte, read by
    /// the `zstd` crate's decoder in order), decodes to no more than the
    /// declared mmap_len, and all of them to exactly what was pushed: at
    /// every ratio, with and without holding, pushes small and large.
    #[test]
    fn every_record_decodes_to_one_byte_or_more_and_within_mmap_len() {
        for level in ["zstd:1", "zstd:3", "zstd:-5"] {
            let CodecSpec::Zstd(p) = level.parse::<CodecSpec>().unwrap() else {
                unreachable!()
            };
            for kind in 0..4 {
                let data = bytes(kind, 3 << 20);
                for hold in [false, true] {
                    for push in [1_000usize, 70_000, 300_000, 1 << 20] {
                        let mut c = Compressor::new(ZstdCodec::new(&p).unwrap());
                        c.set_hold(hold);
                        let recs = records_of(&mut c, &data, push, usize::MAX);
                        assert_eq!(c.info().mmap_len, DECLARED_MMAP_LEN);
                        let mut dec = Decoder::new().unwrap();
                        let mut out = vec![0u8; 1 << 20];
                        let mut got = Vec::new();
                        for (j, r) in recs.iter().enumerate() {
                            assert!(r.len() <= RECORD_MAX);
                            let payload = &r[RecordHeader::SIZE..];
                            let mut i = InBuffer::around(payload);
                            let mut n = 0;
                            while i.pos < payload.len() {
                                let mut o = OutBuffer::around(&mut out[..]);
                                dec.run(&mut i, &mut o).unwrap();
                                let k = o.pos();
                                got.extend_from_slice(&out[..k]);
                                n += k;
                            }
                            let what = format!(
                                "{level} kind {kind} hold {hold} push {push}: record {j} of {}",
                                recs.len()
                            );
                            assert!(n >= 1, "{what} decodes to nothing");
                            assert!(n <= DECLARED_MMAP_LEN as usize, "{what} decodes to {n}");
                        }
                        assert!(got == data, "{level} kind {kind} hold {hold} push {push}");
                    }
                }
            }
        }
    }

    /// lz4 (records end where full, blocks where its encoder ends them or a
    /// flush does): every record decodes, through perfz's own lz4 decoder,
    /// to no more than the compressor's count of the most a record took
    /// (`max_record_raw`: what it fed plus what was held when it began),
    /// and that to no more than the bound lz4 files declare, on data from
    /// incompressible to runs of zeros, with flushes now and then as the
    /// drain makes them.
    #[test]
    fn lz4_records_decode_within_the_declared_mmap_len() {
        use perfz_codecs::{Decoder, Lz4Codec, Lz4Decoder};
        for kind in 0..4 {
            let data = bytes(kind, 12 << 20);
            for push in [1_000usize, 70_000, 300_000, 1 << 20] {
                for flush_every in [1usize, 3, 50, usize::MAX] {
                    let mut c = Compressor::new(Lz4Codec::new());
                    c.set_hold(true);
                    let recs = records_of(&mut c, &data, push, flush_every);
                    let declared = c.max_record_raw;
                    assert!(declared <= perfz_codecs::CodecId::LZ4_RECORD_DECODE_MAX as usize);
                    assert_eq!(
                        c.info().mmap_len,
                        perfz_codecs::CodecId::LZ4_RECORD_DECODE_MAX
                    );
                    let mut dec = Lz4Decoder::new();
                    let mut got = Vec::new();
                    for (j, r) in recs.iter().enumerate() {
                        let n = dec
                            .decompress(&r[RecordHeader::SIZE..], &mut got, usize::MAX)
                            .unwrap();
                        assert!(
                            n <= declared,
                            "kind {kind} push {push} flush every {flush_every}: record {j} of {} \
                             decodes to {n}, counted {declared}",
                            recs.len()
                        );
                    }
                    assert!(got == data, "kind {kind} push {push} flush {flush_every}");
                }
            }
        }
    }
}
