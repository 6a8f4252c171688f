//! `snappy`: snap's raw format in perfz chunk framing (see `framing`).
//!
//! The encoder's hash table is warmed at construction (one 64 KiB block).

mod decoder;
mod encoder;

pub use decoder::SnappyDecoder;
pub use encoder::SnappyCodec;
