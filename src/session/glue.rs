//! The one runtime choice of codec, sink and meter: `CodecSpec::visit` hands
//! us the concrete codec, and we box a drain unit specialised for all three.
//! Everything before (setup) and after (the loop, finishing) is plain code.

use std::fs::File;
use std::io;

use perfz_codecs::{Codec, CodecVisitor};

use super::drain::{Drain, PushDrain};
use super::sinks::SessionSink;
use super::{AioBackend, RecordError};
use crate::format::writer::{FileWriter, PipeWriter};
use crate::push::{
    AsyncSink, CopyMeter, NoMeter, SerialSink, StackTail, ThreadBackend, UringBackend,
};

/// The writer the output was opened with.
pub enum Writer {
    File(FileWriter<File>),
    Pipe(PipeWriter<File>),
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
}

/// The drain unit and notes for the user about choices made.
pub type Built = (Box<dyn Drain>, Vec<String>);

fn metered<C: Codec + 'static, S: SessionSink + 'static>(
    codec: C,
    sink: S,
    copy_meter: bool,
    stack_tail: Option<StackTail>,
) -> Box<dyn Drain> {
    if copy_meter {
        Box::new(PushDrain::<C, S, CopyMeter>::new(codec, sink, stack_tail))
    } else {
        Box::new(PushDrain::<C, S, NoMeter>::new(codec, sink, stack_tail))
    }
}

impl CodecVisitor for Glue {
    type Output = Result<Built, RecordError>;

    fn visit<C: Codec + Send + 'static>(self, codec: C) -> Self::Output {
        let (m, t) = (self.copy_meter, self.stack_tail);
        let file = match self.writer {
            Writer::Pipe(w) => {
                let mut notes = Vec::new();
                if self.aio.is_some() {
                    notes.push("--aio needs a file output (it writes at file offsets); writing the pipe serially".into());
                }
                return Ok((metered(codec, SerialSink::new(w), m, t), notes));
            }
            Writer::File(w) => w,
        };
        let Some(n) = self.aio else {
            return Ok((metered(codec, SerialSink::new(file), m, t), Vec::new()));
        };
        let uring = match self.aio_backend {
            AioBackend::Thread => Err(io::Error::other("--aio-backend thread")),
            _ => UringBackend::new(file.get_ref()),
        };
        match uring {
            Ok(b) => Ok((
                metered(codec, AsyncSink::new(file, b, n, self.ring_size), m, t),
                Vec::new(),
            )),
            Err(e) if self.aio_backend == AioBackend::Uring => Err(RecordError::Usage(format!(
                "io_uring is not available here ({e}); use --aio-backend thread or auto"
            ))),
            Err(e) => {
                let mut notes = Vec::new();
                if self.aio_backend == AioBackend::Auto {
                    notes.push(format!(
                        "io_uring is not available ({e}); async writes go through a pwrite thread"
                    ));
                }
                let b = ThreadBackend::new(file.get_ref())
                    .map_err(super::error::io_err("starting the writer thread"))?;
                Ok((
                    metered(codec, AsyncSink::new(file, b, n, self.ring_size), m, t),
                    notes,
                ))
            }
        }
    }
}
