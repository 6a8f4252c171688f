//! Question: does the zstd decoder, fed arbitrary payloads in sequence, only ever
//! return output or an error — no panic, no growth past the limit, and no stale
//! bytes left behind in a reused buffer when a call fails?
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| perfz_fuzz::decode_payloads(perfz_codecs::CodecId::ZSTD, data));
