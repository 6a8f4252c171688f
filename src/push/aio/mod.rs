//! The async sink (`--aio[=N]`): a push compresses (or, with `none`, copies
//! once) straight into a free buffer, the ring space is released at once, and
//! the write is submitted at an explicit file offset. A push waits for the disk
//! only when all N buffers are in flight.
//!
//! Each of the N buffers holds a whole ring drain plus a record. A push
//! builds its COMPRESSED records in the current buffer (`record_buf` and
//! `commit`), or with `none` copies the kept ring bytes into it, the one
//! copy of that path. `end_push` submits the buffer as one write at the next
//! data offset once it is half full; a smaller one is held (`Sink::holds`)
//! and goes out with the drain loop's 100 ms flush, a loan (checkpoint,
//! switch) or the end: one write per ~100 ms of a cut dwarf stream instead
//! of one per push (docs/BENCHMARKS.md, "Levers, advice and fixes").
//!
//! Backends: io_uring ([`UringBackend`]), or where it cannot be set up (or
//! with `--aio-backend thread`) a writer thread doing `pwrite`
//! ([`ThreadBackend`]). The [`Backend`] enum is chosen once, at session
//! start (no `dyn`). With `--threads` each drain thread has its own sink,
//! buffers and backend (perf refuses `--threads` with `--aio`).
//!
//! A loan waits for every write in flight (`land_all`), so a checkpoint
//! never points past data still in a buffer. At the end the sink lands its
//! writes and returns the [`Output`] for the features and the header. Each
//! write the backend is done with comes back with its offset and result
//! ([`Done`]); `landed.rs` keeps the offset below which every write landed
//! (writes complete out of order; a failed one never lands, so nothing
//! after it counts). After a failed write the unsubmitted buffer is
//! dropped, the data cut back to that offset, and the salvage finishes the
//! output as the serial sink's does, over the last 16 landed buffer ends.
//!
//! Serial and async paths write byte-identical files
//! (tests/it/push_paths.rs); tests/it/writer_props.rs pushes random record
//! streams through the serial, pwrite-thread and io_uring sinks with every
//! codec, byte-exact.

mod backend;
mod landed;
mod thread;
mod uring;

use std::fs::File;
use std::io;

use perfz_codecs::Input;

pub use backend::{Backend, Done};
use landed::Landed;
pub use thread::ThreadBackend;
pub use uring::UringBackend;

use super::output::Output;
use super::sink::HandedBack;
use super::Sink;
use crate::format::record::records;
use crate::push::records::RECORD_MAX;
use crate::transform::{for_each_slice, Edit};

/// Most buffers in flight, like perf's `--aio` (1..=4).
pub const MAX_BUFFERS: usize = 4;

/// The async sink over a file written at offsets.
pub struct AsyncSink {
    out: Output,
    backend: Backend,
    free: Vec<Box<[u8]>>,
    /// The buffer being filled and how much of it is.
    cur: Option<(Box<[u8]>, usize)>,
    next_offset: u64,
    /// Which writes landed, for a salvage after one failed.
    landed: Landed,
    /// The output was lent: the next write takes it up as it is now.
    lent: bool,
    /// The file the backend writes (device, inode).
    file_id: (u64, u64),
    /// Bytes each buffer holds.
    cap: usize,
}

/// A file's device and inode: which file it is, whatever its descriptor.
fn file_id(f: &File) -> io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = f.metadata()?;
    Ok((m.dev(), m.ino()))
}

impl AsyncSink {
    /// `buffers` buffers, each large enough for one whole ring drain, over
    /// `out` (a file or a `data.N` stream: it writes at file offsets).
    pub fn new(
        out: impl Into<Output>,
        backend: impl Into<Backend>,
        buffers: usize,
        ring_size: usize,
    ) -> Self {
        let (out, backend) = (out.into(), backend.into());
        debug_assert!(
            out.file().is_some(),
            "the async sink writes at file offsets"
        );
        let cap = ring_size.max(RECORD_MAX) + RECORD_MAX;
        let free = (0..buffers.clamp(1, MAX_BUFFERS))
            .map(|_| vec![0u8; cap].into_boxed_slice())
            .collect();
        let next_offset = out.next_offset();
        // Unknown: the first loan retargets the backend, as after a switch.
        let file_id = out.file().and_then(|f| file_id(f).ok()).unwrap_or_default();
        AsyncSink {
            out,
            backend,
            free,
            cur: None,
            next_offset,
            landed: Landed::new(next_offset),
            lent: false,
            file_id,
            cap,
        }
    }

    /// Takes a done write's buffer back; its error, if it failed.
    fn settle(&mut self, d: Done) -> io::Result<()> {
        self.free.push(d.buf);
        d.result?;
        self.landed.landed(d.offset, d.len)
    }

    /// After every write landed: the file holds at least what landed (a
    /// backend that said a write landed when it did not leaves it short).
    fn check_landed(&self) -> io::Result<()> {
        let Some(file) = self.out.file() else {
            return Ok(());
        };
        let (len, end) = (file.metadata()?.len(), self.landed.end());
        if len < end {
            return Err(io::Error::other(format!(
                "the writes said to have landed end at offset {end}, but the file holds {len} bytes"
            )));
        }
        Ok(())
    }

    /// Waits for every write in flight; the first error of any.
    fn land_all(&mut self) -> io::Result<()> {
        let mut done = Vec::new();
        let mut first_err = self.backend.drain(&mut done).err();
        for d in done {
            if let Err(e) = self.settle(d) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    fn submit_cur(&mut self) -> io::Result<()> {
        if let Some((buf, len)) = self.cur.take() {
            if len == 0 {
                self.free.push(buf);
                return Ok(());
            }
            let off = self.next_offset;
            self.next_offset += len as u64;
            self.out.account(len as u64);
            self.landed.submitted(off, self.next_offset);
            self.backend.submit(buf, len, off)?;
        }
        Ok(())
    }

    /// After a loan (nothing in flight): writes go on where the output
    /// stands now, a checkpoint's header written or a new file switched to
    /// (whose file the backend then writes).
    fn take_up(&mut self) -> io::Result<()> {
        if !std::mem::take(&mut self.lent) {
            return Ok(());
        }
        let file = self
            .out
            .file()
            .ok_or_else(|| io::Error::other("the async sink writes at file offsets"))?;
        let id = file_id(file)?;
        if id != self.file_id {
            self.backend.retarget(file)?;
            self.file_id = id;
        }
        self.next_offset = self.out.next_offset();
        self.landed = Landed::new(self.next_offset);
        Ok(())
    }

    /// Makes sure the current buffer has `need` free bytes.
    fn room(&mut self, need: usize) -> io::Result<&mut (Box<[u8]>, usize)> {
        if self
            .cur
            .as_ref()
            .is_some_and(|(b, len)| b.len() - len < need)
        {
            self.submit_cur()?;
        }
        if self.cur.is_none() {
            self.take_up()?;
            // Take back whatever finished; wait only when nothing is free.
            while let Some(d) = self.backend.reclaim(false)? {
                self.settle(d)?;
            }
            if self.free.is_empty() {
                let d = self.backend.reclaim(true)?.expect("a buffer in flight");
                self.settle(d)?;
            }
            let buf = self.free.pop().expect("a free buffer");
            self.cur = Some((buf, 0));
        }
        let cur = self.cur.as_mut().expect("set above");
        if cur.0.len() - cur.1 < need {
            return Err(io::Error::other(format!(
                "{need} bytes do not fit an async buffer of {}",
                cur.0.len()
            )));
        }
        Ok(cur)
    }

    /// Appends whole records, in as many buffers as they need, each buffer
    /// ending at a record's end (a salvage cuts back to buffer ends): the
    /// side band of a busy machine is larger than a buffer of small rings
    /// (`-m 64`: 328 672 bytes against 327 679 were refused, and the
    /// recording with them).
    fn append_records(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let mut rest = bytes;
        while rest.len() > self.cap {
            let mut take = 0;
            for r in records(rest) {
                match r {
                    Ok((_, rec)) if take + rec.len() <= self.cap => take += rec.len(),
                    _ => break,
                }
            }
            if take == 0 {
                // Not whole records, or one larger than a buffer: says so.
                take = rest.len();
            }
            self.append(&[&rest[..take]])?;
            rest = &rest[take..];
        }
        self.append(&[rest])?;
        Ok(bytes.len())
    }

    fn append(&mut self, parts: &[&[u8]]) -> io::Result<usize> {
        let need: usize = parts.iter().map(|p| p.len()).sum();
        let (buf, len) = self.room(need)?;
        for p in parts {
            buf[*len..*len + p.len()].copy_from_slice(p);
            *len += p.len();
        }
        Ok(need)
    }
}

impl Sink for AsyncSink {
    fn write_raw(&mut self, region: Input<'_>) -> io::Result<usize> {
        // The one copy of the `none` async path: ring -> async buffer.
        self.append(&[region.first, region.second])
    }

    fn write_raw_edited(
        &mut self,
        region: Input<'_>,
        edits: &[Edit],
    ) -> io::Result<(usize, usize)> {
        // The one copy of the `none` async path, of the kept bytes only.
        // The piece (whole records) goes into one buffer, so a buffer ends
        // at a record's end, not between two slices of a sample.
        let mut kept = 0;
        for_each_slice(region, edits, |slice| {
            kept += slice.len();
            Ok::<(), io::Error>(())
        })?;
        if kept <= self.cap {
            self.room(kept)?;
        }
        let mut n = 0;
        for_each_slice(region, edits, |slice| {
            n += self.append(&[slice])?;
            Ok::<(), io::Error>(())
        })?;
        Ok((n, n))
    }

    fn record_buf(&mut self) -> io::Result<&mut [u8]> {
        let (buf, len) = self.room(RECORD_MAX)?;
        Ok(&mut buf[*len..])
    }

    fn commit(&mut self, n: usize) -> io::Result<()> {
        if let Some((_, len)) = self.cur.as_mut() {
            *len += n;
        }
        Ok(())
    }

    fn end_push(&mut self) -> io::Result<()> {
        // One write per half buffer, not one per push: a push of a cut
        // dwarf stream or a held zstd stream gives a few KiB, and each write
        // is a submission (io_uring may hand it to a worker on the drain's
        // own CPU). What waits is handed over within `HOLD_MAX` by the
        // drain loop's flush, and before any checkpoint or finish.
        if self
            .cur
            .as_ref()
            .is_some_and(|(b, len)| *len >= b.len() / 2)
        {
            self.submit_cur()?;
        }
        Ok(())
    }

    fn holds(&self) -> bool {
        self.cur.as_ref().is_some_and(|(_, len)| *len > 0)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.submit_cur()
    }

    fn write_plain(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.append_records(bytes).map(drop)
    }

    fn bytes_written(&self) -> u64 {
        self.out.data_size() + self.cur.as_ref().map_or(0, |c| c.1 as u64)
    }

    fn describe(&self) -> &'static str {
        match self.backend.name() {
            "io_uring" => "async (io_uring)",
            _ => "async (pwrite thread)",
        }
    }

    fn output(&self) -> Option<&Output> {
        Some(&self.out)
    }

    /// Every write in flight lands first, so a checkpoint's header never
    /// points past data still in a buffer; the next write takes up the
    /// output as the loan left it (see `take_up`).
    fn lend(&mut self) -> io::Result<Option<&mut Output>> {
        self.submit_cur()?;
        self.land_all()?;
        self.lent = true;
        Ok(Some(&mut self.out))
    }

    /// The records of the writes that landed before the first one that did
    /// not (a finish that does not fit after them cuts back to an earlier
    /// buffer's end), instead of falling back to the last checkpoint.
    fn hand_over(&mut self, next: Option<Output>) -> HandedBack {
        let mut error = self.take_up().err();
        if error.is_none() {
            error = self.submit_cur().err();
        }
        // Whatever is in flight lands or fails first; what was never
        // submitted is not in the file.
        self.cur = None;
        if let Err(e) = self.land_all() {
            error.get_or_insert(e);
        }
        if error.is_none() {
            error = self.check_landed().err();
        }
        let end = self.landed.end();
        let data_start = self.out.next_offset() - self.out.data_size();
        let past = self.out.next_offset().saturating_sub(end);
        self.out.forget(past);
        let ends = self
            .landed
            .recent_ends()
            .iter()
            .map(|e| e - data_start)
            .collect();
        // The next write takes up the next output (see `take_up`).
        self.lent = true;
        HandedBack {
            output: Some(std::mem::replace(
                &mut self.out,
                next.unwrap_or(Output::Closed),
            )),
            ends,
            error,
            ..HandedBack::default()
        }
    }
}

#[cfg(test)]
mod tests;
