//! proptest: random streams of valid records, written through the writer with
//! every codec and random push sizes (records cut anywhere, pushes that wrap),
//! read back identical, samples decoded to the values that went in.

use crate::common;

use std::io::Cursor;

use perfz::codecs::{Codec, CodecSpec, CodecVisitor, Input};
use perfz::format::attr::sample_type as st;
use perfz::format::writer::{empty_record, FileWriter, SKIP_RECORD};
use perfz::format::{Attr, AttrEntry, CompressedFormat, FeatureSet, PerfReader, RecordType};
use perfz::push::compressor::Compressor;
use perfz::push::{AsyncSink, Backend, Pusher, SerialSink, Sink, ThreadBackend, UringBackend};
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct SampleVals {
    ip: u64,
    pid: u32,
    tid: u32,
    time: u64,
    period: u64,
    callchain: Vec<u64>,
}

#[derive(Clone, Debug)]
enum Rec {
    Sample(SampleVals),
    Other {
        type_: u32,
        misc: u16,
        body: Vec<u8>,
    },
}

const SAMPLE_BITS: [u64; 7] = [
    st::IP,
    st::TID,
    st::TIME,
    st::ID,
    st::CPU,
    st::PERIOD,
    st::CALLCHAIN,
];

fn encode(r: &Rec, sample_type: u64) -> Vec<u8> {
    let mut body = Vec::new();
    let (t, misc) = match r {
        Rec::Sample(s) => {
            let mut put = |bit: u64, bytes: &[u8]| {
                if sample_type & bit != 0 {
                    body.extend_from_slice(bytes);
                }
            };
            put(st::IP, &s.ip.to_le_bytes());
            put(
                st::TID,
                &[s.pid.to_le_bytes(), s.tid.to_le_bytes()].concat(),
            );
            put(st::TIME, &s.time.to_le_bytes());
            put(st::ID, &7u64.to_le_bytes());
            put(st::CPU, &[1, 0, 0, 0, 0, 0, 0, 0]);
            put(st::PERIOD, &s.period.to_le_bytes());
            if sample_type & st::CALLCHAIN != 0 {
                body.extend_from_slice(&(s.callchain.len() as u64).to_le_bytes());
                for ip in &s.callchain {
                    body.extend_from_slice(&ip.to_le_bytes());
                }
            }
            (9u32, 2u16)
        }
        Rec::Other {
            type_,
            misc,
            body: b,
        } => {
            body.extend_from_slice(b);
            (*type_, *misc)
        }
    };
    let size = 8 + body.len();
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(&t.to_le_bytes());
    out.extend_from_slice(&misc.to_le_bytes());
    out.extend_from_slice(&(size as u16).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

fn record() -> impl Strategy<Value = Rec> {
    prop_oneof![
        4 => (any::<u64>(), any::<u32>(), any::<u32>(), any::<u64>(), any::<u64>(), prop::collection::vec(any::<u64>(), 0..200))
            .prop_map(|(ip, pid, tid, time, period, callchain)| Rec::Sample(SampleVals { ip, pid, tid, time, period, callchain })),
        // Kernel record types we may see in a ring: MMAP, LOST, COMM, EXIT, FORK,
        // MMAP2, LOST_SAMPLES, SWITCH, SWITCH_CPU_WIDE; bodies up to ~64 KiB.
        1 => (prop::sample::select(vec![1u32, 2, 3, 4, 7, 10, 13, 14, 15]), any::<u16>(), 0..8190usize, any::<u8>())
            .prop_map(|(type_, misc, words, fill)| Rec::Other { type_, misc, body: vec![fill; words * 8] }),
    ]
}

fn sample_type() -> impl Strategy<Value = u64> {
    prop::collection::vec(any::<bool>(), SAMPLE_BITS.len()).prop_map(|on| {
        SAMPLE_BITS
            .iter()
            .zip(on)
            .filter(|(_, b)| *b)
            .map(|(b, _)| *b)
            .sum::<u64>()
            | st::IP
    })
}

struct Write<'a> {
    stream: &'a [u8],
    pushes: &'a [(usize, usize)],
    attr: AttrEntry,
}

impl CodecVisitor for Write<'_> {
    type Output = Vec<u8>;
    fn visit<C: Codec + Send + 'static>(self, codec: C) -> Vec<u8> {
        let mut w =
            FileWriter::new(Cursor::new(Vec::new()), std::slice::from_ref(&self.attr)).unwrap();
        let mut comp = Compressor::new(codec);
        let (mut at, mut i) = (0, 0);
        while at < self.stream.len() {
            let (len, wrap) = self.pushes[i % self.pushes.len()];
            let end = (at + len).min(self.stream.len());
            let chunk = &self.stream[at..end];
            let k = wrap % (chunk.len() + 1);
            comp.push(Input::two(&chunk[..k], &chunk[k..]), |r| w.write_records(r))
                .unwrap();
            w.write_records(&empty_record(RecordType::FINISHED_ROUND))
                .unwrap();
            at = end;
            i += 1;
        }
        let mut f = FeatureSet::default();
        f.set_compressed(comp.info());
        w.finish(&f).unwrap().into_inner()
    }
}

/// Which sink the recorder's path writes through.
#[derive(Clone, Copy, Debug)]
enum SinkKind {
    Serial,
    AsyncThread,
    AsyncUring,
}

/// The recorder's own path: `Pusher` over a real file, pushes that end at
/// records (a ring's head always does) and wrap at a random point.
struct RecorderPath<'a> {
    pushes: &'a [Input<'a>],
    attr: AttrEntry,
    sink: SinkKind,
    path: &'a std::path::Path,
    /// As the recorder runs it: pushes end without a flush where the codec
    /// can hold, rounds end with `end_round`, one flush at the end.
    hold: bool,
    /// The record type compressed bytes go in.
    format: CompressedFormat,
    /// A checkpoint (a loan of the output) after every this many pushes
    /// (0: none), as `--checkpoint` and the start make them.
    checkpoint_every: usize,
}

/// What the end appends to the output handed back, after every push
/// landed: LOST_SAMPLES (`u64 lost`), as the recorder's end does where
/// samples were lost. Appended, not pushed: after the async sink's
/// positioned writes it went where the last checkpoint had left the
/// file's cursor (issue 54).
const TAIL: [u8; 16] = [13, 0, 0, 0, 0, 0, 16, 0, 5, 0, 0, 0, 0, 0, 0, 0];

fn push_all<C: Codec, S: Sink>(
    p: &mut Pusher<C, S>,
    pushes: &[Input<'_>],
    hold: bool,
    checkpoint_every: usize,
) {
    p.set_hold(hold);
    for (i, &region) in pushes.iter().enumerate() {
        if checkpoint_every > 0 && i % checkpoint_every == 0 {
            p.flush().unwrap();
            let f = FeatureSet::default().with_compressed(p.compressed_info());
            let out = p.sink_mut().lend().unwrap().unwrap();
            out.checkpoint(&f).unwrap().unwrap();
        }
        p.push(region).unwrap();
        if hold {
            p.end_round().unwrap();
        } else {
            p.write_plain(&empty_record(RecordType::FINISHED_ROUND))
                .unwrap();
        }
    }
    p.flush().unwrap();
}

/// Hands the output back (every write landed), appends [`TAIL`] as the
/// recorder's end does, and finishes it with HEADER_COMPRESSED.
fn finish_with_tail<C: Codec, S: Sink>(p: Pusher<C, S>) {
    let f = FeatureSet::default().with_compressed(p.compressed_info());
    let mut out = p.into_sink().hand_over(None).landed().unwrap();
    out.write_records(&TAIL).unwrap();
    out.finish(&f).unwrap();
}

/// Every COMPRESSED record of a zstd file decodes, in order through one
/// decoder (the `zstd` crate's, not ours), to at least one byte and to no
/// more than the mmap_len its header declares (perf 6.1's two rules).
fn zstd_records_decode_within_mmap_len(path: &std::path::Path) -> Result<(), TestCaseError> {
    use zstd_oracle::stream::raw::{Decoder, InBuffer, Operation, OutBuffer};
    let mut r = PerfReader::open_raw(path).unwrap();
    let mmap_len = r.meta.compressed().map_or(0, |c| c.mmap_len as usize);
    let mut dec = Decoder::new().unwrap();
    let mut out = vec![0u8; 1 << 20];
    while let Some((rec, _)) = r.next_record().unwrap() {
        if !rec.header.type_.is_compressed() {
            continue;
        }
        let payload = if rec.header.type_ == RecordType::COMPRESSED {
            &rec.bytes[8..]
        } else {
            let n = u64::from_le_bytes(rec.bytes[8..16].try_into().unwrap()) as usize;
            &rec.bytes[16..16 + n]
        };
        let mut i = InBuffer::around(payload);
        let mut n = 0;
        while i.pos < payload.len() {
            let mut o = OutBuffer::around(&mut out[..]);
            dec.run(&mut i, &mut o).unwrap();
            n += o.pos();
        }
        prop_assert!(n >= 1, "a record at {:#x} decodes to nothing", rec.offset);
        prop_assert!(
            n <= mmap_len,
            "a record decodes to {} > mmap_len {}",
            n,
            mmap_len
        );
    }
    Ok(())
}

impl CodecVisitor for RecorderPath<'_> {
    type Output = ();
    fn visit<C: Codec + Send + 'static>(self, codec: C) {
        let file = std::fs::File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(self.path)
            .unwrap();
        let w = FileWriter::new(file, std::slice::from_ref(&self.attr)).unwrap();
        let biggest = self.pushes.iter().map(|p| p.len()).max().unwrap_or(0);
        match self.sink {
            SinkKind::Serial => {
                let mut p = Pusher::<C, _>::with_format(codec, SerialSink::new(w), self.format);
                push_all(&mut p, self.pushes, self.hold, self.checkpoint_every);
                finish_with_tail(p);
            }
            SinkKind::AsyncThread => {
                let b = ThreadBackend::new(w.get_ref()).unwrap();
                self.push_async(codec, w, b, biggest);
            }
            SinkKind::AsyncUring => {
                let b = UringBackend::new(w.get_ref()).unwrap_or_else(|e| panic!("this test needs io_uring ({e}): allow io_uring_setup (seccomp profile, sysctl kernel.io_uring_disabled=0)"));
                self.push_async(codec, w, b, biggest);
            }
        }
    }
}

impl RecorderPath<'_> {
    /// The async sink over backend `b`: push, then finish the file.
    fn push_async<C: Codec, B: Into<Backend>>(
        &self,
        codec: C,
        w: FileWriter<std::fs::File>,
        b: B,
        biggest: usize,
    ) {
        let sink = AsyncSink::new(w, b, 2, biggest);
        let mut p = Pusher::<C, _>::with_format(codec, sink, self.format);
        push_all(&mut p, self.pushes, self.hold, self.checkpoint_every);
        finish_with_tail(p);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn the_recorder_path_writes_every_record_byte_exact(
        recs in prop::collection::vec(record(), 1..40),
        stype in sample_type(),
        cuts in prop::collection::vec((1..12usize, any::<usize>()), 1..8),
        checkpoint_every in 0..4usize,
    ) {
        let encoded: Vec<Vec<u8>> = recs.iter().map(|r| encode(r, stype)).collect();
        let stream = encoded.concat();
        // Pushes of a few whole records each, split at a random wrap point.
        let mut pushes = Vec::new();
        let (mut rec, mut at, mut i) = (0, 0, 0);
        while rec < encoded.len() {
            let (n, wrap) = cuts[i % cuts.len()];
            let end_rec = (rec + n).min(encoded.len());
            let len: usize = encoded[rec..end_rec].iter().map(Vec::len).sum();
            let chunk = &stream[at..at + len];
            let k = wrap % (len + 1);
            pushes.push(Input::two(&chunk[..k], &chunk[k..]));
            rec = end_rec;
            at += len;
            i += 1;
        }
        let mut attr = Attr::new();
        attr.set_u32(0, 1);
        attr.set_u64(24, stype);
        let attr = AttrEntry { attr, ids: vec![7], name: None };
        let dir = common::tempdir("props-recorder");
        let path = dir.join("r.data");
        // Every codec in COMPRESSED records, and in COMPRESSED2 records
        // (each checked from the file's bytes as a correct writer's).
        let compressed2 = ["zstd:1", "zstd:3", "zstd:1,oneshot", "lz4", "snappy"].map(|s| (s, CompressedFormat::Compressed2));
        let compressed = ["none", "zstd:1", "zstd:3", "zstd:1,oneshot", "lz4", "snappy"].map(|s| (s, CompressedFormat::Compressed));
        for (spec, format) in compressed.into_iter().chain(compressed2) {
            let spec: CodecSpec = spec.parse().unwrap();
            for (sink, hold) in [(SinkKind::Serial, false), (SinkKind::Serial, true), (SinkKind::AsyncThread, true), (SinkKind::AsyncUring, false)] {
                spec.visit(RecorderPath { pushes: &pushes, attr: attr.clone(), sink, path: &path, hold, format, checkpoint_every }).unwrap();
                if spec.id() == perfz::codecs::CodecId::ZSTD {
                    zstd_records_decode_within_mmap_len(&path)?;
                }
                if format == CompressedFormat::Compressed2 {
                    prop_assert!(!common::compressed2::written(&path).is_empty(), "{} {:?}", spec, sink);
                }
                let mut r = PerfReader::open(&path).unwrap();
                let mut n = 0;
                while let Some((rec, _)) = r.next_record().unwrap() {
                    if rec.header.type_ == RecordType::FINISHED_ROUND || rec.header.type_.is_compressed() || rec.header.type_ == SKIP_RECORD {
                        continue;
                    }
                    prop_assert!(n <= encoded.len(), "{} {:?}: more records than pushed", spec, sink);
                    let want = encoded.get(n).map_or(&TAIL[..], |e| &e[..]);
                    prop_assert_eq!(rec.bytes, want, "{} {:?}: record {} differs", spec, sink, n);
                    n += 1;
                }
                prop_assert_eq!(n, encoded.len() + 1, "{} {:?}: the pushed records and the tail", spec, sink);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn records_survive_every_codec_and_push_size(
        recs in prop::collection::vec(record(), 1..60),
        stype in sample_type(),
        pushes in prop::collection::vec((1..200_000usize, any::<usize>()), 1..6),
    ) {
        let encoded: Vec<Vec<u8>> = recs.iter().map(|r| encode(r, stype)).collect();
        let stream = encoded.concat();
        let mut attr = Attr::new();
        attr.set_u32(0, 1);
        attr.set_u64(24, stype);
        attr.set_u64(40, perfz::format::attr::flags::SAMPLE_ID_ALL);
        let attr = AttrEntry { attr, ids: vec![7], name: None };
        let dir = common::tempdir("props");
        for spec in ["zstd:1", "zstd:-3", "zstd:3,wlog=20", "lz4", "snappy"] {
            let spec: CodecSpec = spec.parse().unwrap();
            let bytes = spec.visit(Write { stream: &stream, pushes: &pushes, attr: attr.clone() }).unwrap();
            let path = dir.join("t.data");
            std::fs::write(&path, &bytes).unwrap();
            let mut r = PerfReader::open(&path).unwrap();
            let mut n = 0;
            while let Some((rec, meta)) = r.next_record().unwrap() {
                if !rec.nested {
                    continue;
                }
                prop_assert_eq!(rec.bytes, &encoded[n][..], "{}: record {} differs", spec, n);
                if let Rec::Sample(want) = &recs[n] {
                    let s = meta.parse_sample(&rec).unwrap().unwrap();
                    prop_assert_eq!(s.ip, Some(want.ip));
                    if stype & st::TID != 0 { prop_assert_eq!((s.pid, s.tid), (Some(want.pid), Some(want.tid))); }
                    if stype & st::TIME != 0 { prop_assert_eq!(s.time, Some(want.time)); }
                    if stype & st::PERIOD != 0 { prop_assert_eq!(s.period, Some(want.period)); }
                    if stype & st::CALLCHAIN != 0 { prop_assert_eq!(&s.callchain, &want.callchain); }
                }
                n += 1;
            }
            prop_assert_eq!(n, recs.len(), "{}", spec);
        }
    }
}

/// A recorder stopped before it flushed its codec (killed, or its writes
/// failed) leaves records whose data ends inside a perf record: the reader
/// reads every whole record before it, byte for byte, drops the cut-off
/// start and says how many bytes it dropped.
#[test]
fn a_record_cut_off_by_an_unflushed_end_is_dropped_and_counted() {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    // Records of an unknown type with random bodies: zstd output fills
    // record windows quickly, so records are sealed in the middle of perf
    // records without any flush.
    let recs: Vec<Vec<u8>> = (0..600)
        .map(|i| {
            let len = 8 + 8 * (1 + (i * 37) % 200);
            let mut r = vec![0u8; len];
            r[..4].copy_from_slice(&0x7000u32.to_le_bytes());
            r[6..8].copy_from_slice(&(len as u16).to_le_bytes());
            for b in &mut r[8..] {
                *b = rnd() as u8;
            }
            r
        })
        .collect();
    let stream = recs.concat();
    let mut attr = Attr::new();
    attr.set_u32(0, 1);
    attr.set_u64(24, st::IP);
    let attr = AttrEntry {
        attr,
        ids: vec![7],
        name: None,
    };
    let dir = common::tempdir("cut-off");
    let path = dir.join("cut.data");
    let file = std::fs::File::create(&path).unwrap();
    let w = FileWriter::new(file, std::slice::from_ref(&attr)).unwrap();
    let spec: CodecSpec = "zstd:1".parse().unwrap();
    let CodecSpec::Zstd(params) = spec else {
        unreachable!()
    };
    let mut p = Pusher::<_, _>::new(
        perfz::codecs::ZstdCodec::new(&params).unwrap(),
        SerialSink::new(w),
    );
    p.set_hold(true);
    for chunk in recs.chunks(50) {
        p.push(Input::one(&chunk.concat())).unwrap();
    }
    assert!(p.holds());
    // Finished without the flush the recorder's drain would make.
    let mut f = FeatureSet::default();
    f.set_compressed(p.compressed_info().unwrap());
    p.into_sink()
        .hand_over(None)
        .landed()
        .unwrap()
        .finish(&f)
        .unwrap();
    let mut r = PerfReader::open(&path).unwrap();
    let mut n = 0;
    while let Some((rec, _)) = r.next_record().unwrap() {
        if rec.nested {
            assert_eq!(rec.bytes, &recs[n][..], "record {n}");
            n += 1;
        }
    }
    assert!(
        n > 0 && n < recs.len(),
        "{n} of {} records read",
        recs.len()
    );
    let whole: usize = recs[..n].iter().map(Vec::len).sum();
    assert!(
        r.cut_off() > 0 && r.cut_off() < recs[n].len(),
        "cut off {}",
        r.cut_off()
    );
    assert!(whole + r.cut_off() < stream.len());
}
