//! Decoders fed corrupted, truncated or lying input return an error, never
//! panic, and never grow the output past the caller's limit.

use crate::util::*;
use perfz_codecs::{AnyDecoder, CodecId, CodecSpec, Decoder, Error};

fn units_for(spec: &str) -> (CodecSpec, Chunks, Vec<u8>) {
    let spec: CodecSpec = spec.parse().unwrap();
    let data = perf_like(150_000, 21);
    let chunks = compress_pushes(&spec, &ring_pushes(&data, 40_000, 17_000));
    (spec, chunks, data)
}

/// Decodes all chunks with a mutation applied to chunk `which`; returns whether
/// every call either succeeded or failed cleanly.
fn decode_mutated(spec: &CodecSpec, chunks: &Chunks, which: usize, mutate: impl Fn(&mut Vec<u8>)) {
    let mut dec = AnyDecoder::for_id(spec.id()).unwrap();
    let mut out = Vec::new();
    let limit = 1 << 20;
    for (i, u) in chunks.chunks.iter().enumerate() {
        let mut u = u.clone();
        if i == which {
            mutate(&mut u);
        }
        let before = out.len();
        match dec.decompress(&u, &mut out, limit) {
            Ok(n) => assert_eq!(out.len(), before + n),
            Err(_) => {
                assert_eq!(out.len(), before, "{spec}: a failed call left bytes behind");
                return;
            }
        }
        assert!(out.len() - before <= limit);
    }
}

#[test]
fn truncated_units_never_panic() {
    for spec in ["zstd:1", "zstd:19", "lz4", "snappy"] {
        let (spec, chunks, _) = units_for(spec);
        for which in [0, 1, chunks.chunks.len() - 1] {
            let len = chunks.chunks[which].len();
            for cut in (0..len).step_by((len / 50).max(1)) {
                decode_mutated(&spec, &chunks, which, |u| u.truncate(cut));
            }
        }
    }
}

#[test]
fn bit_flips_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for spec in ["zstd:1", "zstd:3,wlog=23", "lz4", "snappy"] {
        let (spec, chunks, _) = units_for(spec);
        for _ in 0..300 {
            let which = rng.below(chunks.chunks.len() as u64) as usize;
            let len = chunks.chunks[which].len() as u64;
            let (at, bit) = (rng.below(len) as usize, rng.below(8));
            decode_mutated(&spec, &chunks, which, |u| u[at] ^= 1 << bit);
        }
    }
}

#[test]
fn block_units_that_claim_4gib_are_refused_before_allocating() {
    for id in [
        CodecId::LZ4_LINKED_CHUNKS,
        CodecId::LZ4_CHUNKS_V1,
        CodecId::SNAPPY,
    ] {
        let mut dec = AnyDecoder::for_id(id).unwrap();
        let mut chunk = Vec::new();
        chunk.extend_from_slice(&u32::MAX.to_le_bytes());
        chunk.extend_from_slice(&4u32.to_le_bytes());
        chunk.extend_from_slice(&[0, 0, 0, 0]);
        let mut out = Vec::new();
        let err = dec.decompress(&chunk, &mut out, 1 << 20).unwrap_err();
        assert!(matches!(err, Error::OutputLimit { .. }), "{id}: {err}");
        assert!(
            out.capacity() < 1 << 20,
            "{id}: reserved {} bytes",
            out.capacity()
        );
    }
}

#[test]
fn zstd_bomb_stops_at_the_limit() {
    // 64 MiB of zeros compress to a few KiB; decoding with a 1 MiB limit must
    // stop there, not allocate 64 MiB.
    let zeros = vec![0u8; 64 << 20];
    let bomb = zstd::bulk::compress(&zeros, 19).unwrap();
    assert!(bomb.len() < 64 << 10);
    let mut dec = AnyDecoder::for_id(CodecId::ZSTD).unwrap();
    let mut out = Vec::new();
    let err = dec.decompress(&bomb, &mut out, 1 << 20).unwrap_err();
    assert!(
        matches!(err, Error::OutputLimit { limit } if limit == 1 << 20),
        "{err}"
    );
    assert!(
        out.capacity() <= (1 << 20) + (256 << 10),
        "reserved {}",
        out.capacity()
    );
}

#[test]
fn output_exactly_at_the_limit_is_fine() {
    let (spec, chunks, data) = units_for("zstd:1");
    let mut dec = AnyDecoder::for_id(spec.id()).unwrap();
    let mut out = Vec::new();
    for u in &chunks.chunks {
        dec.decompress(u, &mut out, usize::MAX).unwrap();
    }
    assert_eq!(out, data);
    // One chunk, limit = its exact size.
    let (spec, chunks, data) = units_for("lz4");
    let mut dec = AnyDecoder::for_id(spec.id()).unwrap();
    let mut out = Vec::new();
    let n = dec
        .decompress(&chunks.chunks[0], &mut out, usize::MAX)
        .unwrap();
    let mut dec = AnyDecoder::for_id(spec.id()).unwrap();
    let mut again = Vec::new();
    assert_eq!(dec.decompress(&chunks.chunks[0], &mut again, n).unwrap(), n);
    assert_eq!(&again[..], &data[..n]);
}

#[test]
fn unknown_ids_are_named() {
    let err = AnyDecoder::for_id(CodecId(77)).err().unwrap().to_string();
    assert!(err.contains("0x4d") && err.contains("zstd (1)"), "{err}");
}
