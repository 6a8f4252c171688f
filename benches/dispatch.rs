//! Generic vs `dyn`: the same push loop with the codec as a type parameter and
//! as a trait object, at 4 KiB and 64 KiB pushes. `Codec` itself is not
//! object-safe (it has associated consts), so the `dyn` side goes through a
//! one-method trait implemented for every codec — exactly what a trait-object
//! design would have.
//!
//! `cargo bench --bench dispatch`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use perfz::codecs::{Codec, CodecSpec, CodecVisitor, Error, Input, MAX_RECORD_PAYLOAD};
use std::path::Path;

trait DynCodec {
    fn compress(&mut self, input: Input<'_>, dst: &mut [u8]) -> Result<usize, Error>;
}

impl<C: Codec> DynCodec for C {
    fn compress(&mut self, input: Input<'_>, dst: &mut [u8]) -> Result<usize, Error> {
        Codec::compress(self, input, dst)
    }
}

#[inline(never)]
fn generic_loop<C: Codec>(codec: &mut C, stream: &[u8], push: usize, dst: &mut [u8]) -> usize {
    stream
        .chunks(push)
        .map(|c| codec.compress(Input::one(c), dst).unwrap())
        .sum()
}

#[inline(never)]
fn dyn_loop(codec: &mut dyn DynCodec, stream: &[u8], push: usize, dst: &mut [u8]) -> usize {
    stream
        .chunks(push)
        .map(|c| codec.compress(Input::one(c), dst).unwrap())
        .sum()
}

struct V<'a> {
    c: &'a mut Criterion,
    stream: &'a [u8],
    name: &'a str,
}

impl CodecVisitor for V<'_> {
    type Output = ();
    fn visit<C: Codec + Send + 'static>(self, mut codec: C) {
        let mut g = self.c.benchmark_group("dispatch");
        g.throughput(Throughput::Bytes(self.stream.len() as u64));
        let mut dst = vec![0u8; MAX_RECORD_PAYLOAD + 1024];
        for push in [4096usize, 60_000] {
            g.bench_function(
                BenchmarkId::new(format!("generic/{push}"), self.name),
                |b| b.iter(|| generic_loop(&mut codec, self.stream, push, &mut dst)),
            );
            let mut boxed = spec_boxed(self.name);
            g.bench_function(BenchmarkId::new(format!("dyn/{push}"), self.name), |b| {
                b.iter(|| dyn_loop(boxed.as_mut(), self.stream, push, &mut dst))
            });
        }
        g.finish();
    }
}

/// A boxed codec of the same spec, built through the same visitor.
fn spec_boxed(name: &str) -> Box<dyn DynCodec> {
    struct B;
    impl CodecVisitor for B {
        type Output = Box<dyn DynCodec>;
        fn visit<C: Codec + Send + 'static>(self, codec: C) -> Box<dyn DynCodec> {
            Box::new(codec)
        }
    }
    name.parse::<CodecSpec>().unwrap().visit(B).unwrap()
}

fn dispatch(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/perf61");
    let base = perfz::ring_stream(&dir.join("z3-wrap-cmd.data")).unwrap();
    let stream = perfz::varied_stream(&base, 4 << 20);
    for name in ["none", "lz4", "zstd:1"] {
        name.parse::<CodecSpec>()
            .unwrap()
            .visit(V {
                c,
                stream: &stream,
                name,
            })
            .unwrap();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(std::time::Duration::from_secs(2)).warm_up_time(std::time::Duration::from_millis(500));
    targets = dispatch
}
criterion_main!(benches);
