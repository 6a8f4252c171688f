//! The serial and async push paths write the same bytes, for every codec and
//! both async backends, and count the copies the design promises.

use crate::common;

use std::fs::File;
use std::path::Path;

use common::*;
use perfz::codecs::{Codec, CodecSpec, CodecVisitor};
use perfz::format::writer::FileWriter;
use perfz::format::{AttrEntry, FeatureSet, PerfReader};
use perfz::push::{
    AsyncSink, Copies, CopyMeter, Pusher, SerialSink, Sink, ThreadBackend, UringBackend,
};
use perfz::{pushes, ring_stream};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Path_ {
    Serial,
    Uring(usize),
    Thread(usize),
}

struct Write<'a> {
    stream: &'a [u8],
    attrs: &'a [AttrEntry],
    out: &'a Path,
    path: Path_,
}

type Ran<S> = (S, Copies, Option<perfz::format::CompressedInfo>);

fn run<C: Codec, S: Sink>(codec: C, sink: S, stream: &[u8]) -> Ran<S> {
    let mut p = Pusher::<C, S, CopyMeter>::new(codec, sink);
    for region in pushes(stream, 200_000) {
        p.push(region).unwrap();
        p.write_plain(&perfz::format::writer::empty_record(
            perfz::format::RecordType::FINISHED_ROUND,
        ))
        .unwrap();
    }
    let info = p.compressed_info();
    let copies = p.meter.0;
    (p.into_sink(), copies, info)
}

impl CodecVisitor for Write<'_> {
    type Output = Copies;
    fn visit<C: Codec + Send + 'static>(self, codec: C) -> Copies {
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(self.out)
            .unwrap();
        let w = FileWriter::new(file, self.attrs).unwrap();
        let mut features = FeatureSet::default();
        let (copies, w) = match self.path {
            Path_::Serial => {
                let (mut s, c, info) = run(codec, SerialSink::new(w), self.stream);
                if let Some(i) = info {
                    features.set_compressed(i);
                }
                (c, s.hand_over(None).landed().unwrap())
            }
            Path_::Uring(n) => {
                let b = UringBackend::new(w.get_ref()).unwrap_or_else(|e| panic!("this test needs io_uring ({e}): allow io_uring_setup (seccomp profile, sysctl kernel.io_uring_disabled=0)"));
                let (mut s, c, info) = run(codec, AsyncSink::new(w, b, n, 512 << 10), self.stream);
                if let Some(i) = info {
                    features.set_compressed(i);
                }
                (c, s.hand_over(None).landed().unwrap())
            }
            Path_::Thread(n) => {
                let b = ThreadBackend::new(w.get_ref()).unwrap();
                let (mut s, c, info) = run(codec, AsyncSink::new(w, b, n, 512 << 10), self.stream);
                if let Some(i) = info {
                    features.set_compressed(i);
                }
                (c, s.hand_over(None).landed().unwrap())
            }
        };
        w.finish(&features).unwrap();
        copies
    }
}

#[test]
fn serial_and_async_write_identical_files() {
    let fx = fixture("z3-wrap-cmd");
    let stream = ring_stream(&fx).unwrap();
    assert!(stream.len() > 200_000);
    let attrs = PerfReader::open(&fx).unwrap().attrs.clone();
    let dir = tempdir("push-paths");
    for spec in ["none", "zstd:1", "zstd:3,oneshot", "lz4", "snappy"] {
        let spec: CodecSpec = spec.parse().unwrap();
        let mut files = Vec::new();
        for path in [
            Path_::Serial,
            Path_::Uring(1),
            Path_::Uring(4),
            Path_::Thread(2),
        ] {
            let out = dir.join(format!("{:?}.data", path));
            let copies = spec
                .visit(Write {
                    stream: &stream,
                    attrs: &attrs,
                    out: &out,
                    path,
                })
                .unwrap();
            assert_eq!(copies.ring_bytes, stream.len() as u64);
            // The design's promise: serial none copies nothing, async none
            // copies once, codec paths copy nothing of their own — but
            // streaming zstd's records, cut in the compressor's window,
            // which the async sink copies into its buffer (the compressed
            // bytes only).
            let want = match (spec.to_string().as_str(), path) {
                (_, Path_::Serial) => 0,
                ("none", _) => stream.len() as u64,
                // Written less the plain FINISHED_ROUNDs, one per push.
                ("zstd:1" | "lz4", _) => {
                    copies.written_bytes - 8 * pushes(&stream, 200_000).count() as u64
                }
                _ => 0,
            };
            assert_eq!(copies.memcpy_bytes, want, "{spec} {path:?}");
            files.push((path, std::fs::read(&out).unwrap()));
        }
        for (path, bytes) in &files[1..] {
            assert!(bytes == &files[0].1, "{spec}: {path:?} differs from serial");
        }
        // And what was written is the stream, record for record.
        let out = dir.join("Serial.data");
        let mut r = PerfReader::open(&out).unwrap();
        let mut back = Vec::new();
        while let Some((rec, _)) = r.next_record().unwrap() {
            if rec.header.type_.is_kernel() {
                back.extend_from_slice(rec.bytes);
            }
        }
        assert!(back == stream, "{spec}: the records read back differ");
    }
}

#[test]
fn record_with_aio_matches_perf() {
    require_recording();
    let dir = tempdir("rec-aio");
    let wl = workload();
    for (codec, aio) in [("zstd:1", "--aio"), ("none", "--aio=4"), ("lz4", "--aio=2")] {
        for backend in ["uring", "thread"] {
            let file = dir.join(format!("{}-{backend}.data", codec.replace(':', "")));
            let json = dir.join("s.json");
            perfz_ok(&[
                "record",
                "-g",
                "-q",
                aio,
                "--aio-backend",
                backend,
                "--codec",
                codec,
                "--stats-json",
                json.to_str().unwrap(),
                "-o",
                file.to_str().unwrap(),
                "--",
                wl.to_str().unwrap(),
                "0.3",
            ]);
            let s: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
            assert!(s["sink"].as_str().unwrap().starts_with("async"), "{s}");
            let n = samples(&file).len() as u64;
            assert_eq!(n, s["samples"].as_u64().unwrap(), "{codec} {backend}");
            let target = if codec == "lz4" {
                let z = dir.join("conv.data");
                recompress_zstd(&file, &z);
                z
            } else {
                file.clone()
            };
            assert_eq!(perf_sample_count(&perf(), &target), n, "{codec} {backend}");
        }
    }
}
