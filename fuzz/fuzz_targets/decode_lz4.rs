//! Question: do the lz4 decoders (the frame stream cut by output, and the two unit formats written before), fed arbitrary payloads in sequence, only ever
//! return output or an error — no panic, no growth past the limit, and no stale
//! bytes left behind in a reused buffer when a call fails?
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The frame stream perfz writes, and the linked and independent chunks
    // it wrote before.
    perfz_fuzz::decode_payloads(perfz_codecs::CodecId::LZ4, data);
    perfz_fuzz::decode_payloads(perfz_codecs::CodecId::LZ4_LINKED_CHUNKS, data);
    perfz_fuzz::decode_payloads(perfz_codecs::CodecId::LZ4_CHUNKS_V1, data);
});
