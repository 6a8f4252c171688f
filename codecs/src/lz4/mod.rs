//! `lz4`: an lz4 frame stream cut into records by output; the decoders of
//! the two unit formats written before (see `framing`).

mod decoder;
mod encoder;

pub use decoder::{Lz4Decoder, Lz4LinkedUnitsDecoder, Lz4UnitsDecoder};
pub use encoder::Lz4Codec;
