//! `zstd`: one streaming context per output stream, flushed at every push —
//! exactly perf's scheme, so perf 6.1 reads the result.

mod decoder;
mod encoder;
mod oneshot;

pub use decoder::ZstdDecoder;
pub use encoder::ZstdCodec;
pub use oneshot::ZstdOneShotCodec;

/// Largest window log perf's reader (and zstd's default decoder limit) accepts.
pub const MAX_WINDOW_LOG: u32 = 27;

fn zstd_err(code: usize) -> &'static str {
    zstd_safe::get_error_name(code)
}
