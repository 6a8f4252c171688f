//! Shared helpers for the codec tests: stream generators and a push-path-like
//! round trip.
#![allow(dead_code)]

use perfz_codecs::{
    AnyDecoder, Codec, CodecSpec, CodecVisitor, Decoder, Input, MAX_RECORD_PAYLOAD,
};

/// A deterministic xorshift generator (tests must not depend on a seed file).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

pub fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed | 1);
    (0..n).map(|_| r.next() as u8).collect()
}

/// A stream shaped like what perf ring buffers hold: SAMPLE records with
/// ip/tid/time/period and a callchain drawn from a small set of addresses.
pub fn perf_like(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed | 1);
    let frames: Vec<u64> = (0..64)
        .map(|i| 0x5555_5555_0000 + i * 0x137 + (r.below(64) << 4))
        .collect();
    let mut out = Vec::with_capacity(n + 1024);
    let mut time = 1_000_000_000u64;
    while out.len() < n {
        let depth = 3 + r.below(20) as usize;
        let size = 8 + 8 + 8 + 8 + 8 + 8 + 8 * depth;
        out.extend_from_slice(&9u32.to_le_bytes());
        out.extend_from_slice(&2u16.to_le_bytes());
        out.extend_from_slice(&(size as u16).to_le_bytes());
        let ip = frames[r.below(64) as usize];
        out.extend_from_slice(&ip.to_le_bytes());
        out.extend_from_slice(&4242u32.to_le_bytes());
        out.extend_from_slice(&4242u32.to_le_bytes());
        time += 1_000_000 + r.below(5000);
        out.extend_from_slice(&time.to_le_bytes());
        out.extend_from_slice(&1_001_001u64.to_le_bytes());
        out.extend_from_slice(&(depth as u64).to_le_bytes());
        for _ in 0..depth {
            out.extend_from_slice(&frames[r.below(64) as usize].to_le_bytes());
        }
    }
    out.truncate(n);
    out
}

/// The parameter sets every codec test runs with.
pub fn all_specs() -> Vec<CodecSpec> {
    [
        "none",
        "zstd:-5",
        "zstd:1",
        "zstd:3",
        "zstd:19",
        "zstd:3,wlog=23",
        "zstd:1,long",
        "zstd:3,oneshot",
        "lz4",
        "snappy",
    ]
    .iter()
    .map(|s| s.parse().unwrap())
    .collect()
}

/// The compressed chunks of a sequence of pushes, cut like the push path cuts
/// them: no chunk's input is larger than what fits one perf record.
pub struct Chunks {
    pub chunks: Vec<Vec<u8>>,
    /// Every chunk must decode to something (`Codec::BLOCK_ENDS_PER_RECORD`).
    pub block_ends: bool,
}

/// Compresses `pushes` (each one or two slices) with the codec of `spec`.
pub fn compress_pushes(spec: &CodecSpec, pushes: &[(Vec<u8>, Vec<u8>)]) -> Chunks {
    struct V<'a>(&'a [(Vec<u8>, Vec<u8>)]);
    impl CodecVisitor for V<'_> {
        type Output = Chunks;
        fn visit<C: Codec + Send + 'static>(self, mut codec: C) -> Chunks {
            let max_in = codec.max_input(MAX_RECORD_PAYLOAD);
            assert!(
                max_in > 50_000,
                "{} leaves only {max_in} input bytes per record",
                C::ID
            );
            let mut dst = vec![0u8; MAX_RECORD_PAYLOAD];
            let mut chunks = Vec::new();
            for (a, b) in self.0 {
                let mut rest = Input::two(a, b);
                if C::OUTPUT_DRIVEN && !rest.is_empty() {
                    // Records cut by output, as the push path does it.
                    loop {
                        let step = codec.stream(rest, &mut dst, true).expect("stream");
                        assert!(step.produced <= dst.len());
                        if step.produced > 0 {
                            chunks.push(dst[..step.produced].to_vec());
                        } else {
                            assert!(step.consumed > 0 || step.done, "no progress");
                        }
                        rest = rest.split_at(step.consumed).1;
                        if step.done {
                            assert!(rest.is_empty(), "done with input left");
                            break;
                        }
                    }
                    continue;
                }
                while !rest.is_empty() {
                    let (now, later) = rest.split_at(max_in);
                    let n = codec.compress(now, &mut dst).expect("compress");
                    assert!(n <= codec.bound(now.len()), "output {n} exceeds bound");
                    assert!(n > 0, "non-empty input gave an empty chunk");
                    chunks.push(dst[..n].to_vec());
                    rest = later;
                }
            }
            Chunks {
                chunks,
                block_ends: C::BLOCK_ENDS_PER_RECORD,
            }
        }
    }
    spec.visit(V(pushes)).unwrap()
}

/// Decodes chunks in order through one decoder; each chunk must yield ≥ 1
/// byte where the codec promises it (not lz4's: its decoder reads a block
/// across records).
pub fn decode_chunks(spec: &CodecSpec, chunks: &Chunks) -> Vec<u8> {
    let mut dec = AnyDecoder::for_id(spec.id()).unwrap();
    let mut out = Vec::new();
    for u in &chunks.chunks {
        let n = dec.decompress(u, &mut out, usize::MAX).expect("decompress");
        assert!(
            n > 0 || !chunks.block_ends,
            "{spec}: a chunk decoded to nothing"
        );
    }
    out
}

pub fn roundtrip(spec: &CodecSpec, pushes: &[(Vec<u8>, Vec<u8>)]) -> Chunks {
    let chunks = compress_pushes(spec, pushes);
    let want: Vec<u8> = pushes
        .iter()
        .flat_map(|(a, b)| a.iter().chain(b))
        .copied()
        .collect();
    let got = decode_chunks(spec, &chunks);
    assert!(
        got == want,
        "{spec}: round trip differs ({} vs {} bytes)",
        got.len(),
        want.len()
    );
    chunks
}

/// Cuts `data` into pushes of `push` bytes, each split in two at `wrap_at`
/// (mod its length), as a wrapping ring would hand them over.
pub fn ring_pushes(data: &[u8], push: usize, wrap_at: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    data.chunks(push.max(1))
        .map(|c| {
            let k = wrap_at % (c.len() + 1);
            (c[..k].to_vec(), c[k..].to_vec())
        })
        .collect()
}
