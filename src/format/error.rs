//! Errors of the perf.data reader and writer: each names the file offset and
//! what was wrong with it.

use perfz_codecs::Error as CodecError;

#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error("{0}")]
    Io(#[from] std::io::Error),

    #[error("not a perf.data file: magic {found:02x?} is neither \"PERFILE2\" nor its byte swap")]
    BadMagic { found: [u8; 8] },

    #[error("at offset {offset:#x}: truncated: {what}")]
    Truncated { offset: u64, what: String },

    #[error("at offset {offset:#x}: {what}")]
    Invalid { offset: u64, what: String },

    // The cause is part of the message, not a `source`: one line, said once.
    #[error("at offset {offset:#x}: cannot decompress: {err}")]
    Codec { offset: u64, err: CodecError },

    #[error("{0}")]
    Unsupported(String),
}

impl FormatError {
    pub fn invalid(offset: u64, what: impl Into<String>) -> Self {
        FormatError::Invalid {
            offset,
            what: what.into(),
        }
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
