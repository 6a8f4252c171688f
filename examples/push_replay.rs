//! Replays the ring data of a perf.data through one push path once, to
//! /dev/null — small enough to run under `valgrind --tool=dhat --mode=copy`
//! (benches/dhat_copies.sh), which sees every memcpy, libzstd's included.
//!
//! cargo run --release --example push_replay -- serial|async CODEC fused|layered FILE

use std::fs::File;

use perfz::codecs::{Codec, CodecSpec, CodecVisitor, Input};
use perfz::format::writer::FileWriter;
use perfz::format::{Attr, AttrEntry};
use perfz::push::{AsyncSink, CopyMeter, Pusher, SerialSink, Sink, ThreadBackend};
use perfz::replay::{pushes, ring_stream};

struct Run {
    stream: Vec<u8>,
    async_: bool,
    layered: bool,
}

fn pass<C: Codec, S: Sink>(
    mut p: Pusher<C, S, CopyMeter>,
    stream: &[u8],
    layered: bool,
) -> perfz::push::Copies {
    let mut staging = Vec::new();
    for region in pushes(stream, 256 * 1024) {
        if layered {
            staging.clear();
            staging.extend_from_slice(region.first);
            staging.extend_from_slice(region.second);
            p.meter.0.memcpy_bytes += staging.len() as u64;
            p.push(Input::one(&staging)).unwrap();
        } else {
            p.push(region).unwrap();
        }
    }
    p.meter.0
}

impl CodecVisitor for Run {
    type Output = ();
    fn visit<C: Codec + Send + 'static>(self, codec: C) {
        let f = File::options().write(true).open("/dev/null").unwrap();
        let w = FileWriter::new(
            f,
            &[AttrEntry {
                attr: Attr::new(),
                ids: vec![1],
                name: None,
            }],
        )
        .unwrap();
        let copies = if self.async_ {
            // The thread backend: valgrind does not model io_uring.
            let b = ThreadBackend::new(w.get_ref()).unwrap();
            pass(
                Pusher::new(codec, AsyncSink::new(w, b, 1, 256 * 1024)),
                &self.stream,
                self.layered,
            )
        } else {
            pass(
                Pusher::new(codec, SerialSink::new(w)),
                &self.stream,
                self.layered,
            )
        };
        println!(
            "ring_bytes={} memcpy_bytes={} codec_in_bytes={} written_bytes={}",
            copies.ring_bytes, copies.memcpy_bytes, copies.codec_in_bytes, copies.written_bytes
        );
    }
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 5 {
        eprintln!("usage: push_replay serial|async CODEC fused|layered FILE");
        std::process::exit(2);
    }
    let stream = ring_stream(std::path::Path::new(&a[4])).expect("a readable perf.data");
    let spec: CodecSpec = a[2].parse().expect("a codec spec");
    spec.visit(Run {
        stream,
        async_: a[1] == "async",
        layered: a[3] == "layered",
    })
    .unwrap();
}
