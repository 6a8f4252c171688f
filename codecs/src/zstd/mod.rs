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

/// A compression context with `params` applied (level, window log, long
/// distance matching): what both zstd codecs start from.
fn context(params: &crate::ZstdParams) -> Result<zstd_safe::CCtx<'static>, crate::Error> {
    use zstd_safe::CParameter;
    let mut cctx = zstd_safe::CCtx::try_create()
        .ok_or(crate::Error::Zstd("cannot allocate a compression context"))?;
    let mut set = |p| {
        cctx.set_parameter(p)
            .map(drop)
            .map_err(zstd_err)
            .map_err(crate::Error::Zstd)
    };
    set(CParameter::CompressionLevel(params.level))?;
    if let Some(wlog) = params.effective_window_log() {
        set(CParameter::WindowLog(wlog))?;
    }
    if params.long {
        set(CParameter::EnableLongDistanceMatching(true))?;
    }
    Ok(cctx)
}
