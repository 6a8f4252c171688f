//! A stream read ahead on its thread hands out the records a stream read in
//! place hands out: the same bytes at the same offsets, plain records in
//! batches or not, payloads after records, decoded records straddling
//! COMPRESSED records.

use proptest::prelude::*;

use super::{CompressedInfo, Endian, RecordStream, RecordType};

/// A piece of a recording's data section.
#[derive(Debug, Clone)]
enum Piece {
    /// Plain records of these sizes (each a multiple of 8).
    Plain(Vec<usize>),
    /// An AUXTRACE record and its trace of this many 8-byte words.
    Aux(usize),
    /// HEADER_TRACING_DATA and its payload of this many bytes.
    Tracing(usize),
    /// Records of these sizes, compressed (codec none) into two COMPRESSED
    /// records cut at this share of their bytes.
    Compressed(Vec<usize>, f64),
}

fn header(t: RecordType, size: usize) -> Vec<u8> {
    let mut h = t.0.to_le_bytes().to_vec();
    h.extend_from_slice(&0u16.to_le_bytes());
    h.extend_from_slice(&(size as u16).to_le_bytes());
    h
}

/// A record of `size` bytes whose body counts from `seed`.
fn record(t: RecordType, size: usize, seed: &mut u8) -> Vec<u8> {
    let mut r = header(t, size);
    r.extend((8..size).map(|_| {
        *seed = seed.wrapping_add(1);
        *seed
    }));
    r
}

fn data(pieces: &[Piece]) -> Vec<u8> {
    let (mut out, mut seed) = (Vec::new(), 0u8);
    for p in pieces {
        match p {
            Piece::Plain(sizes) => {
                for &n in sizes {
                    out.extend(record(RecordType::SAMPLE, n, &mut seed));
                }
            }
            Piece::Aux(words) => {
                let mut r = record(RecordType::AUXTRACE, 48, &mut seed);
                r[8..16].copy_from_slice(&(*words as u64 * 8).to_le_bytes());
                out.extend(r);
                out.extend(record(RecordType(0), words * 8 + 8, &mut seed).split_off(8));
            }
            Piece::Tracing(n) => {
                let mut r = header(RecordType::HEADER_TRACING_DATA, 16);
                r.extend_from_slice(&(*n as u32).to_le_bytes());
                r.extend_from_slice(&[0; 4]);
                out.extend(r);
                out.extend((0..*n).map(|i| i as u8));
            }
            Piece::Compressed(sizes, cut) => {
                let inner: Vec<u8> = (sizes.iter())
                    .flat_map(|&n| record(RecordType::MMAP2, n, &mut seed))
                    .collect();
                let at = ((inner.len() as f64 * cut) as usize) & !7;
                for part in [&inner[..at], &inner[at..]] {
                    out.extend(header(RecordType::COMPRESSED, 8 + part.len()));
                    out.extend_from_slice(part);
                }
            }
        }
    }
    out
}

/// Every record of `bytes` as (type, bytes, offset, nested, the tracing
/// payload where it is HEADER_TRACING_DATA).
type HandedOut = (u32, Vec<u8>, u64, bool, Vec<u8>);

fn read(bytes: &[u8], ahead: bool) -> Vec<HandedOut> {
    let codec = CompressedInfo {
        version: 0,
        codec: 0,
        level: 0,
        ratio: 0,
        mmap_len: 1 << 20,
    };
    let src = Box::new(std::io::Cursor::new(bytes.to_vec()));
    let mut s = RecordStream::new(src, Endian::Little, 0, Some(bytes.len() as u64), None);
    if ahead {
        s.read_ahead(Some(codec));
    }
    let mut seen = Vec::new();
    while s.advance(Some(&codec)).expect("a well-formed stream") {
        let r = s.current();
        let tracing = match r.header.type_ == RecordType::HEADER_TRACING_DATA {
            true => s.tracing_data.clone(),
            false => Vec::new(),
        };
        seen.push((
            r.header.type_.0,
            r.bytes.to_vec(),
            r.offset,
            r.nested,
            tracing,
        ));
    }
    seen
}

fn piece() -> impl Strategy<Value = Piece> {
    let size = (1usize..256).prop_map(|w| w * 8);
    prop_oneof![
        4 => prop::collection::vec(size.clone(), 1..400).prop_map(Piece::Plain),
        1 => (1usize..600).prop_map(Piece::Aux),
        1 => (0usize..3000).prop_map(Piece::Tracing),
        2 => (prop::collection::vec(size, 1..40), 0.0..1.0f64)
            .prop_map(|(s, c)| Piece::Compressed(s, c)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn read_ahead_hands_out_what_reading_in_place_does(
        pieces in prop::collection::vec(piece(), 1..8)
    ) {
        let bytes = data(&pieces);
        let in_place = read(&bytes, false);
        prop_assert_eq!(read(&bytes, true), in_place);
    }
}

#[test]
fn every_record_keeps_its_offset_past_a_batch() {
    // 600 records of 1 KiB: more than two batches, then what ends them.
    let pieces = [
        Piece::Plain(vec![1024; 600]),
        Piece::Aux(3),
        Piece::Plain(vec![64; 3]),
        Piece::Compressed(vec![64, 128, 32], 0.9),
        Piece::Plain(vec![16]),
    ];
    let bytes = data(&pieces);
    let seen = read(&bytes, true);
    assert_eq!(seen, read(&bytes, false));
    let offsets: Vec<u64> = seen.iter().take(600).map(|s| s.2).collect();
    assert_eq!(offsets, (0..600).map(|i| i * 1024).collect::<Vec<_>>());
    // Then: the AUXTRACE (48 bytes and 24 of trace) at 614 400, three
    // plain records of 64, two COMPRESSED records (8 + 200 and 8 + 24
    // bytes), each followed by the records it completes, at its own
    // offset (the third straddles the two), the last plain record.
    let rest: Vec<(u32, u64, bool)> = seen[600..].iter().map(|s| (s.0, s.2, s.3)).collect();
    let (aux, sample, mmap2, compressed) = (71, 9, 10, 81);
    assert_eq!(
        rest,
        [
            (aux, 614_400, false),
            (sample, 614_472, false),
            (sample, 614_536, false),
            (sample, 614_600, false),
            (compressed, 614_664, false),
            (mmap2, 614_664, true),
            (mmap2, 614_664, true),
            (compressed, 614_872, false),
            (mmap2, 614_872, true),
            (sample, 614_904, false),
        ]
    );
}
