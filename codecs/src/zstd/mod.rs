//! `zstd`: one streaming context per output stream (one endless frame, as
//! perf writes it), flushed where perfz's record cutter ends a block.
//!
//! `oneshot` (`ZstdOneShotCodec`) makes a complete frame per push slice
//! instead, cut by input like the block codecs.

mod decoder;
mod encoder;
mod oneshot;

pub use decoder::ZstdDecoder;
pub use encoder::ZstdCodec;
pub use oneshot::ZstdOneShotCodec;

/// Largest window log perf's reader (and zstd's default decoder limit)
/// accepts: the top of `wlog=`'s range.
pub const MAX_WINDOW_LOG: u32 = *crate::knobs::KNOBS[crate::knobs::WLOG].range.end();

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
    // libzstd's parameter of each knob, in `knobs::KNOBS` order.
    let parameter: [fn(u32) -> CParameter; 5] = [
        CParameter::WindowLog,
        CParameter::HashLog,
        CParameter::ChainLog,
        CParameter::SearchLog,
        CParameter::MinMatch,
    ];
    for (p, v) in parameter.iter().zip(params.effective_knobs()) {
        if let Some(v) = v {
            set(p(v))?;
        }
    }
    if let Some(v) = params.strategy {
        set(CParameter::Strategy(strategy_of(v)))?;
    }
    if params.long {
        set(CParameter::EnableLongDistanceMatching(true))?;
    }
    Ok(cctx)
}

/// libzstd's strategy for its number (1 = fast ... 9 = btultra2).
fn strategy_of(n: u32) -> zstd_safe::Strategy {
    use zstd_safe::Strategy::*;
    match n {
        1 => ZSTD_fast,
        2 => ZSTD_dfast,
        3 => ZSTD_greedy,
        4 => ZSTD_lazy,
        5 => ZSTD_lazy2,
        6 => ZSTD_btlazy2,
        7 => ZSTD_btopt,
        8 => ZSTD_btultra,
        _ => ZSTD_btultra2,
    }
}
