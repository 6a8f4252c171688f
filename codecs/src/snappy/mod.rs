//! `snappy`: snap's raw format in perfz unit framing (see `framing`).

mod decoder;
mod encoder;

pub use decoder::SnappyDecoder;
pub use encoder::SnappyCodec;
