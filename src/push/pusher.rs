//! `Pusher<C, S, M>`: one push is one piece of a ring region (whole
//! records, see `HAND_BACK_PIECE` in `unit.rs`) and its edits, or the
//! off-CPU samples a pass made, compressed straight from the ring into the
//! sink's buffer (the compressing memcpy). Monomorphized per codec, sink and
//! meter: `CodecSpec::visit` picks them once, in `session/unit_build.rs`.
//!
//! Three paths, chosen by the codec's constants at compile time:
//!
//! - `none`: `Sink::write_raw_edited`. The serial sink `writev`s the ring's
//!   slices and the edits' replacement words (no copy); the async sink
//!   copies the kept bytes into its buffer once.
//! - Output-driven codecs (`Codec::OUTPUT_DRIVEN`: streaming zstd, lz4):
//!   `Compressor::feed` for each slice of the edited piece
//!   (`for_each_slice`), then `Compressor::end`; the one record cutter
//!   (`cutter.rs`) cuts records by output, and may hold bytes across pushes.
//! - The others (snappy, zstd oneshot): `Compressor::push_into`, one
//!   `Compressor::record_into` per at most `max_input` bytes, straight into
//!   `Sink::record_buf`. They compress whole slices, so an edited piece is
//!   first gathered into a staging buffer: one copy of the kept bytes (10–20
//!   % of a dwarf stream), cheaper than compressing the padding.
//!
//! FINISHED_ROUND goes into the compressed stream while the codec holds
//! bytes (it must follow its round's records), plain otherwise, as perf
//! writes it (`Pusher::end_round`).

use std::io;

use perfz_codecs::{Codec, CodecId, Input};

use super::meter::{Meter, NoMeter};
use super::Sink;
use crate::format::record::RecordType;
use crate::format::writer::empty_record;
use crate::format::{CompressedFormat, CompressedInfo};
use crate::push::compressor::Compressor;
use crate::push::records::Records;
use crate::transform::{for_each_slice, Edit};

/// Pushes ring regions through codec `C` into sink `S`, metered by `M`.
pub struct Pusher<C: Codec, S: Sink, M: Meter = NoMeter> {
    comp: Compressor<C>,
    sink: S,
    /// The kept bytes of an edited region, for codecs that cut by input
    /// (grows to the largest region once, then never allocates).
    staging: Vec<u8>,
    /// The copy meter (counts nothing with [`NoMeter`]).
    pub meter: M,
    /// Bytes read out of rings so far.
    ring_bytes: u64,
}

impl<C: Codec, S: Sink, M: Meter> Pusher<C, S, M> {
    /// A pusher compressing with `codec` into `sink` (COMPRESSED records),
    /// nothing pushed yet.
    pub fn new(codec: C, sink: S) -> Self {
        Self::with_format(codec, sink, CompressedFormat::default())
    }

    /// A pusher compressing with `codec` into `sink`, in records of
    /// `format` (the record type, chosen once).
    pub fn with_format(codec: C, sink: S, format: CompressedFormat) -> Self {
        Pusher {
            comp: Compressor::with_format(codec, format),
            sink,
            staging: Vec::new(),
            meter: M::default(),
            ring_bytes: 0,
        }
    }

    /// True when the codec is `none`: raw records, no COMPRESSED records.
    pub const RAW: bool = C::ID.0 == CodecId::NONE.0;

    /// Pushes one ring region. When this returns, the region's bytes are out of
    /// the ring (compressed into the sink's buffer, or written or copied raw),
    /// so the caller may hand the space back to the kernel.
    pub fn push(&mut self, region: Input<'_>) -> io::Result<()> {
        self.push_edited(region, &[])
    }

    /// [`push`](Self::push) of the region as `edits` make it (dwarf samples
    /// cut to their written stack, see `stack_cut`). `none` and
    /// output-driven codecs read the edited region in place; codecs that cut
    /// chunks by input (snappy, zstd oneshot) compress whole slices, so
    /// the kept bytes are first gathered into a staging buffer — one copy of
    /// what is kept (10–20 % of a dwarf stream), counted by the meter —
    /// instead of compressing the padding.
    pub fn push_edited(&mut self, region: Input<'_>, edits: &[Edit]) -> io::Result<()> {
        if region.is_empty() {
            return Ok(());
        }
        self.ring_bytes += region.len() as u64;
        self.meter.ring(region.len());
        if Self::RAW {
            let (copied, written) = if edits.is_empty() {
                (self.sink.write_raw(region)?, region.len())
            } else {
                self.sink.write_raw_edited(region, edits)?
            };
            self.meter.copied(copied);
            self.meter.written(written);
        } else if C::OUTPUT_DRIVEN {
            self.push_output_driven(region, edits)?;
        } else {
            let mut rest = region;
            if !edits.is_empty() {
                self.staging.clear();
                for_each_slice(region, edits, |p| {
                    self.staging.extend_from_slice(p);
                    Ok::<(), ()>(())
                })
                .expect("infallible");
                self.meter.copied(self.staging.len());
                rest = Input::one(&self.staging);
            }
            let mut out = SinkRecords {
                sink: &mut self.sink,
                meter: &mut self.meter,
            };
            self.comp.push_into(rest, &mut out)?;
        }
        self.sink.end_push()
    }

    /// Records cut by output: the codec reads the push piece by piece (ring
    /// slices and edits) and fills records in the sink's buffer
    /// ([`Compressor::feed`], the one record cutter).
    fn push_output_driven(&mut self, region: Input<'_>, edits: &[Edit]) -> io::Result<()> {
        let (comp, sink, meter) = (&mut self.comp, &mut self.sink, &mut self.meter);
        let mut out = SinkRecords { sink, meter };
        for_each_slice(region, edits, |piece| comp.feed(piece, &mut out))?;
        comp.end(&mut out)
    }

    /// Writes records that never were in a ring. What the codec holds is
    /// flushed first: the file keeps the order things were pushed in.
    pub fn write_plain(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.flush_codec()?;
        self.meter.written(bytes.len());
        self.sink.write_plain(bytes)
    }

    /// Pushes end without a flush (zstd streaming; see
    /// `push::compressor`): full blocks, the codec's own speed and ratio.
    /// The caller then flushes now and then and before whatever must find
    /// the bytes in the file.
    pub fn set_hold(&mut self, hold: bool) {
        self.comp.set_hold(hold)
    }

    /// Whether the codec holds pushed bytes that are not in the sink yet,
    /// or the sink records not handed to the output (an async sink's partly
    /// filled buffer).
    pub fn holds(&self) -> bool {
        self.comp.holds() || self.sink.holds()
    }

    /// Flushes what the codec holds into records in the sink, and what the
    /// sink holds into the output.
    pub fn flush(&mut self) -> io::Result<()> {
        self.flush_codec()?;
        self.sink.flush()
    }

    /// Flushes what the codec holds into records in the sink (whose order
    /// in the output is then the push order, whatever the sink holds).
    fn flush_codec(&mut self) -> io::Result<()> {
        if !self.comp.holds() {
            return Ok(());
        }
        let mut out = SinkRecords {
            sink: &mut self.sink,
            meter: &mut self.meter,
        };
        self.comp.flush_into(&mut out)?;
        self.sink.end_push()
    }

    /// Ends a round with FINISHED_ROUND: in the compressed stream while the
    /// codec holds bytes (so it follows them, as the round's records must
    /// for perf's ordering), else plain, as perf writes it.
    pub fn end_round(&mut self) -> io::Result<()> {
        let round = empty_record(RecordType::FINISHED_ROUND);
        if !self.comp.holds() {
            self.meter.written(round.len());
            return self.sink.write_plain(&round);
        }
        let (comp, sink, meter) = (&mut self.comp, &mut self.sink, &mut self.meter);
        let mut out = SinkRecords { sink, meter };
        comp.feed(&round, &mut out)?;
        comp.end(&mut out)?;
        self.sink.end_push()
    }

    /// The sink underneath.
    pub fn sink(&self) -> &S {
        &self.sink
    }

    /// The next push ends the codec's frame (a flight-recorder segment).
    pub fn end_frame_at_flush(&mut self) {
        self.comp.end_frame_at_flush()
    }

    /// The codec starts a new stream (a new output file).
    pub fn restart_codec(&mut self) -> io::Result<()> {
        self.comp.restart().map_err(io::Error::other)
    }

    /// The sink underneath, for its lifecycle (checkpoints, segments, switches).
    pub fn sink_mut(&mut self) -> &mut S {
        &mut self.sink
    }

    /// HEADER_COMPRESSED for this session, or `None` for raw output.
    pub fn compressed_info(&self) -> Option<CompressedInfo> {
        (!Self::RAW).then(|| self.comp.info())
    }

    /// Bytes read out of rings so far.
    pub fn ring_bytes(&self) -> u64 {
        self.ring_bytes
    }

    /// Bytes of COMPRESSED records written (headers included).
    pub fn compressed_bytes(&self) -> u64 {
        self.comp.tally.out_bytes
    }

    /// COMPRESSED records written.
    pub fn compressed_records(&self) -> u64 {
        self.comp.tally.records
    }

    /// Bytes the codec's state holds.
    pub fn codec_state_size(&self) -> usize {
        self.comp.codec().state_size()
    }

    /// The sink, to finish or salvage; flush first, or what the codec holds is lost.
    pub fn into_sink(self) -> S {
        self.sink
    }
}

/// The sink's record buffer as the cutter's, metered.
struct SinkRecords<'a, S, M> {
    sink: &'a mut S,
    meter: &'a mut M,
}

impl<S: Sink, M: Meter> Records for SinkRecords<'_, S, M> {
    type Error = io::Error;
    fn buf(&mut self) -> io::Result<&mut [u8]> {
        self.sink.record_buf()
    }
    fn commit(&mut self, n: usize) -> io::Result<()> {
        self.sink.commit(n)?;
        self.meter.written(n);
        Ok(())
    }
    fn emit(&mut self, rec: &[u8]) -> io::Result<()> {
        let copied = self.sink.write_record(rec)?;
        self.meter.copied(copied);
        self.meter.written(rec.len());
        Ok(())
    }
    fn took(&mut self, n: usize) {
        self.meter.codec_in(n);
    }
}
