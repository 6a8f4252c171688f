//! Output-driven compression (`Codec::stream`, streaming zstd): what a
//! flush ends decodes, the output of what is taken between two flushes stays
//! within `bound` at any ratio (the record cutter, src/push/cutter.rs in
//! perfz, relies on it), and frames end where asked.

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

/// Bytes from a 64-symbol alphabet: zstd compresses them about 4:3, so a
/// 128 KiB block stays a compressed block larger than one record.
pub fn six_bit_bytes(n: usize, seed: u64) -> Vec<u8> {
    random_bytes(n, seed).iter().map(|b| b & 63).collect()
}

#[test]
fn output_between_flushes_stays_within_bound_at_any_ratio() {
    for level in ["zstd:-5", "zstd:1", "zstd:3", "zstd:19", "zstd:1,wlog=10"] {
        let spec: CodecSpec = level.parse().unwrap();
        let CodecSpec::Zstd(p) = spec else {
            unreachable!()
        };
        let mut codec = ZstdCodec::new(&p).unwrap();
        let mut dec = AnyDecoder::for_id(spec.id()).unwrap();
        let data = [
            random_bytes(400_000, 7),
            six_bit_bytes(400_000, 5),
            vec![0u8; 400_000],
            perf_like(400_000, 3),
        ];
        let mut dst = vec![0u8; 1 << 20];
        let mut got = Vec::new();
        for (i, d) in data.iter().enumerate() {
            // Flushes every `n` bytes taken, fed in pieces of 3 000.
            for n in [7usize, 1_000, 65_000, 131_054, 300_000] {
                let mut at = 0;
                while at < d.len() {
                    let end = (at + n).min(d.len());
                    let mut produced = 0;
                    for piece in d[at..end].chunks(3_000) {
                        let step = codec
                            .stream(Input::one(piece), &mut dst[produced..], false)
                            .unwrap();
                        assert!(step.done && step.consumed == piece.len());
                        produced += step.produced;
                    }
                    let step = codec
                        .stream(Input::one(&[]), &mut dst[produced..], true)
                        .unwrap();
                    assert!(step.done);
                    produced += step.produced;
                    let taken = end - at;
                    assert!(
                        produced <= codec.bound(taken),
                        "{level} data {i}: {taken} bytes between flushes gave {produced} > bound {}",
                        codec.bound(taken)
                    );
                    // What the flush ended decodes now.
                    got.clear();
                    let k = dec
                        .decompress(&dst[..produced], &mut got, usize::MAX)
                        .unwrap();
                    assert_eq!(&got[..k], &d[at..end], "{level} data {i}");
                    at = end;
                }
            }
        }
    }
}

#[test]
fn a_compressible_push_makes_few_records() {
    // Records cut by output: about one per 64 KiB of *output*, where an
    // input-driven cut makes one per 64 KiB of input (64 here).
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

/// Files written before lz4 was cut by output (id 0x707a0003: one chunk per
/// push, `u32 raw_len, u32 comp_len`, then that push's piece of one lz4
/// frame stream with linked 64 KiB blocks, each chunk flushed) still read:
/// chunks built here with lz4_flex's frame encoder as that writer did.
#[cfg(feature = "lz4")]
#[test]
fn the_linked_unit_lz4_format_written_before_still_reads() {
    use lz4_flex::frame::{BlockMode, BlockSize, FrameEncoder, FrameInfo};
    use perfz_codecs::CodecId;
    use std::io::Write;
    let data = perf_like(600_000, 17);
    let info = FrameInfo::new()
        .block_size(BlockSize::Max64KB)
        .block_mode(BlockMode::Linked);
    let mut enc = FrameEncoder::with_frame_info(info, Vec::new());
    let mut dec = AnyDecoder::for_id(CodecId::LZ4_LINKED_CHUNKS).unwrap();
    let mut got = Vec::new();
    for piece in data.chunks(40_000) {
        enc.get_mut().clear();
        enc.write_all(piece).unwrap();
        enc.flush().unwrap();
        let frame = enc.get_ref();
        let mut chunk = Vec::new();
        chunk.extend_from_slice(&(piece.len() as u32).to_le_bytes());
        chunk.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        chunk.extend_from_slice(frame);
        let n = dec.decompress(&chunk, &mut got, usize::MAX).unwrap();
        assert_eq!(n, piece.len());
    }
    assert!(got == data);
}

/// An lz4 frame stream whose frames differ in block size and mode (a
/// crafted or foreign file: perfz writes one kind) decodes frame by frame:
/// lz4_flex's frame decoder keeps the larger buffers of a frame before and
/// asserts on them (found by fuzzing decode_lz4), so every frame gets a
/// decoder of its own.
#[cfg(feature = "lz4")]
#[test]
fn lz4_frames_of_differing_block_sizes_decode() {
    use lz4_flex::frame::{BlockMode, BlockSize, FrameEncoder, FrameInfo};
    use perfz_codecs::CodecId;
    use std::io::Write;
    let kinds = [
        (BlockSize::Max4MB, BlockMode::Linked),
        (BlockSize::Max64KB, BlockMode::Linked),
        (BlockSize::Max1MB, BlockMode::Independent),
        (BlockSize::Max64KB, BlockMode::Independent),
        (BlockSize::Max4MB, BlockMode::Independent),
    ];
    let data = perf_like(300_000, 5);
    let pieces: Vec<&[u8]> = data.chunks(60_000).collect();
    let frames: Vec<Vec<u8>> = kinds
        .iter()
        .zip(&pieces)
        .map(|(&(size, mode), piece)| {
            let info = FrameInfo::new().block_size(size).block_mode(mode);
            let mut enc = FrameEncoder::with_frame_info(info, Vec::new());
            enc.write_all(piece).unwrap();
            enc.finish().unwrap()
        })
        .collect();
    // The stream perfz writes: consecutive pieces of the frame stream, cut
    // anywhere.
    let stream = frames.concat();
    for cut in [1, 7, 4096, stream.len()] {
        let mut dec = AnyDecoder::for_id(CodecId::LZ4).unwrap();
        let mut got = Vec::new();
        for payload in stream.chunks(cut) {
            dec.decompress(payload, &mut got, usize::MAX).unwrap();
        }
        assert!(got == data, "lz4 cut every {cut} bytes");
    }
    // The chunks written before: one frame (with its end) per chunk.
    let mut dec = AnyDecoder::for_id(CodecId::LZ4_LINKED_CHUNKS).unwrap();
    let mut got = Vec::new();
    for (frame, piece) in frames.iter().zip(&pieces) {
        let mut chunk = Vec::new();
        chunk.extend_from_slice(&(piece.len() as u32).to_le_bytes());
        chunk.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        chunk.extend_from_slice(frame);
        dec.decompress(&chunk, &mut got, usize::MAX).unwrap();
    }
    assert!(got == data, "linked chunks");
}
