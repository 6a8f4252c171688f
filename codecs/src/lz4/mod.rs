//! `lz4`: an lz4 frame stream cut into records by output; the decoders of
//! the two chunk formats written before (see `framing`).
//!
//! The encoder (`Lz4Codec`) is lz4_flex's frame encoder with 1 MiB linked
//! blocks, output-driven; records need no block end
//! (`Codec::BLOCK_ENDS_PER_RECORD` is false), and every buffer is allocated
//! once, by a warm-up frame.

mod decoder;
mod encoder;

pub use decoder::{Lz4Decoder, Lz4LinkedUnitsDecoder, Lz4UnitsDecoder};
pub use encoder::Lz4Codec;
