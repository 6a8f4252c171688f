//! Question: does the none decoder respect its limit and leave a failed call
//! without stale bytes? (The pass-through codec, fuzzed like the others.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfz_codecs::{AnyDecoder, CodecId, Decoder};

fuzz_target!(|data: &[u8]| {
    let mut dec = AnyDecoder::for_id(CodecId::NONE).unwrap();
    let Some((&limit, rest)) = data.split_first() else {
        return;
    };
    let limit = usize::from(limit) * 16;
    let mut out = vec![0xAAu8; 3];
    match dec.decompress(rest, &mut out, limit) {
        Ok(n) => {
            assert_eq!(n, rest.len());
            assert_eq!(&out[3..], rest);
        }
        Err(_) => {
            assert!(rest.len() > limit);
            assert_eq!(out.len(), 3);
        }
    }
});
