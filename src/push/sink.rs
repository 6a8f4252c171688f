//! What the pusher writes into: the [`Sink`] trait, and the serial sink.
//!
//! A sink needs six methods (a region as its edits make it, a record
//! buffer and its commit, its output, a loan of it, its hand-over); the
//! rest have defaults. It only writes: what
//! becomes of the [`Output`] (a checkpoint, a switch, the finish) is the
//! session's, on the output the sink lends settled (a copy: a checkpoint,
//! a snapshot) or hands back ([`HandedBack`]: the output, recent write
//! ends, the first error) at a switch or the end.
//!
//! [`SerialSink`] writes synchronously: with `none` one `writev` of the
//! ring's own slices and the edits' replacement words (no copy by our
//! code), else one write per record. A region or record is written whole
//! or counted as not written, so after a failed write the sink knows which
//! records are in the file. The salvage keeps them: where the features do
//! not fit after them (a file size limit, a full disk), the data is cut
//! back to one of the last 16 write ends (`RecentEnds`) that leaves room,
//! or, where none does, only the features reading needs are written
//! (`Output::finish_cutting_back`, via [`HandedBack::salvage`]).

use std::io;

use perfz_codecs::Input;

pub use super::handed::HandedBack;
use super::output::Output;
use crate::push::records::RECORD_MAX;
use crate::transform::{for_each_slice, Edit};

/// What the pusher writes into. A sink only writes; six methods are what
/// every sink says: a region as its edits make it, a compressed record
/// built in the sink's own buffer, and its output: which it is, lent
/// settled when asked ([`lend`](Sink::lend)), handed back at a switch or
/// the end ([`hand_over`](Sink::hand_over)); a sink that writes nowhere
/// says so in its own body. The rest have defaults. What the output then
/// does (a checkpoint, a finish) is the output's and its owner's business.
pub trait Sink {
    /// Raw ring bytes as `edits` make them (see `stack_cut`; none: the
    /// region as it is). Returns the bytes it memcpy'd and the bytes written.
    fn write_raw_edited(&mut self, region: Input<'_>, edits: &[Edit])
        -> io::Result<(usize, usize)>;
    /// The buffer the next compressed record is built in (at least
    /// `RECORD_MAX` bytes): the codec writes straight into it, then
    /// [`commit`](Sink::commit) takes its first `n` bytes.
    fn record_buf(&mut self) -> io::Result<&mut [u8]>;
    /// Writes (or queues) the first `n` bytes of [`record_buf`](Sink::record_buf),
    /// a finished record.
    fn commit(&mut self, n: usize) -> io::Result<()>;
    /// The output written to (None: a sink that writes nowhere).
    fn output(&self) -> Option<&Output>;
    /// Every write landed: the output, lent as it stands, for a copy (a
    /// checkpoint, a snapshot; None: a sink that writes nowhere). The sink
    /// takes up the output as it is after the loan at its next write.
    fn lend(&mut self) -> io::Result<Option<&mut Output>>;
    /// The sink's one lifecycle call: the output handed back, every write
    /// landed, or after a failed write cut back to what landed whole (with
    /// the error and the data sizes a finish that does not fit may cut back
    /// to); from here the sink writes to `next` (None: nowhere, the end).
    fn hand_over(&mut self, next: Option<Output>) -> HandedBack;

    /// Raw ring bytes (codec `none`), one or two slices. Returns how many
    /// bytes it memcpy'd to do so (0 when it writes straight from the ring).
    fn write_raw(&mut self, region: Input<'_>) -> io::Result<usize> {
        self.write_raw_edited(region, &[]).map(|(copied, _)| copied)
    }
    /// A whole record built elsewhere (the zstd cutter's window); returns
    /// the bytes it memcpy'd to take it (0 when written from where it is).
    fn write_record(&mut self, rec: &[u8]) -> io::Result<usize> {
        self.record_buf()?[..rec.len()].copy_from_slice(rec);
        self.commit(rec.len())?;
        Ok(rec.len())
    }
    /// Plain records (synthesized metadata, FINISHED_ROUND, LOST_SAMPLES).
    fn write_plain(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.write_raw(Input::one(bytes)).map(drop)
    }
    /// The end of one push: an async sink may submit what it gathered.
    fn end_push(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Whether the sink holds records it has not handed to the output yet
    /// (an async sink's partly filled buffer).
    fn holds(&self) -> bool {
        false
    }
    /// Hands what the sink holds to the output.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Bytes of records written (or queued) so far.
    fn bytes_written(&self) -> u64 {
        self.output().map_or(0, Output::data_size)
    }
    /// How writes are done, for the summary.
    fn describe(&self) -> &'static str {
        match self.output() {
            Some(Output::Memory(_)) => "memory (flight recorder)",
            _ => "serial",
        }
    }
}

/// Slices per `writev` of an edited region (IOV_MAX is 1024).
const WRITEV_BATCH: usize = 64;

/// The serial sink: writes synchronously, one write per record; raw ring bytes
/// go out with one `writev` of the ring's own slices — no copy by our code.
pub struct SerialSink {
    /// The output records are written to.
    pub out: Output,
    buf: Box<[u8]>,
    /// Data sizes after the last writes (record boundaries): where a
    /// salvage may cut back to when the features do not fit after the data.
    pub(crate) ends: RecentEnds,
    /// Lent since the last write (see [`wrote`](Self::wrote)).
    lent: bool,
}

/// The last `RecentEnds::N` data sizes a sink reached.
#[derive(Default)]
pub struct RecentEnds {
    ends: [u64; RecentEnds::N],
    next: usize,
}

impl RecentEnds {
    const N: usize = 16;

    /// Notes `end`, forgetting the oldest once N are kept.
    pub fn push(&mut self, end: u64) {
        self.ends[self.next % Self::N] = end;
        self.next += 1;
    }

    /// The sizes pushed so far (at most N of them), in no order.
    pub fn as_slice(&self) -> &[u64] {
        &self.ends[..self.next.min(Self::N)]
    }
}

impl SerialSink {
    /// A sink writing to `out`, no ends noted yet.
    pub fn new(out: impl Into<Output>) -> Self {
        SerialSink {
            out: out.into(),
            buf: vec![0u8; RECORD_MAX].into_boxed_slice(),
            ends: RecentEnds::default(),
            lent: false,
        }
    }

    /// Notes where the data ends after a write that succeeded. The first
    /// write after a loan starts the ends over: the output may be a new one
    /// (switched), and a lent one was checkpointed, which a salvage never
    /// cuts below.
    fn wrote(&mut self) {
        if std::mem::take(&mut self.lent) {
            self.ends = RecentEnds::default();
        }
        let end = self.out.data_size();
        self.ends.push(end);
    }
}

impl Sink for SerialSink {
    fn write_raw_edited(
        &mut self,
        region: Input<'_>,
        edits: &[Edit],
    ) -> io::Result<(usize, usize)> {
        // Gathered into writev batches: the ring's slices and the edits'
        // replacement words, never copied. Batches end anywhere, so if one
        // fails the earlier ones are taken back: the region is written
        // whole or counted as not written (salvage relies on it).
        let mut batch: [&[u8]; WRITEV_BATCH] = [&[]; WRITEV_BATCH];
        let (mut n, mut queued, mut done) = (0, 0usize, 0usize);
        let out = &mut self.out;
        let r = for_each_slice(region, edits, |slice| {
            if n == WRITEV_BATCH {
                out.write_records_vectored(&batch[..n])?;
                done = queued;
                n = 0;
            }
            batch[n] = slice;
            n += 1;
            queued += slice.len();
            Ok::<(), io::Error>(())
        })
        .and_then(|()| out.write_records_vectored(&batch[..n]));
        if let Err(e) = r {
            out.forget(done as u64);
            return Err(e);
        }
        self.wrote();
        Ok((if self.out.copies() { queued } else { 0 }, queued))
    }

    fn record_buf(&mut self) -> io::Result<&mut [u8]> {
        Ok(&mut self.buf)
    }

    fn commit(&mut self, n: usize) -> io::Result<()> {
        self.out.write_records(&self.buf[..n])?;
        self.wrote();
        Ok(())
    }

    fn write_record(&mut self, rec: &[u8]) -> io::Result<usize> {
        self.out.write_records(rec)?;
        self.wrote();
        Ok(if self.out.copies() { rec.len() } else { 0 })
    }

    fn output(&self) -> Option<&Output> {
        Some(&self.out)
    }

    fn lend(&mut self) -> io::Result<Option<&mut Output>> {
        // Writes are synchronous: every one has landed.
        self.lent = true;
        Ok(Some(&mut self.out))
    }

    fn hand_over(&mut self, next: Option<Output>) -> HandedBack {
        // Records are written whole or counted as not written; the file
        // position of a half-done write does not matter (finish seeks).
        let ends = self.ends.as_slice().to_vec();
        // The next output's ends start over at its first write.
        self.lent = true;
        HandedBack {
            ends,
            output: Some(std::mem::replace(
                &mut self.out,
                next.unwrap_or(Output::Closed),
            )),
            ..HandedBack::default()
        }
    }
}
