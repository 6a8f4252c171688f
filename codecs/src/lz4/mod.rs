//! `lz4`: lz4_flex's block format in perfz unit framing (see `framing`).

mod decoder;
mod encoder;

pub use decoder::{Lz4Decoder, Lz4UnitsDecoder};
pub use encoder::Lz4Codec;
