//! Question: do arbitrary valid records, written through the writer with an
//! arbitrary codec and arbitrary push sizes (records cut anywhere, pushes that
//! wrap), read back identical?
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use perfz::codecs::{Codec, CodecSpec, CodecVisitor, Input};
use perfz::push::compressor::Compressor;
use perfz::format::writer::{empty_record, FileWriter};
use perfz::format::{Attr, AttrEntry, FeatureSet, PerfReader, RecordType};

#[derive(Debug, Arbitrary)]
struct Case {
    codec: u8,
    level: i8,
    pushes: Vec<(u16, u16)>,
    records: Vec<(u8, u16, Vec<u8>)>,
}

const TYPES: [u32; 9] = [1, 2, 3, 4, 7, 9, 10, 13, 15];

struct W<'a> {
    stream: &'a [u8],
    pushes: &'a [(u16, u16)],
}

impl CodecVisitor for W<'_> {
    type Output = Vec<u8>;
    fn visit<C: Codec + Send + 'static>(self, codec: C) -> Vec<u8> {
        let mut w = FileWriter::new(
            Cursor::new(Vec::new()),
            &[AttrEntry {
                attr: Attr::new(),
                ids: vec![1],
                name: None,
            }],
        )
        .unwrap();
        let mut comp = Compressor::new(codec);
        let (mut at, mut i) = (0, 0);
        while at < self.stream.len() {
            let (len, wrap) = self
                .pushes
                .get(i % self.pushes.len().max(1))
                .copied()
                .unwrap_or((4096, 0));
            let end = (at + len.max(1) as usize).min(self.stream.len());
            let chunk = &self.stream[at..end];
            let k = wrap as usize % (chunk.len() + 1);
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

fuzz_target!(|case: Case| {
    let spec = match case.codec % 5 {
        0 => format!("zstd:{}", (case.level % 20).clamp(-5, 19).max(1)),
        1 => "lz4".to_string(),
        2 => "snappy".to_string(),
        3 => "zstd:1,oneshot".to_string(),
        _ => format!("zstd:{}", -((case.level as i32).abs() % 7) - 1),
    };
    let spec: CodecSpec = spec.parse().unwrap();
    let mut stream = Vec::new();
    let mut sizes = Vec::new();
    for (t, misc, body) in case.records.iter().take(200) {
        let body_len = (body.len().min(4096) + 7) / 8 * 8;
        let size = 8 + body_len;
        stream.extend_from_slice(&TYPES[*t as usize % TYPES.len()].to_le_bytes());
        stream.extend_from_slice(&misc.to_le_bytes());
        stream.extend_from_slice(&(size as u16).to_le_bytes());
        let start = stream.len();
        stream.extend_from_slice(&body[..body.len().min(4096)]);
        stream.resize(start + body_len, 0);
        sizes.push(size);
    }
    let bytes = spec
        .visit(W {
            stream: &stream,
            pushes: &case.pushes,
        })
        .unwrap();
    let mut r = PerfReader::from_bytes(bytes).unwrap();
    let mut back = Vec::new();
    while let Some((rec, _)) = r.next_record().unwrap() {
        if rec.nested {
            back.extend_from_slice(rec.bytes);
        }
    }
    assert!(
        back == stream,
        "{spec}: records differ after the round trip"
    );
});
