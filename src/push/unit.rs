//! The drain unit: [`Unit`], as the session holds it, and its one
//! implementation, [`CodecUnit`], the only part of a recording generic over
//! codec, sink and copy meter. A pass drains every ring once one holds `min`
//! bytes, in pieces of whole records ([`HAND_BACK_PIECE`]), each handed back
//! to the kernel once pushed; a pass that wrote ends with FINISHED_ROUND (not
//! in a `data.N`). The session holds the unit as a [`Unit`] behind a box:
//! one indirect call per pass, never per record.

use std::io;

use perfz_codecs::{Codec, Input};

use crate::event::ring::Rings;
use crate::format::record::RecordHeader;
use crate::format::{CompressedFormat, FeatureSet};
use crate::push::lent::Lent;
pub use crate::push::report::UnitReport;
use crate::push::{HandedBack, Meter, Output, Pusher, Segments, Sink};
use crate::transform::off_cpu::OffCpu;
use crate::transform::sample_filter::SampleFilter;
use crate::transform::scan::{Hits, RecordCounts};
use crate::transform::StackCut;
use crate::transform::{build_id_leak, Edit};
use piece::piece_len;
pub use piece::HAND_BACK_PIECE;

mod piece;

/// A drain unit as the session sees it: one indirect call per pass, never
/// per record. Six methods and one lifecycle call,
/// [`hand_over`](Unit::hand_over): at a switch or the end the unit hands
/// its output back and takes the next one or none. A loan
/// ([`lend`](Unit::lend)) is only for copies (a checkpoint, a snapshot).
/// What is done with an output handed back (its finish) is the session's.
pub trait Unit {
    /// One pass over `rings`: drains each holding at least `min` bytes (1:
    /// every non-empty one), counting records into `n`, and ends the round
    /// with FINISHED_ROUND (where the unit writes rounds). Returns whether
    /// anything moved.
    fn pass(&mut self, rings: &mut Rings, min: u64, n: &mut RecordCounts) -> io::Result<bool>;
    /// Writes records that never were in a ring (side band, LOST_SAMPLES),
    /// after what the codec holds.
    fn write_plain(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Puts what the codec and the sink hold into the output (nothing
    /// held: nothing to do).
    fn flush(&mut self) -> io::Result<()>;
    /// The numbers kept so far, for the summary and the header (cheap: no
    /// allocation).
    fn report(&self) -> UnitReport;
    /// Flushes, waits until every write landed and lends the output, with
    /// what the session needs to copy from it.
    fn lend(&mut self) -> io::Result<Lent<'_>>;
    /// The lifecycle call: the output handed back flushed, every write
    /// landed (see [`Sink::hand_over`]), with what its finish needs (the
    /// hits, HEADER_COMPRESSED, recent write ends, the numbers); the unit
    /// goes on in `next` with its codec restarted (a new stream, so each
    /// output decodes alone), or with `None` ends: what it held back to
    /// order it goes out first, and nothing is written after.
    fn hand_over(&mut self, next: Option<Output>) -> HandedBack;

    /// Bytes of records in the current output: [`report`](Unit::report)'s,
    /// which a unit may know more cheaply (`--max-size` asks every loop).
    fn bytes_written(&self) -> u64 {
        self.report().bytes_written
    }

    /// Makes the output perf-readable as it is now, with `features` (plus
    /// HEADER_COMPRESSED); the bytes it used, `None` where it cannot.
    fn checkpoint(&mut self, features: &FeatureSet) -> io::Result<Option<u64>> {
        self.lend()?.checkpoint(features)
    }

    /// A snapshot: what the unit retains, copied
    /// (`HandedBack::retained`), and the hits gathered since the last
    /// ask; its output stays its own.
    fn copy(&mut self) -> io::Result<HandedBack> {
        let (hits, retained) = {
            let mut lent = self.lend()?;
            (lent.take_hits(), lent.snapshot().unwrap_or_default())
        };
        Ok(HandedBack {
            hits,
            report: self.report(),
            retained,
            ..HandedBack::default()
        })
    }

    /// The unit's end, in every strategy: its output handed back for the
    /// last time, with `failed` (the drain loop's failed write) as the
    /// first error where there was one.
    fn end(&mut self, failed: Option<io::Error>) -> HandedBack {
        let mut handed = self.hand_over(None);
        if let Some(e) = failed {
            handed.error = Some(e);
        }
        handed
    }
}

/// The one implementation: a [`Pusher`] specialised for one codec, sink and
/// meter.
pub struct CodecUnit<C: Codec, S: Sink, M: Meter> {
    pusher: Pusher<C, S, M>,
    /// Where samples keep unwritten stack bytes to clear (dwarf mode).
    stack_cut: Option<StackCut>,
    stack_bytes_cleared: u64,
    stack_samples_uncut: u64,
    stack_use: crate::transform::stack_use::StackUse,
    /// The current region's edits (reused: no allocation once warm).
    edits: Vec<Edit>,
    /// The current piece's MMAP2 headers to unmark ([`build_id_leak`]).
    leaks: Vec<(usize, RecordHeader)>,
    max_fill: f64,
    near_full_pushes: u64,
    /// End each pass that moved data with FINISHED_ROUND.
    rounds: bool,
    /// Sample pages and map records for the build-id pass.
    hits: Option<Hits>,
    /// `--off-cpu`: its records taken out of the stream, its samples made.
    off_cpu: Option<OffCpu>,
    /// `--filter` on non-tracepoint events: failing samples left out.
    sample_filter: Option<SampleFilter>,
    /// The off-CPU samples a pass made, pushed at its end.
    made: Vec<u8>,
    /// The output was handed over for the next: the codec starts a new
    /// stream.
    restart: bool,
}

/// What a drain unit does besides pushing through its codec into its
/// sink, set once by the session (from the recording's options and what
/// the destination needs) and taken by the unit as it is.
#[derive(Clone, Default)]
pub struct UnitSettings {
    /// `--compressed-format`: the record type the codec's bytes go in.
    pub format: CompressedFormat,
    /// Cut unwritten dwarf stack bytes (dwarf call graphs).
    pub stack_cut: Option<StackCut>,
    /// End each pass that moved data with FINISHED_ROUND (not in `data.N`
    /// streams, as perf).
    pub rounds: bool,
    /// Gather what the build-id pass needs while draining.
    pub hits: bool,
    /// `--off-cpu`: its records taken out of the stream, its samples made.
    pub off_cpu: Option<OffCpu>,
    /// `--filter` on non-tracepoint events: failing samples left out.
    pub sample_filter: Option<SampleFilter>,
}

impl<C: Codec, S: Sink, M: Meter> CodecUnit<C, S, M> {
    /// A unit pushing through `codec` into `sink`, doing what `settings`
    /// say.
    pub fn new(codec: C, sink: S, settings: UnitSettings) -> Self {
        // The flight recorder's segments are each whole when retained (a
        // snapshot takes them as they are): its codec never holds.
        let holds = sink.output().and_then(Output::segments).is_none();
        let mut pusher = Pusher::with_format(codec, sink, settings.format);
        pusher.set_hold(holds);
        CodecUnit {
            pusher,
            stack_cut: settings.stack_cut,
            stack_bytes_cleared: 0,
            stack_samples_uncut: 0,
            stack_use: Default::default(),
            edits: Vec::new(),
            leaks: Vec::new(),
            max_fill: 0.0,
            near_full_pushes: 0,
            rounds: settings.rounds,
            hits: settings.hits.then(Hits::default),
            off_cpu: settings.off_cpu,
            sample_filter: settings.sample_filter,
            made: Vec::new(),
            restart: false,
        }
    }

    /// The flight recorder's memory, where the sink writes it.
    fn segments(&self) -> Option<&Segments> {
        self.pusher.sink().output().and_then(Output::segments)
    }

    /// Pushes one piece of a ring region (whole records, counted as
    /// [`piece_len`] cut it); `last`: the region's last piece.
    fn push_part(&mut self, region: Input<'_>, last: bool) -> io::Result<()> {
        self.edits.clear();
        if let Some(t) = &self.stack_cut {
            let w = t.edits(region, &mut self.edits);
            self.stack_bytes_cleared += w.dropped;
            self.stack_samples_uncut += w.uncut;
            self.stack_use.merge(&w.used);
        }
        if let Some(o) = &mut self.off_cpu {
            o.take(region, &mut self.edits);
        }
        build_id_leak::add(&self.leaks, &mut self.edits);
        // Last: a sample left out takes the other transforms' edits in it.
        if let Some(f) = &mut self.sample_filter {
            f.edits(region, &mut self.edits);
        }
        // A flight-recorder segment closes after a push that ends the
        // codec's frame, so the next segment decodes on its own.
        let close = last && (self.segments()).is_some_and(Segments::segment_due);
        if close {
            self.pusher.end_frame_at_flush();
        }
        self.pusher.push_edited(region, &self.edits)?;
        if close {
            if let Some(m) = self
                .pusher
                .sink_mut()
                .lend()?
                .and_then(Output::segments_mut)
            {
                m.close_segment();
            }
        }
        Ok(())
    }

    /// After a hand-over (see [`Unit::hand_over`]): the codec starts a new
    /// stream before anything goes into the next output.
    fn take_up(&mut self) -> io::Result<()> {
        if std::mem::take(&mut self.restart) {
            self.pusher.restart_codec()?;
        }
        Ok(())
    }

    /// `--off-cpu`: the waits that ended (at the `end`: every wait), into
    /// the stream (and the codec).
    fn settle_off_cpu(&mut self, end: bool) -> io::Result<()> {
        if let Some(o) = &mut self.off_cpu {
            self.made.clear();
            o.settle(&mut self.made, end);
            if !self.made.is_empty() {
                self.pusher.push_edited(Input::one(&self.made), &[])?;
            }
        }
        Ok(())
    }
}

impl<C: Codec, S: Sink, M: Meter> Unit for CodecUnit<C, S, M> {
    fn pass(&mut self, rings: &mut Rings, min: u64, n: &mut RecordCounts) -> io::Result<bool> {
        self.take_up()?;
        // A pass drains every ring once one holds `min`: a round (and its
        // FINISHED_ROUND) covers every ring, or perf would sort a quiet
        // ring's old records (an exec's COMM and MMAPs, on the CPU the
        // command left) after samples it has already passed on.
        // Acquire load of data_head (Ring::head): every byte below it is
        // visible before we read it.
        if !rings
            .iter_mut()
            .any(|(_, r)| r.head().wrapping_sub(r.tail()) >= min.max(1))
        {
            return Ok(false);
        }
        let mut moved = false;
        for (_, ring) in rings.iter_mut() {
            // Acquire load of data_head, as above.
            let head = ring.head();
            let pending = head.wrapping_sub(ring.tail());
            if pending == 0 {
                continue;
            }
            let size = ring.data_size() as u64;
            self.max_fill = self.max_fill.max(pending as f64 / size as f64);
            self.near_full_pushes += (pending >= size - size / 8) as u64;
            // The region goes in pieces of whole records, each handed back
            // to the kernel as soon as it is pushed: the space frees while
            // the rest is still being compressed, not after the whole pass.
            loop {
                let region = ring.region(head);
                let hits = self.hits.as_mut();
                let piece = piece_len(region, HAND_BACK_PIECE, n, hits, &mut self.leaks);
                let (part, _) = region.split_at(piece);
                let last = piece == region.len();
                self.push_part(part, last)?;
                // Release store of data_tail (Ring::consume): our reads of
                // the part happen before the kernel may reuse its space.
                let tail = ring.tail().wrapping_add(piece as u64);
                ring.consume(tail);
                if last {
                    break;
                }
            }
            moved = true;
        }
        self.settle_off_cpu(false)?;
        if moved && self.rounds {
            self.pusher.end_round()?;
        }
        Ok(moved)
    }

    fn write_plain(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.take_up()?;
        self.pusher.write_plain(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.pusher.holds() {
            self.pusher.flush()?;
        }
        Ok(())
    }

    fn report(&self) -> UnitReport {
        let sink = self.pusher.sink();
        UnitReport {
            ring_bytes: self.pusher.ring_bytes(),
            compressed_bytes: self.pusher.compressed_bytes(),
            compressed: self.pusher.compressed_info(),
            bytes_written: sink.bytes_written(),
            checkpoint_end: sink.output().and_then(Output::checkpoint_end),
            copies: self.pusher.meter.copies(),
            codec_copies_input: C::COPIES_INPUT,
            codec_state_bytes: self.pusher.codec_state_size(),
            writes: sink.describe(),
            stack_bytes_cleared: self.stack_bytes_cleared,
            stack_samples_uncut: self.stack_samples_uncut,
            max_fill: self.max_fill,
            near_full_pushes: self.near_full_pushes,
            stack_use: self.stack_use,
            off_cpu: self.off_cpu.as_ref().map(OffCpu::counts),
            samples_filtered: self.sample_filter.as_ref().map(SampleFilter::dropped),
        }
    }

    fn bytes_written(&self) -> u64 {
        self.pusher.sink().bytes_written()
    }

    fn lend(&mut self) -> io::Result<Lent<'_>> {
        self.take_up()?;
        self.pusher.flush()?;
        let compressed = self.pusher.compressed_info();
        let output = self.pusher.sink_mut().lend()?;
        Ok(Lent {
            output,
            compressed,
            hits: self.hits.as_mut(),
        })
    }

    fn hand_over(&mut self, next: Option<Output>) -> HandedBack {
        // After a failed write, held bytes go in if the output takes them
        // (the serial sink writes records whole or not at all); if not,
        // the file ends at its last whole record.
        let mut flushed = self.take_up();
        if next.is_none() && flushed.is_ok() {
            flushed = self.settle_off_cpu(true);
        }
        let flushed = flushed.and_then(|()| self.pusher.flush());
        let compressed = self.pusher.compressed_info();
        let report = self.report();
        let restart = next.is_some();
        let mut r = self.pusher.sink_mut().hand_over(next);
        if let Err(e) = flushed {
            r.error.get_or_insert(e);
        }
        self.restart = restart;
        r.compressed = compressed;
        r.hits = self.hits.as_mut().map(std::mem::take);
        r.report = report;
        r
    }
}

#[cfg(test)]
mod tests;
