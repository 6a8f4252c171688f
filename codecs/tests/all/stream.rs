//! Output-driven records (`Codec::stream`, streaming zstd): every record a
//! push makes decodes to at least one byte given the records before it, even
//! when the data does not compress (the block size cap), and a push's
//! records decode to exactly the push.

use crate::util::*;
use perfz_codecs::{AnyDecoder, Codec, CodecSpec, Decoder, Input, ZstdCodec, MAX_RECORD_PAYLOAD};

fn records_of(codec: &mut ZstdCodec, push: Input<'_>) -> Vec<Vec<u8>> {
    let mut dst = vec![0u8; MAX_RECORD_PAYLOAD];
    let mut out = Vec::new();
    let mut rest = push;
    loop {
        let step = codec.stream(rest, &mut dst, true).unwrap();
        if step.produced > 0 {
            out.push(dst[..step.produced].to_vec());
        }
        rest = rest.split_at(step.consumed).1;
        if step.done {
            return out;
        }
    }
}

#[test]
fn every_record_decodes_to_something_at_any_ratio() {
    for level in ["zstd:-5", "zstd:1", "zstd:3", "zstd:19"] {
        let spec: CodecSpec = level.parse().unwrap();
        let CodecSpec::Zstd(p) = spec else {
            unreachable!()
        };
        let mut codec = ZstdCodec::new(&p).unwrap();
        let mut dec = AnyDecoder::for_id(spec.id()).unwrap();
        // Incompressible, then very compressible, then perf-like: pushes of
        // 1 MiB that wrap at odd points.
        let data = [
            random_bytes(1 << 20, 7),
            vec![0u8; 1 << 20],
            perf_like(1 << 20, 3),
        ];
        for (i, d) in data.iter().enumerate() {
            let k = 333_333 * (i + 1) % d.len();
            let recs = records_of(&mut codec, Input::two(&d[..k], &d[k..]));
            let mut got = Vec::new();
            for (j, r) in recs.iter().enumerate() {
                assert!(r.len() <= MAX_RECORD_PAYLOAD);
                let n = dec.decompress(r, &mut got, usize::MAX).unwrap();
                assert!(
                    n > 0,
                    "{level} data {i}: record {j} of {} decodes to nothing",
                    recs.len()
                );
            }
            assert_eq!(&got, d, "{level} data {i}");
        }
    }
}

#[test]
fn a_compressible_push_makes_few_records() {
    // Records are cut by output: about one per 64 KiB of *output*, where the
    // old input-driven cut made one per 64 KiB of input (64 here).
    let p = match "zstd:1".parse::<CodecSpec>().unwrap() {
        CodecSpec::Zstd(p) => p,
        _ => unreachable!(),
    };
    let mut codec = ZstdCodec::new(&p).unwrap();
    let d = perf_like(4 << 20, 11);
    let recs = records_of(&mut codec, Input::one(&d));
    let out: usize = recs.iter().map(Vec::len).sum();
    assert!(out < d.len() / 4, "compressible");
    assert!(
        recs.len() <= out / 60_000 + 2,
        "{} records for {out} bytes of output",
        recs.len()
    );
}

#[test]
fn a_frame_ended_at_a_flush_lets_what_follows_decode_alone() {
    let spec: CodecSpec = "zstd:1".parse().unwrap();
    let CodecSpec::Zstd(p) = spec else {
        unreachable!()
    };
    let mut codec = ZstdCodec::new(&p).unwrap();
    let pushes = [
        perf_like(200_000, 1),
        perf_like(300_000, 2),
        perf_like(100_000, 3),
    ];
    let first = records_of(&mut codec, Input::one(&pushes[0]));
    codec.end_frame_at_flush();
    let second = records_of(&mut codec, Input::one(&pushes[1]));
    let third = records_of(&mut codec, Input::one(&pushes[2]));
    // One decoder reads all three in order, every record giving bytes.
    let mut dec = AnyDecoder::for_id(spec.id()).unwrap();
    let mut got = Vec::new();
    for r in first.iter().chain(&second).chain(&third) {
        assert!(dec.decompress(r, &mut got, usize::MAX).unwrap() > 0);
    }
    assert_eq!(got, pushes.concat());
    // The third push starts a new frame: it decodes without the others.
    let mut fresh = AnyDecoder::for_id(spec.id()).unwrap();
    let mut alone = Vec::new();
    for r in &third {
        fresh.decompress(r, &mut alone, usize::MAX).unwrap();
    }
    assert_eq!(alone, pushes[2]);
    // The second does not (it continues the first frame).
    let mut fresh = AnyDecoder::for_id(spec.id()).unwrap();
    let mut out = Vec::new();
    assert!(second
        .iter()
        .any(|r| fresh.decompress(r, &mut out, usize::MAX).is_err()));
}
