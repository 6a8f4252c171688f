//! What the pusher writes into: the [`Sink`] trait, and the serial sink.

use std::io;

use perfz_codecs::Input;

use super::output::Output;
use super::stack_tail::{for_each_piece, Edit};
use crate::format::FeatureSet;
use crate::push::records::RECORD_MAX;

/// What the pusher writes into, and how what it wrote reaches its
/// [`Output`]: the push path's writes (raw slices, record buffers, plain
/// records), then the few things only the sink can do for the output's
/// life, because it may hold writes the output has not seen yet.
pub trait Sink {
    /// Raw ring bytes (codec `none`), one or two slices. Returns how many
    /// bytes it memcpy'd to do so (0 when it writes straight from the ring).
    fn write_raw(&mut self, region: Input<'_>) -> io::Result<usize>;
    /// Raw ring bytes as `edits` make them (see `stack_tail`). Returns the
    /// bytes it memcpy'd and the bytes written.
    fn write_raw_edited(&mut self, region: Input<'_>, edits: &[Edit])
        -> io::Result<(usize, usize)>;
    /// The buffer the next compressed record is built in (at least
    /// [`RECORD_MAX`] bytes): the codec writes straight into it, then
    /// [`commit`](Sink::commit) takes its first `n` bytes.
    fn record_buf(&mut self) -> io::Result<&mut [u8]>;
    /// Writes (or queues) the first `n` bytes of [`record_buf`](Sink::record_buf),
    /// a finished record.
    fn commit(&mut self, n: usize) -> io::Result<()>;
    /// A whole record built elsewhere (the zstd cutter's window); returns
    /// the bytes it memcpy'd to take it (0 when written from where it is).
    fn write_record(&mut self, rec: &[u8]) -> io::Result<usize> {
        self.record_buf()?[..rec.len()].copy_from_slice(rec);
        self.commit(rec.len())?;
        Ok(rec.len())
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
    /// Plain records (synthesized metadata, FINISHED_ROUND, LOST_SAMPLES).
    fn write_plain(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Bytes of records written (or queued) so far.
    fn bytes_written(&self) -> u64;
    /// How writes are done, for the summary.
    fn describe(&self) -> String;
    /// The output written to.
    fn output(&self) -> &Output;
    /// The output, for the flight recorder's segments.
    fn output_mut(&mut self) -> &mut Output;
    /// Makes what was written so far perf-readable (see
    /// `FileWriter::checkpoint`) once every write has landed; the bytes it
    /// used, `None` where the output cannot.
    fn checkpoint(&mut self, features: &FeatureSet) -> io::Result<Option<u64>>;
    /// `--switch-output`: once every write has landed, goes on in `next`
    /// and hands back the output written so far, to be finished.
    fn switch_to(&mut self, next: Output) -> io::Result<Output>;
    /// Every write landed: the output, to finish.
    fn into_output(self) -> io::Result<Output>;
    /// After a failed write: the output cut back to what landed whole, and
    /// the data sizes of recent write ends (where a finish that does not fit
    /// may cut back to).
    fn salvage(self) -> (Output, Vec<u64>);
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
        }
    }

    /// Notes where the data ends after a write that succeeded.
    fn wrote(&mut self) {
        let end = self.out.data_size();
        self.ends.push(end);
    }
}

impl Sink for SerialSink {
    fn write_raw(&mut self, region: Input<'_>) -> io::Result<usize> {
        self.out
            .write_records_vectored(&[region.first, region.second])?;
        self.wrote();
        Ok(if self.out.copies() { region.len() } else { 0 })
    }

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
        let r = for_each_piece(region, edits, |piece| {
            if n == WRITEV_BATCH {
                out.write_records_vectored(&batch[..n])?;
                done = queued;
                n = 0;
            }
            batch[n] = piece;
            n += 1;
            queued += piece.len();
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

    fn write_plain(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_records(bytes)?;
        self.wrote();
        Ok(())
    }

    fn bytes_written(&self) -> u64 {
        self.out.data_size()
    }

    fn describe(&self) -> String {
        match self.out {
            Output::Memory(_) => "memory (flight recorder)".into(),
            _ => "serial".into(),
        }
    }

    fn output(&self) -> &Output {
        &self.out
    }

    fn output_mut(&mut self) -> &mut Output {
        &mut self.out
    }

    fn checkpoint(&mut self, features: &FeatureSet) -> io::Result<Option<u64>> {
        let r = self.out.checkpoint(features)?;
        self.wrote();
        Ok(r)
    }

    fn switch_to(&mut self, next: Output) -> io::Result<Output> {
        // The write ends were the old output's.
        self.ends = RecentEnds::default();
        Ok(std::mem::replace(&mut self.out, next))
    }

    fn into_output(self) -> io::Result<Output> {
        Ok(self.out)
    }

    fn salvage(self) -> (Output, Vec<u64>) {
        // Records are written whole or counted as not written; the file
        // position of a half-done write does not matter (finish seeks).
        let ends = self.ends.as_slice().to_vec();
        (self.out, ends)
    }
}
