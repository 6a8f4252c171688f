//! Where pushed bytes go.

use std::io;

use perfz_codecs::Input;

use super::stack_tail::{for_each_piece, Edit};
use crate::format::writer::RecordSink;
use crate::push::records::RECORD_MAX;

/// The write side of the push path.
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
}

/// Slices per `writev` of an edited region (IOV_MAX is 1024).
const WRITEV_BATCH: usize = 64;

/// The serial sink: writes synchronously, one write per record; raw ring bytes
/// go out with one `writev` of the ring's own slices — no copy by our code.
pub struct SerialSink<W: RecordSink> {
    /// The output records are written to.
    pub out: W,
    buf: Box<[u8]>,
    /// Data sizes after the last writes (record boundaries): where a
    /// salvage may cut back to when the features do not fit after the data.
    pub(crate) ends: RecentEnds,
}

/// The last [`RecentEnds::N`] data sizes a sink reached.
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

impl<W: RecordSink> SerialSink<W> {
    /// A sink writing to `out`, no ends noted yet.
    pub fn new(out: W) -> Self {
        SerialSink {
            out,
            buf: vec![0u8; RECORD_MAX].into_boxed_slice(),
            ends: RecentEnds::default(),
        }
    }

    /// Notes where the data ends after a write that succeeded.
    fn wrote(&mut self) {
        let end = self.out.data_size();
        self.ends.push(end);
    }

    /// The output, to finish.
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: RecordSink> Sink for SerialSink<W> {
    fn write_raw(&mut self, region: Input<'_>) -> io::Result<usize> {
        self.out
            .write_records_vectored(&[region.first, region.second])?;
        self.wrote();
        Ok(0)
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
        Ok((0, queued))
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
        Ok(0)
    }

    fn write_plain(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_records(bytes)?;
        self.wrote();
        Ok(())
    }

    fn bytes_written(&self) -> u64 {
        self.out.data_size()
    }
}
