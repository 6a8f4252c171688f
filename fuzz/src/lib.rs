//! What the decoder fuzz targets share: one question, asked of each codec.
//!
//! The fuzz crate (`perfz-fuzz`) is a cargo-fuzz crate with a workspace of
//! its own, so it never joins the main build; its targets are
//! fuzz_targets/*.rs, its habits docs/FUZZING.md.

use perfz_codecs::{AnyDecoder, CodecId, Decoder};

const LIMIT: usize = 1 << 20;

/// Feeds `data` to one decoder as consecutive payloads (the first byte picks
/// how it is cut) and checks: output or an error, never a panic, never growth
/// past the limit, and no stale bytes left in a reused, dirty buffer when a
/// call fails.
pub fn decode_payloads(id: CodecId, data: &[u8]) {
    let mut dec = AnyDecoder::for_id(id).unwrap();
    let Some((&step, rest)) = data.split_first() else {
        return;
    };
    let step = usize::from(step).max(1) * 64;
    let mut out = vec![0xAAu8; 7]; // a dirty, reused buffer
    for payload in rest.chunks(step) {
        let before = out.len();
        match dec.decompress(payload, &mut out, LIMIT) {
            Ok(n) => assert_eq!(out.len(), before + n),
            Err(_) => {
                assert_eq!(out.len(), before);
                break;
            }
        }
        assert!(out.len() - before <= LIMIT);
        out.truncate(7);
    }
    assert!(out[..7].iter().all(|&b| b == 0xAA));
}
