//! The push path, measured: copies per trace byte and throughput for
//! {serial, async} × {none, zstd:1, zstd:3, zstd:1 one-shot, lz4, snappy} ×
//! {fused, layered}, with the baselines the targets are stated against
//! (memcpy of the same regions; the codec alone on the same pieces).
//!
//! The stream is the ring data of the perf 6.1 fixtures (real records:
//! samples with call chains, mmaps, comms, switches), repeated to 8 MiB,
//! varied per repetition so no
//! window spans the repeats (`replay::varied_stream`), pushed in 256 KiB regions that end at records and wrap every third push.
//! Output goes to /dev/null so the disk is not what is measured.
//!
//! `cargo bench --bench push` (the copy table is printed first).
//! The layered variant exists only here: it copies each region into a staging
//! buffer first and then compresses that — the design perf rejected.

use std::fs::File;
use std::path::Path;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use perfz::codecs::{Codec, CodecSpec, CodecVisitor, Input, MAX_RECORD_PAYLOAD};
use perfz::format::writer::FileWriter;
use perfz::format::Attr;
use perfz::format::AttrEntry;
use perfz::push::compressor::Compressor;
use perfz::push::{
    AsyncSink, Copies, CopyMeter, Meter, NoMeter, Pusher, SerialSink, Sink, UringBackend,
};
use perfz::{pushes, ring_stream};

const PUSH: usize = 256 * 1024;
const SPECS: &[&str] = &[
    "none",
    "zstd:1",
    "zstd:3",
    "zstd:1,oneshot",
    "lz4",
    "snappy",
];

fn stream() -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/perf61");
    let mut base = Vec::new();
    for f in [
        "z3-wrap-cmd.data",
        "z-sysw-switch.data",
        "z-2events-cmd.data",
        "plain-sysw.data",
        "z1-cmd.data",
    ] {
        base.extend(ring_stream(&dir.join(f)).expect("fixtures beside the checkout"));
    }
    perfz::varied_stream(&base, 8 << 20)
}

fn dev_null() -> FileWriter<File> {
    let f = File::options().write(true).open("/dev/null").unwrap();
    FileWriter::new(
        f,
        &[AttrEntry {
            attr: Attr::new(),
            ids: vec![1],
            name: None,
        }],
    )
    .unwrap()
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Fused,
    Layered,
}

/// One pass of the whole stream through a pusher; the layered mode stages
/// each region in `staging` first (and counts that copy).
fn pass<C: Codec, S: Sink, M: Meter>(
    p: &mut Pusher<C, S, M>,
    stream: &[u8],
    mode: Mode,
    staging: &mut Vec<u8>,
) {
    for region in pushes(stream, PUSH) {
        match mode {
            Mode::Fused => p.push(region).unwrap(),
            Mode::Layered => {
                staging.clear();
                staging.extend_from_slice(region.first);
                staging.extend_from_slice(region.second);
                p.meter.copied(staging.len());
                p.push(Input::one(staging)).unwrap();
            }
        }
    }
}

struct Bench<'a> {
    c: &'a mut Criterion,
    stream: &'a [u8],
    name: &'a str,
    table: &'a mut Vec<(String, Copies)>,
}

impl CodecVisitor for Bench<'_> {
    type Output = ();
    fn visit<C: Codec + Send + 'static>(self, codec: C) {
        let spec: CodecSpec = self.name.parse().unwrap();
        let mut g = self.c.benchmark_group("push");
        g.throughput(Throughput::Bytes(self.stream.len() as u64));
        // The codec alone on the same pieces: the 95 % target's baseline.
        let mut alone = spec_codec::<C>(&spec);
        let mut dst = vec![0u8; MAX_RECORD_PAYLOAD];
        let comp = Compressor::new(spec_codec::<C>(&spec));
        g.bench_function(BenchmarkId::new("codec-alone", self.name), |b| {
            b.iter(|| {
                let mut n = 0;
                for region in pushes(self.stream, PUSH) {
                    let mut rest = region;
                    while !rest.is_empty() {
                        let (now, later) = comp.split(rest);
                        n += alone.compress(now, &mut dst).unwrap();
                        rest = later;
                    }
                }
                n
            })
        });
        drop(codec);
        let mut staging = Vec::with_capacity(PUSH + 65536);
        for mode in [Mode::Fused, Mode::Layered] {
            for sink in ["serial", "async"] {
                let id = format!("{sink}/{mode:?}/{}", self.name).to_lowercase();
                // Copies, once, with the meter on.
                let copies = match sink {
                    "serial" => {
                        let mut p = Pusher::<C, _, CopyMeter>::new(
                            spec_codec::<C>(&spec),
                            SerialSink::new(dev_null()),
                        );
                        pass(&mut p, self.stream, mode, &mut staging);
                        p.meter.0
                    }
                    _ => {
                        let w = dev_null();
                        let b = UringBackend::new(w.get_ref()).unwrap();
                        let mut p = Pusher::<C, _, CopyMeter>::new(
                            spec_codec::<C>(&spec),
                            AsyncSink::new(w, b, 2, PUSH),
                        );
                        pass(&mut p, self.stream, mode, &mut staging);
                        p.meter.0
                    }
                };
                self.table.push((id.clone(), copies));
                // Throughput, with the meter off (a type: it compiles away).
                match sink {
                    "serial" => {
                        let mut p = Pusher::<C, _, NoMeter>::new(
                            spec_codec::<C>(&spec),
                            SerialSink::new(dev_null()),
                        );
                        g.bench_function(&id, |b| {
                            b.iter(|| pass(&mut p, self.stream, mode, &mut staging))
                        });
                    }
                    _ => {
                        let w = dev_null();
                        let bk = UringBackend::new(w.get_ref()).unwrap();
                        let mut p = Pusher::<C, _, NoMeter>::new(
                            spec_codec::<C>(&spec),
                            AsyncSink::new(w, bk, 2, PUSH),
                        );
                        g.bench_function(&id, |b| {
                            b.iter(|| pass(&mut p, self.stream, mode, &mut staging))
                        });
                    }
                }
            }
        }
        g.finish();
    }
}

/// A fresh codec of type C for `spec` (the visitor gives one; benches need more).
fn spec_codec<C: Codec + 'static>(spec: &CodecSpec) -> C {
    struct Make<C>(std::marker::PhantomData<C>);
    impl<C: Codec + 'static> CodecVisitor for Make<C> {
        type Output = C;
        fn visit<D: Codec + Send + 'static>(self, codec: D) -> C {
            let any: Box<dyn std::any::Any> = Box::new(codec);
            *any.downcast::<C>().expect("same spec, same codec type")
        }
    }
    spec.visit(Make::<C>(std::marker::PhantomData)).unwrap()
}

fn push_paths(c: &mut Criterion) {
    let stream = stream();
    let mut g = c.benchmark_group("push");
    g.throughput(Throughput::Bytes(stream.len() as u64));
    let mut dst = vec![0u8; PUSH + 65536];
    g.bench_function("memcpy", |b| {
        b.iter(|| {
            for region in pushes(&stream, PUSH) {
                dst[..region.first.len()].copy_from_slice(region.first);
                dst[region.first.len()..region.len()].copy_from_slice(region.second);
                std::hint::black_box(&dst);
            }
        })
    });
    g.finish();
    let mut table = Vec::new();
    for name in SPECS {
        let spec: CodecSpec = name.parse().unwrap();
        spec.visit(Bench {
            c,
            stream: &stream,
            name,
            table: &mut table,
        })
        .unwrap();
    }
    println!("\ncopies per trace byte (memcpy by our code / ring bytes):");
    for (id, cp) in &table {
        println!(
            "  {id:<32} {:.2}  (ring {} B, memcpy {} B, codec in {} B)",
            cp.copies_per_byte(),
            cp.ring_bytes,
            cp.memcpy_bytes,
            cp.codec_in_bytes
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(std::time::Duration::from_secs(2)).warm_up_time(std::time::Duration::from_millis(500));
    targets = push_paths
}
criterion_main!(benches);
