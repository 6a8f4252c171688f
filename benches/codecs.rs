//! Codec throughput on a perf-shaped stream, pushed in ring-sized regions that
//! wrap, through the same `Codec::compress` the recorder calls. A plain memcpy
//! of the same regions is the baseline in the same run.
//!
//! `cargo bench --bench codecs`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use perfz::codecs::{Codec, CodecSpec, CodecVisitor, Input, MAX_RECORD_PAYLOAD};

/// A stream shaped like ring-buffer content: SAMPLE records with callchains.
fn perf_like(n: usize) -> Vec<u8> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let frames: Vec<u64> = (0..64).map(|i| 0x5555_5555_0000 + i * 0x137).collect();
    let mut out = Vec::with_capacity(n + 1024);
    let mut time = 1u64 << 40;
    while out.len() < n {
        let depth = 3 + (rnd() % 20) as usize;
        let size = 56 + 8 * depth;
        out.extend_from_slice(&9u32.to_le_bytes());
        out.extend_from_slice(&2u16.to_le_bytes());
        out.extend_from_slice(&(size as u16).to_le_bytes());
        out.extend_from_slice(&frames[(rnd() % 64) as usize].to_le_bytes());
        out.extend_from_slice(&[0x92, 0x10, 0, 0, 0x92, 0x10, 0, 0]);
        time += 1_000_000 + rnd() % 4096;
        out.extend_from_slice(&time.to_le_bytes());
        out.extend_from_slice(&1_001_001u64.to_le_bytes());
        out.extend_from_slice(&(depth as u64).to_le_bytes());
        for _ in 0..depth {
            out.extend_from_slice(&frames[(rnd() % 64) as usize].to_le_bytes());
        }
    }
    out.truncate(n);
    out
}

const PUSH: usize = 256 * 1024;

struct Bench<'a> {
    c: &'a mut Criterion,
    data: &'a [u8],
    name: String,
}

impl CodecVisitor for Bench<'_> {
    type Output = ();
    fn visit<C: Codec + Send + 'static>(self, mut codec: C) {
        let max_in = codec.max_input(MAX_RECORD_PAYLOAD);
        let mut dst = vec![0u8; MAX_RECORD_PAYLOAD];
        let mut g = self.c.benchmark_group("codec_push");
        g.throughput(Throughput::Bytes(self.data.len() as u64));
        g.bench_function(BenchmarkId::from_parameter(&self.name), |b| {
            b.iter(|| {
                let mut out = 0usize;
                for (i, push) in self.data.chunks(PUSH).enumerate() {
                    let k = (i * 40_961) % push.len();
                    let mut rest = Input::two(&push[k..], &push[..k]);
                    while !rest.is_empty() {
                        let (now, later) = rest.split_at(max_in);
                        out += codec.compress(now, &mut dst).unwrap();
                        rest = later;
                    }
                }
                out
            })
        });
        g.finish();
    }
}

fn codecs(c: &mut Criterion) {
    let data = perf_like(8 << 20);
    let mut g = c.benchmark_group("codec_push");
    g.throughput(Throughput::Bytes(data.len() as u64));
    let mut dst = vec![0u8; PUSH];
    g.bench_function("memcpy", |b| {
        b.iter(|| {
            for push in data.chunks(PUSH) {
                dst[..push.len()].copy_from_slice(push);
                std::hint::black_box(&dst);
            }
        })
    });
    g.finish();
    for spec in ["none", "zstd:-5", "zstd:1", "zstd:3", "lz4", "snappy"] {
        let parsed: CodecSpec = spec.parse().unwrap();
        parsed
            .visit(Bench {
                c,
                data: &data,
                name: spec.to_string(),
            })
            .unwrap();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(std::time::Duration::from_secs(3));
    targets = codecs
}
criterion_main!(benches);
