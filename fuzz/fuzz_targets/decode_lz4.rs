//! Question: does the lz4 decoder, fed arbitrary payloads in sequence, only ever
//! return output or an error — no panic, no growth past the limit, and no stale
//! bytes left behind in a reused buffer when a call fails?
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfz_codecs::{AnyDecoder, CodecId, Decoder};

const LIMIT: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let mut dec = AnyDecoder::for_id(CodecId::LZ4).unwrap();
    // The first byte picks how the input is cut into consecutive payloads.
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
});
