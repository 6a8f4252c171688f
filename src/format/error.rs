//! Errors of the perf.data reader and writer: each names the file offset and
//! what was wrong with it.

use perfz_codecs::Error as CodecError;

/// Why a perf.data file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// Reading or writing the file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),

    /// The first 8 bytes are not perf's magic, in either byte order.
    #[error("not a perf.data file: magic {found:02x?} is neither \"PERFILE2\" nor its byte swap")]
    BadMagic {
        /// The file's first 8 bytes.
        found: [u8; 8],
    },

    /// The file ends before a structure it declares.
    #[error("at offset {offset:#x}: truncated: {what}")]
    Truncated {
        /// File offset where the read that ran short starts.
        offset: u64,
        /// What was being read and how many bytes it lacks.
        what: String,
    },

    /// A value in the file is out of range or contradicts another.
    #[error("at offset {offset:#x}: {what}")]
    Invalid {
        /// File offset of the bad value.
        offset: u64,
        /// What is wrong with it.
        what: String,
    },

    /// A COMPRESSED record's payload does not decode.
    // The cause is part of the message, not a `source`: one line, said once.
    #[error("at offset {offset:#x}: cannot decompress: {err}")]
    Codec {
        /// File offset of the COMPRESSED record (0 where not known).
        offset: u64,
        /// What the codec found wrong.
        err: CodecError,
    },

    /// What was asked cannot be done with this input (the message says why).
    #[error("{0}")]
    Unsupported(String),
}

impl FormatError {
    /// [`FormatError::Invalid`] at `offset`.
    pub fn invalid(offset: u64, what: impl Into<String>) -> Self {
        FormatError::Invalid {
            offset,
            what: what.into(),
        }
    }

    /// Whether this is damage in the bytes (cut short or not records), as
    /// opposed to a failing read or an unsupported input.
    pub fn is_damage(&self) -> bool {
        matches!(
            self,
            FormatError::Truncated { .. } | FormatError::Invalid { .. }
        )
    }
}

impl From<CodecError> for FormatError {
    fn from(source: CodecError) -> Self {
        FormatError::Codec {
            offset: 0,
            err: source,
        }
    }
}
