//! The one error type of the codec crate.

use crate::CodecId;

/// What went wrong in a codec. Every variant says what to do about it where a
/// user can do something.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The caller's buffer was smaller than [`Codec::bound`](crate::Codec::bound).
    #[error("output buffer too small: {have} bytes for a chunk that may need {need}")]
    DstTooSmall {
        /// Bytes the codec may write for the input (its bound).
        need: usize,
        /// Bytes the caller's buffer has.
        have: usize,
    },

    /// A payload decodes to more than the caller allowed.
    #[error("compressed data expands beyond the {limit}-byte limit for one record (corrupt file, or a declared mmap_len that is too small)")]
    OutputLimit {
        /// The most bytes the caller let one payload decode to.
        limit: usize,
    },

    /// The compressed bytes are not valid for this codec.
    #[error("corrupt {codec} data: {what}")]
    Corrupt {
        /// The codec's name (`zstd`, `lz4`, ...).
        codec: &'static str,
        /// What is wrong with the bytes, for the message.
        what: String,
    },

    /// The compressed bytes end in the middle of a chunk.
    #[error("truncated {codec} data: {what}")]
    Truncated {
        /// The codec's name (`zstd`, `lz4`, ...).
        codec: &'static str,
        /// What was cut short and how much is left, for the message.
        what: String,
    },

    /// libzstd reported an error while compressing.
    #[error("zstd compression failed: {0}")]
    Zstd(&'static str),

    /// A streaming codec took no input and gave no output (a bug).
    #[error("the codec made no progress on its input (a bug in perfz: please report it)")]
    NoProgress,

    /// The codec exists but was left out of this build.
    #[error("this build of perfz was compiled without {0}; rebuild with --features {0}")]
    NotBuilt(&'static str),

    /// A file names a codec id we do not know.
    #[error("unknown compression type {:#x} in HEADER_COMPRESSED; perfz knows {}", .0.0, crate::table::ids())]
    UnknownId(CodecId),

    /// A codec spec string could not be parsed.
    #[error(
        "invalid codec spec {spec:?}: {what}\n  valid forms: {}",
        crate::knobs::grammar()
    )]
    Spec {
        /// The spec as the user gave it.
        spec: String,
        /// What is wrong with it.
        what: String,
    },
}

impl From<Error> for std::io::Error {
    fn from(e: Error) -> Self {
        let kind = match e {
            Error::Corrupt { .. } | Error::Truncated { .. } | Error::OutputLimit { .. } => {
                std::io::ErrorKind::InvalidData
            }
            Error::Spec { .. } | Error::NotBuilt(_) | Error::UnknownId(_) => {
                std::io::ErrorKind::InvalidInput
            }
            _ => std::io::ErrorKind::Other,
        };
        std::io::Error::new(kind, e)
    }
}
