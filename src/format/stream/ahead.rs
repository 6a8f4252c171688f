//! Outer records read and decoded on a thread of their own, a few records
//! ahead of the ones handed out: decoding, most of the cost of reading a
//! compressed recording, runs beside what the reader's user does with each
//! record. The thread hands over whole records only; the start of a record
//! that a COMPRESSED record's end cuts waits there for the rest, so the
//! records handed out are the ones a stream read in place hands out.
//!
//! Plain outer records (neither compressed nor followed by a payload: an
//! uncompressed recording's) go over in batches of about [`BATCH`] bytes:
//! one message a record cost a futex wake and wait each, most of the
//! reading of a plain recording.
//!
//! Turned on by `PerfReader::read_ahead` (export's inputs).

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use super::{CompressedInfo, Endian, FormatError, RecordHeader, RecordStream, RecordType};

/// How many outer records may wait, decoded (each at most the recording's
/// `mmap_len` and a margin).
const DEPTH: usize = 4;

/// About how many bytes of plain outer records go over in one message.
const BATCH: usize = 256 * 1024;

/// One outer record, its decoded records, or the stream's end.
enum ReadItem {
    /// `outer` holds one record (and its payload: all of `outer`), or a
    /// batch of plain records, the first of which ends at `first_end`.
    Record {
        header: RecordHeader,
        offset: u64,
        outer: Vec<u8>,
        first_end: usize,
        decoded: Vec<u8>,
        tracing: Option<Vec<u8>>,
    },
    /// The end, with the decoded bytes of a record it cut off.
    End(usize),
    Failed(FormatError),
}

/// The receiving end of a stream read on its own thread.
pub(super) struct Ahead {
    rx: Receiver<ReadItem>,
    ended: bool,
    /// Decoded buffers handed back, read out, for the thread to decode into
    /// again: a fresh one grew by copies and page faults at every record.
    back: SyncSender<Vec<u8>>,
}

impl RecordStream {
    /// From now on, reads and decodes on a thread of its own, through
    /// `codec` (the file's, known from its header). Nothing changes where
    /// the thread cannot be started, or for a stream that passes COMPRESSED
    /// records through undecoded.
    pub fn read_ahead(&mut self, codec: Option<CompressedInfo>) {
        if self.ahead.is_some() || self.raw {
            return;
        }
        let (give, take) = sync_channel::<RecordStream>(1);
        let (tx, rx) = sync_channel(DEPTH);
        let (back, spare) = sync_channel(DEPTH + 2);
        let started = std::thread::Builder::new()
            .name("perfz-read".into())
            .spawn(move || {
                if let Ok(worker) = take.recv() {
                    worker.run(codec, tx, spare);
                }
            });
        if started.is_err() {
            return;
        }
        let src = std::mem::replace(&mut self.src, Box::new(std::io::empty()));
        let mut worker = RecordStream::new(src, self.endian, self.pos, self.end, self.stream);
        worker.decoder = self.decoder.take();
        // What was decoded and not yet handed out goes on from there.
        worker.inner = self.inner.split_off(self.inner_pos);
        if give.send(worker).is_ok() {
            self.ahead = Some(Ahead {
                rx,
                ended: false,
                back,
            });
        }
    }

    /// The thread's loop: each outer record and its whole decoded records
    /// (plain ones in batches), then the end (or the error that ended it).
    /// Decodes into the buffers `spare` hands back where there are some.
    fn run(
        mut self,
        codec: Option<CompressedInfo>,
        tx: SyncSender<ReadItem>,
        spare: Receiver<Vec<u8>>,
    ) {
        // The plain records read since the last message: (header and
        // offset of the first, where it ends, their bytes).
        let mut batch: Option<(RecordHeader, u64, usize, Vec<u8>)> = None;
        loop {
            let item = match self.next_outer(codec.as_ref()) {
                Ok(true) if plain(self.cur.2) => {
                    let (.., bytes) = batch.get_or_insert_with(|| {
                        let bytes = Vec::with_capacity(BATCH + (1 << 16));
                        (self.cur.2, self.outer_offset, self.outer.len(), bytes)
                    });
                    bytes.extend_from_slice(&self.outer);
                    if bytes.len() < BATCH {
                        continue;
                    }
                    batched(batch.take().expect("filled above"))
                }
                Ok(true) => self.one_record(&spare),
                Ok(false) => ReadItem::End(self.cut_off),
                Err(e) => ReadItem::Failed(e),
            };
            let last = !matches!(item, ReadItem::Record { .. });
            // What a batch holds goes before what ended it (a full batch
            // went as `item`).
            let before = batch.take().map(batched);
            for item in before.into_iter().chain(std::iter::once(item)) {
                if tx.send(item).is_err() {
                    return;
                }
            }
            if last {
                return;
            }
        }
    }

    /// The outer record at hand and its whole decoded records.
    fn one_record(&mut self, spare: &Receiver<Vec<u8>>) -> ReadItem {
        let whole = whole_records(&self.inner, self.endian);
        let mut tail = spare.try_recv().unwrap_or_default();
        tail.clear();
        tail.extend_from_slice(&self.inner[whole..]);
        self.inner.truncate(whole);
        let header = self.cur.2;
        ReadItem::Record {
            header,
            offset: self.outer_offset,
            first_end: self.outer.len(),
            outer: std::mem::take(&mut self.outer),
            decoded: std::mem::replace(&mut self.inner, tail),
            tracing: (header.type_ == RecordType::HEADER_TRACING_DATA)
                .then(|| std::mem::take(&mut self.tracing_data)),
        }
    }

    /// The next record of the batch in `outer`.
    pub(super) fn next_in_batch(&mut self) -> bool {
        let at = self.outer_end;
        let h = RecordHeader::parse(self.outer[at..at + 8].try_into().unwrap(), self.endian);
        self.outer_end = at + h.size as usize;
        self.cur = (false, at, h);
        true
    }

    /// The next outer record from the thread, its decoded records after
    /// what is left of `inner`.
    pub(super) fn take_ahead(&mut self) -> Result<bool, FormatError> {
        let Some(ahead) = self.ahead.as_mut() else {
            return Ok(false);
        };
        if ahead.ended {
            return self.finish();
        }
        let item = ahead.rx.recv().unwrap_or_else(|_| {
            ReadItem::Failed(FormatError::Unsupported(
                "the thread reading the recording ended before it did".into(),
            ))
        });
        match item {
            ReadItem::Record {
                header,
                offset,
                outer,
                first_end,
                decoded,
                tracing,
            } => {
                if self.inner.is_empty() {
                    let read = std::mem::replace(&mut self.inner, decoded);
                    // A full channel: the thread has buffers enough.
                    let _ = ahead.back.try_send(read);
                } else {
                    self.inner.extend_from_slice(&decoded);
                }
                self.outer = outer;
                self.outer_offset = offset;
                self.outer_end = first_end;
                if let Some(t) = tracing {
                    self.tracing_data = t;
                }
                self.cur = (false, 0, header);
                Ok(true)
            }
            ReadItem::End(cut_off) => {
                ahead.ended = true;
                self.finish()?;
                self.cut_off += cut_off;
                Ok(false)
            }
            ReadItem::Failed(e) => {
                ahead.ended = true;
                Err(e)
            }
        }
    }
}

/// A batch of plain records as the message that carries them.
fn batched((header, offset, first_end, outer): (RecordHeader, u64, usize, Vec<u8>)) -> ReadItem {
    ReadItem::Record {
        header,
        offset,
        outer,
        first_end,
        decoded: Vec::new(),
        tracing: None,
    }
}

/// Whether the outer record of header `h` is plain: neither compressed
/// nor followed by a payload, its bytes its header's size.
fn plain(h: RecordHeader) -> bool {
    !h.type_.is_compressed()
        && h.type_ != RecordType::AUXTRACE
        && h.type_ != RecordType::HEADER_TRACING_DATA
}

/// How many bytes of `buf` are whole records; all of it where a header is
/// damaged (the reader then says where).
fn whole_records(buf: &[u8], endian: Endian) -> usize {
    let mut at = 0;
    while let Some(h) = buf.get(at..at + RecordHeader::SIZE) {
        let size = RecordHeader::parse(h.try_into().expect("8 bytes"), endian).size as usize;
        if size < RecordHeader::SIZE {
            return buf.len();
        }
        if at + size > buf.len() {
            break;
        }
        at += size;
    }
    at
}
