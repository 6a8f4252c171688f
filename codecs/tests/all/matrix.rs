//! The same cases against every codec and parameter set (one macro, every codec).

use crate::util::*;
use perfz_codecs::{CodecSpec, MAX_RECORD_PAYLOAD};

macro_rules! codec_matrix {
    ($($name:ident => $spec:expr,)*) => {$(
        mod $name {
            use super::*;

            fn spec() -> CodecSpec {
                $spec.parse().unwrap()
            }

            #[test]
            fn empty_input_writes_nothing() {
                let chunks = compress_pushes(&spec(), &[(vec![], vec![])]);
                assert!(chunks.chunks.is_empty());
            }

            #[test]
            fn empty_second_slice() {
                roundtrip(&spec(), &[(b"hello perf".to_vec(), vec![])]);
            }

            #[test]
            fn empty_first_slice() {
                roundtrip(&spec(), &[(vec![], b"hello perf".to_vec())]);
            }

            #[test]
            fn one_byte() {
                roundtrip(&spec(), &[(vec![42], vec![])]);
                roundtrip(&spec(), &[(vec![], vec![7]), (vec![1], vec![2])]);
            }

            #[test]
            fn random_64k_in_two_slices() {
                let data = random_bytes(64 * 1024, 7);
                let chunks = roundtrip(&spec(), &ring_pushes(&data, data.len(), 40_000));
                assert!(chunks.chunks.iter().all(|u| u.len() <= MAX_RECORD_PAYLOAD));
            }

            #[test]
            fn perf_like_1m_in_ring_sized_pushes() {
                let data = perf_like(1 << 20, 3);
                let chunks = roundtrip(&spec(), &ring_pushes(&data, 256 * 1024, 100_003));
                let total: usize = chunks.chunks.iter().map(|u| u.len()).sum();
                if spec() != CodecSpec::None {
                    assert!(total < data.len() / 2, "{}: {} -> {}", spec(), data.len(), total);
                }
            }

            #[test]
            fn many_small_pushes_share_one_stream() {
                let data = perf_like(200_000, 11);
                roundtrip(&spec(), &ring_pushes(&data, 997, 333));
            }
        }
    )*};
}

codec_matrix! {
    none => "none",
    zstd_fast => "zstd:-5",
    zstd_default => "zstd",
    zstd_3 => "zstd:3",
    zstd_19 => "zstd:19",
    zstd_22 => "zstd:22",
    zstd_wlog => "zstd:3,wlog=23",
    zstd_long => "zstd:1,long",
    zstd_oneshot => "zstd:3,oneshot",
    zstd_oneshot_fast => "zstd:-3,oneshot",
    lz4 => "lz4",
    snappy => "snappy",
}

#[test]
fn zstd_stream_is_one_unended_frame_like_perfs() {
    let spec: CodecSpec = "zstd:3".parse().unwrap();
    let data = perf_like(300_000, 5);
    let chunks = roundtrip(&spec, &ring_pushes(&data, 50_000, 7));
    assert_eq!(
        &chunks.chunks[0][..4],
        &[0x28, 0xb5, 0x2f, 0xfd],
        "first chunk opens the frame"
    );
    for u in &chunks.chunks[1..] {
        assert_ne!(
            &u[..4],
            &[0x28, 0xb5, 0x2f, 0xfd],
            "no later chunk starts a frame"
        );
    }
    // An independent decoder (the zstd crate) reads the concatenation too.
    let all: Vec<u8> = chunks.chunks.concat();
    let mut dec = zstd::stream::raw::Decoder::new().unwrap();
    let mut out = vec![0u8; data.len() + 1024];
    let mut got = Vec::new();
    let mut inp = zstd::stream::raw::InBuffer::around(&all);
    use zstd::stream::raw::Operation;
    while inp.pos < all.len() {
        let mut o = zstd::stream::raw::OutBuffer::around(&mut out[..]);
        dec.run(&mut inp, &mut o).unwrap();
        got.extend_from_slice(o.as_slice());
    }
    assert_eq!(got, data);
}

#[test]
fn level_classes_order_the_ratio() {
    let data = perf_like(1 << 20, 9);
    let size = |s: &str| -> usize {
        compress_pushes(&s.parse().unwrap(), &ring_pushes(&data, 256 * 1024, 0))
            .chunks
            .iter()
            .map(|u| u.len())
            .sum()
    };
    let (fast, one, nineteen) = (size("zstd:-5"), size("zstd:1"), size("zstd:19"));
    assert!(
        fast > one && one > nineteen,
        "fast {fast}, 1 {one}, 19 {nineteen}"
    );
}

#[test]
fn max_input_fills_a_record_and_respects_bound() {
    for spec in all_specs() {
        let data = random_bytes(300_000, 99);
        let chunks = roundtrip(&spec, &ring_pushes(&data, data.len(), 123_457));
        for u in &chunks.chunks {
            assert!(
                u.len() <= MAX_RECORD_PAYLOAD,
                "{spec}: chunk of {} bytes",
                u.len()
            );
        }
    }
}
