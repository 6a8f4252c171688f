//! The one runtime choice of codec, sink and meter: `CodecSpec::visit` hands
//! us the concrete codec, and we box a drain unit specialised for all three.
//! Everything before (setup) and after (the loop, finishing) is plain code.

use std::fs::File;
use std::io;

use perfz_codecs::{Codec, CodecVisitor};

use super::error::RecordError;
use super::options::AioBackend;
use crate::format::data_stream::DataStreamWriter;
use crate::format::writer::{FileWriter, PipeWriter};
use crate::push::drain::{Drain, PushDrain};
use crate::push::Lifecycle;
use crate::push::{
    AsyncSink, CopyMeter, MemorySink, NoMeter, OffsetFile, SerialSink, StackTail, ThreadBackend,
    UringBackend,
};

/// The writer the output was opened with.
pub enum Writer {
    File(FileWriter<File>),
    Pipe(PipeWriter<File>),
    /// One `data.N` of a `--threads` directory.
    Stream(DataStreamWriter),
    /// `--flight-recorder SIZE`: compressed segments in memory.
    Memory(u64),
}

/// How the drain unit writes.
pub struct Glue {
    pub writer: Writer,
    /// `--aio[=N]`.
    pub aio: Option<usize>,
    pub aio_backend: AioBackend,
    pub copy_meter: bool,
    /// The largest ring's data size (an async buffer holds a whole drain).
    pub ring_size: usize,
    /// Unwritten dwarf stack bytes to clear before compression.
    pub stack_tail: Option<StackTail>,
    /// End each pass with FINISHED_ROUND (not in `data.N` streams, as perf).
    pub rounds: bool,
    /// Gather what the build-id pass needs while draining.
    pub hits: bool,
}

/// The drain unit and notes for the user about choices made.
pub type Built = (Box<dyn Drain + Send>, Vec<String>);

/// What a drain unit is built with besides its codec and sink.
#[derive(Clone)]
struct UnitConfig {
    copy_meter: bool,
    stack_tail: Option<StackTail>,
    rounds: bool,
    hits: bool,
}

impl UnitConfig {
    fn build<C: Codec + Send + 'static, S: Lifecycle + Send + 'static>(
        self,
        codec: C,
        sink: S,
    ) -> Box<dyn Drain + Send> {
        let t = self.stack_tail.clone();
        if self.copy_meter {
            Box::new(PushDrain::<C, S, CopyMeter>::new(
                codec,
                sink,
                t,
                self.rounds,
                self.hits,
            ))
        } else {
            Box::new(PushDrain::<C, S, NoMeter>::new(
                codec,
                sink,
                t,
                self.rounds,
                self.hits,
            ))
        }
    }
}

/// How async units are built.
struct Async {
    backend: AioBackend,
    ring_size: usize,
}

impl Async {
    /// An async sink over `file` with io_uring, or the pwrite thread as
    /// `--aio-backend` allows.
    fn unit<C: Codec + Send + 'static, W: OffsetFile + Send + 'static>(
        &self,
        u: UnitConfig,
        codec: C,
        file: W,
        n: usize,
    ) -> Result<Built, RecordError> {
        let uring = match self.backend {
            AioBackend::Thread => Err(io::Error::other("--aio-backend thread")),
            _ => UringBackend::new(file.file()),
        };
        match uring {
            Ok(b) => Ok((
                u.build(codec, AsyncSink::new(file, b, n, self.ring_size)),
                Vec::new(),
            )),
            Err(e) if self.backend == AioBackend::Uring => Err(RecordError::Usage(format!(
                "io_uring is not available here ({e}); use --aio-backend thread or auto"
            ))),
            Err(e) => {
                let mut notes = Vec::new();
                if self.backend == AioBackend::Auto {
                    notes.push(format!(
                        "io_uring is not available ({e}); async writes go through a pwrite thread"
                    ));
                }
                let b = ThreadBackend::new(file.file())
                    .map_err(super::error::io_err("starting the writer thread"))?;
                Ok((
                    u.build(codec, AsyncSink::new(file, b, n, self.ring_size)),
                    notes,
                ))
            }
        }
    }
}

impl CodecVisitor for Glue {
    type Output = Result<Built, RecordError>;

    fn visit<C: Codec + Send + 'static>(self, codec: C) -> Self::Output {
        let u = UnitConfig {
            copy_meter: self.copy_meter,
            stack_tail: self.stack_tail,
            rounds: self.rounds,
            hits: self.hits,
        };
        let a = Async {
            backend: self.aio_backend,
            ring_size: self.ring_size,
        };
        match (self.writer, self.aio) {
            (Writer::Pipe(w), aio) => {
                let mut notes = Vec::new();
                if aio.is_some() {
                    notes.push("--aio needs a file output (it writes at file offsets); writing the pipe serially".into());
                }
                Ok((u.build(codec, SerialSink::new(w)), notes))
            }
            (Writer::Memory(cap), aio) => {
                let mut notes = Vec::new();
                if aio.is_some() {
                    notes.push("--aio: the flight recorder writes only snapshots, serially".into());
                }
                Ok((u.build(codec, MemorySink::new(cap)), notes))
            }
            (Writer::File(w), None) => Ok((u.build(codec, SerialSink::new(w)), Vec::new())),
            (Writer::Stream(w), None) => Ok((u.build(codec, SerialSink::new(w)), Vec::new())),
            (Writer::File(w), Some(n)) => a.unit(u, codec, w, n),
            (Writer::Stream(w), Some(n)) => a.unit(u, codec, w, n),
        }
    }
}
