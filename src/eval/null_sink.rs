//! The sink `perfz eval` pushes into: it writes nowhere, so the figures
//! are the codec's and the push path's, not a disk's.

use std::io;

use perfz_codecs::Input;

use crate::push::{HandedBack, Output, Sink};
use crate::transform::Edit;

/// A sink that writes nowhere: it keeps the records (to verify them) or only
/// counts them (for timing). Compressed records are built in its buffer, as
/// in the serial sink. Raw bytes (`none`) are memcpy'd into a scratch buffer:
/// that row is the memcpy baseline every codec is compared with.
pub(super) struct NullSink {
    pub(super) buf: Box<[u8]>,
    pub(super) scratch: Vec<u8>,
    pub(super) keep: Option<Vec<u8>>,
    pub(super) written: u64,
}

impl Sink for NullSink {
    fn write_raw(&mut self, region: Input<'_>) -> io::Result<usize> {
        if let Some(k) = &mut self.keep {
            k.extend_from_slice(region.first);
            k.extend_from_slice(region.second);
        }
        self.scratch.clear();
        self.scratch.extend_from_slice(region.first);
        self.scratch.extend_from_slice(region.second);
        std::hint::black_box(&self.scratch);
        self.written += region.len() as u64;
        Ok(region.len())
    }
    fn write_raw_edited(
        &mut self,
        region: Input<'_>,
        edits: &[Edit],
    ) -> io::Result<(usize, usize)> {
        self.scratch.clear();
        crate::transform::for_each_slice(region, edits, |p| {
            self.scratch.extend_from_slice(p);
            Ok::<(), io::Error>(())
        })?;
        if let Some(k) = &mut self.keep {
            k.extend_from_slice(&self.scratch);
        }
        let n = self.scratch.len();
        self.written += n as u64;
        Ok((n, n))
    }
    fn record_buf(&mut self) -> io::Result<&mut [u8]> {
        Ok(&mut self.buf)
    }
    fn commit(&mut self, n: usize) -> io::Result<()> {
        if let Some(k) = &mut self.keep {
            k.extend_from_slice(&self.buf[..n]);
        }
        self.written += n as u64;
        Ok(())
    }
    fn write_record(&mut self, rec: &[u8]) -> io::Result<usize> {
        // As the serial sink: written from where it was built.
        if let Some(k) = &mut self.keep {
            k.extend_from_slice(rec);
        }
        self.written += rec.len() as u64;
        Ok(0)
    }
    fn write_plain(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.written += bytes.len() as u64;
        Ok(())
    }
    fn bytes_written(&self) -> u64 {
        self.written
    }
    fn describe(&self) -> &'static str {
        "null"
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
