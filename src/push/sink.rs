//! Where pushed bytes go.

use std::io;

use perfz_codecs::Input;

use crate::format::compress::RECORD_MAX;
use crate::format::writer::RecordSink;

/// The write side of the push path.
pub trait Sink {
    /// Raw ring bytes (codec `none`), one or two slices.
    fn write_raw(&mut self, region: Input<'_>) -> io::Result<()>;
    /// The buffer a compressed record is built in ([`RECORD_MAX`] bytes): the
    /// codec writes straight into it, then [`commit`](Sink::commit) writes it.
    fn record_buf(&mut self) -> &mut [u8];
    /// Writes the first `n` bytes of the record buffer.
    fn commit(&mut self, n: usize) -> io::Result<()>;
    /// Plain records (synthesized metadata, FINISHED_ROUND, LOST_SAMPLES).
    fn write_plain(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Bytes written so far.
    fn bytes_written(&self) -> u64;
}

/// The serial sink: writes synchronously to the output, one write per record;
/// raw ring bytes go out with one `writev` of the ring's own slices — zero
/// copies by our code.
pub struct SerialSink<W: RecordSink> {
    pub out: W,
    buf: Box<[u8]>,
}

impl<W: RecordSink> SerialSink<W> {
    pub fn new(out: W) -> Self {
        SerialSink {
            out,
            buf: vec![0u8; RECORD_MAX].into_boxed_slice(),
        }
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: RecordSink> Sink for SerialSink<W> {
    fn write_raw(&mut self, region: Input<'_>) -> io::Result<()> {
        self.out
            .write_records_vectored(&[region.first, region.second])
    }

    fn record_buf(&mut self) -> &mut [u8] {
        &mut self.buf
    }

    fn commit(&mut self, n: usize) -> io::Result<()> {
        self.out.write_records(&self.buf[..n])
    }

    fn write_plain(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_records(bytes)
    }

    fn bytes_written(&self) -> u64 {
        self.out.data_size()
    }
}
