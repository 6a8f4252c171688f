//! The one runtime choice of codec, sink and meter: `CodecSpec::visit` hands
//! us the concrete codec, and we box a drain unit specialised for all three.
//! Everything before (setup) and after (the loop, finishing) is plain code.
//!
//! Sinks: serial, or with `--aio` the async sink over io_uring or a pwrite
//! thread (`--aio-backend`; auto falls back to the thread with a note). The
//! async sink writes at file offsets, so only a file or a `data.N` stream
//! gets it; a pipe and the flight recorder's memory are written serially.
//! Meters: the copy meter with `-v` or `--stats-json`, else none. Every
//! strategy builds its units here, each with its own codec state.

use std::io;

use perfz_codecs::{Codec, CodecVisitor};

use super::error::RecordError;
use super::options::AioBackend;
use crate::notes::Notes;
use crate::push::unit::Unit;
use crate::push::unit::{CodecUnit, UnitSettings};
use crate::push::{
    AsyncSink, CopyMeter, NoMeter, Output, SerialSink, Sink, ThreadBackend, UringBackend,
};

/// How the drain unit writes: its output, its sink and meter, and the
/// settings the unit takes as they are.
pub struct UnitBuild {
    /// Where the unit's records go.
    pub output: Output,
    /// `--aio[=N]`.
    pub aio: Option<usize>,
    pub aio_backend: AioBackend,
    pub copy_meter: bool,
    /// The largest ring's data size (an async buffer holds a whole drain).
    pub ring_size: usize,
    /// What the unit does besides pushing.
    pub settings: UnitSettings,
}

/// The drain unit, and notes for the user about choices made.
pub struct Built {
    /// The unit.
    pub unit: Box<dyn Unit + Send>,
    /// What was chosen for the user to hear (a fallback of `--aio`).
    pub notes: Notes,
}

/// A unit over `sink`: the meter chosen (`copy_meter`), the rest as
/// `settings` say.
fn build<C: Codec + Send + 'static, S: Sink + Send + 'static>(
    copy_meter: bool,
    settings: UnitSettings,
    codec: C,
    sink: S,
) -> Box<dyn Unit + Send> {
    if copy_meter {
        Box::new(CodecUnit::<C, S, CopyMeter>::new(codec, sink, settings))
    } else {
        Box::new(CodecUnit::<C, S, NoMeter>::new(codec, sink, settings))
    }
}

/// How async units are built.
struct Async {
    backend: AioBackend,
    ring_size: usize,
    copy_meter: bool,
    settings: UnitSettings,
}

impl Async {
    /// An async sink over `file` with io_uring, or the pwrite thread as
    /// `--aio-backend` allows.
    fn unit<C: Codec + Send + 'static>(
        self,
        codec: C,
        out: Output,
        n: usize,
    ) -> Result<Built, RecordError> {
        let Some(file) = out.file() else {
            return Err(RecordError::Usage(
                "--aio writes at file offsets, and this output is not a file".into(),
            ));
        };
        let uring = match self.backend {
            AioBackend::Thread => Err(io::Error::other("--aio-backend thread")),
            _ => UringBackend::new(file),
        };
        match uring {
            Ok(b) => Ok(Built {
                unit: build(
                    self.copy_meter,
                    self.settings,
                    codec,
                    AsyncSink::new(out, b, n, self.ring_size),
                ),
                notes: Notes::new(),
            }),
            Err(e) if self.backend == AioBackend::Uring => Err(RecordError::Usage(format!(
                "io_uring is not available here ({e}); use --aio-backend thread or auto"
            ))),
            Err(e) => {
                let mut notes = Notes::new();
                if self.backend == AioBackend::Auto {
                    notes.push(format!(
                        "io_uring is not available ({e}); async writes go through a pwrite thread"
                    ));
                }
                let b = ThreadBackend::new(file)
                    .map_err(super::error::io_err("starting the writer thread"))?;
                Ok(Built {
                    unit: build(
                        self.copy_meter,
                        self.settings,
                        codec,
                        AsyncSink::new(out, b, n, self.ring_size),
                    ),
                    notes,
                })
            }
        }
    }
}

impl CodecVisitor for UnitBuild {
    type Output = Result<Built, RecordError>;

    fn visit<C: Codec + Send + 'static>(self, codec: C) -> Self::Output {
        let a = Async {
            backend: self.aio_backend,
            ring_size: self.ring_size,
            copy_meter: self.copy_meter,
            settings: self.settings,
        };
        let mut notes = Notes::new();
        match (self.output, self.aio) {
            (out @ (Output::File(_) | Output::Stream(_)), Some(n)) => a.unit(codec, out, n),
            (out, aio) => {
                if aio.is_some() {
                    notes.push(match out {
                        Output::Pipe(_) => "--aio needs a file output (it writes at file offsets); writing the pipe serially",
                        _ => "--aio: the flight recorder writes only snapshots, serially",
                    });
                }
                Ok(Built {
                    unit: build(a.copy_meter, a.settings, codec, SerialSink::new(out)),
                    notes,
                })
            }
        }
    }
}
