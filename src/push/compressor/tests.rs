//! The compressor's records, of both formats: each a whole record of its
//! type, holding a block end, decoding within the declared mmap_len, all
//! of them to exactly what was pushed.

use super::*;
use crate::format::compressed2::{extent, MAX_ALIGNED_PAYLOAD, PREFIX};
use crate::format::record::RecordHeader;
use crate::push::records::DECLARED_MMAP_LEN;
use perfz_codecs::{CodecSpec, CodecVisitor, ZstdCodec};
use zstd_oracle::stream::raw::{Decoder, InBuffer, Operation, OutBuffer};

/// The largest COMPRESSED2 record: 65 512 bytes of payload after the prefix.
const FULL2: usize = PREFIX + MAX_ALIGNED_PAYLOAD;

/// The codec's bytes in `r`, a record of `format`, checked as a correct
/// writer's: its type, a header.size that is its length; for COMPRESSED2
/// a data_size that is the codec's bytes, the record padded with zeros to
/// the next multiple of 8 and no further, read by the reader's own
/// [`extent`] as a correct perf's record (not the wrapped first writer's).
fn payload_of(format: CompressedFormat, r: &[u8]) -> &[u8] {
    let h = RecordHeader::from_le(r[..8].try_into().unwrap());
    assert_eq!(h.type_, format.record_type());
    assert_eq!(h.size as usize, r.len());
    if format == CompressedFormat::Compressed {
        return &r[RecordHeader::SIZE..];
    }
    let data_size = u64::from_le_bytes(r[8..PREFIX].try_into().unwrap()) as usize;
    assert!(data_size <= MAX_ALIGNED_PAYLOAD, "data_size {data_size}");
    assert_eq!(r.len(), (PREFIX + data_size).next_multiple_of(8));
    assert_eq!(
        extent(r.len(), data_size as u64),
        Some((r.len(), data_size))
    );
    assert!(r[PREFIX + data_size..].iter().all(|&b| b == 0), "padding");
    &r[PREFIX..PREFIX + data_size]
}

fn bytes(kind: usize, n: usize) -> Vec<u8> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ kind as u64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    match kind {
        // Incompressible (raw blocks).
        0 => (0..n).map(|_| rnd() as u8).collect(),
        // About 4:3: 128 KiB blocks stay compressed blocks larger than
        // a record (the case a window could hold no block end in).
        1 => (0..n).map(|_| rnd() as u8 & 63).collect(),
        // Runs of one byte (tiny blocks).
        2 => vec![0u8; n],
        // Repeats with variation, like perf records.
        _ => (0..n)
            .map(|i| {
                if rnd() % 16 == 0 {
                    rnd() as u8
                } else {
                    (i % 251) as u8
                }
            })
            .collect(),
    }
}

/// The records `data` makes in pushes of `push` bytes (each split in two
/// slices somewhere, as a ring wrap does), flushed after every
/// `flush_every` pushes and at the end.
fn records_of<C: Codec>(
    c: &mut Compressor<C>,
    data: &[u8],
    push: usize,
    flush_every: usize,
) -> Vec<Vec<u8>> {
    let mut recs: Vec<Vec<u8>> = Vec::new();
    let mut keep = |r: &[u8]| {
        recs.push(r.to_vec());
        Ok::<(), perfz_codecs::Error>(())
    };
    for (i, chunk) in data.chunks(push).enumerate() {
        let k = (i * 7919) % (chunk.len() + 1);
        c.push(Input::two(&chunk[..k], &chunk[k..]), &mut keep)
            .unwrap();
        if i % flush_every == flush_every - 1 {
            c.flush(&mut keep).unwrap();
        }
    }
    c.flush(&mut keep).unwrap();
    recs
}

/// The zstd records `data` makes at `level` in `format` (pushes of
/// `push`, held or not): each a correct record of the format, holding a
/// block end (it decodes to at least one byte, read by the `zstd` crate's
/// decoder in order), decoding to no more than the declared mmap_len, and
/// all of them to exactly `data`. Returns the records' sizes.
fn check_zstd(
    format: CompressedFormat,
    level: &str,
    data: &[u8],
    hold: bool,
    push: usize,
    what: &str,
) -> Vec<usize> {
    let CodecSpec::Zstd(p) = level.parse::<CodecSpec>().unwrap() else {
        unreachable!()
    };
    let mut c = Compressor::with_format(ZstdCodec::new(&p).unwrap(), format);
    c.set_hold(hold);
    let recs = records_of(&mut c, data, push, usize::MAX);
    assert_eq!(c.info().mmap_len, DECLARED_MMAP_LEN);
    let mut dec = Decoder::new().unwrap();
    let mut out = vec![0u8; 1 << 20];
    let mut got = Vec::new();
    let what = format!("{format} {level} {what} hold {hold} push {push}");
    for (j, r) in recs.iter().enumerate() {
        assert!(r.len() <= RECORD_MAX);
        let payload = payload_of(format, r);
        let mut i = InBuffer::around(payload);
        let mut n = 0;
        while i.pos < payload.len() {
            let mut o = OutBuffer::around(&mut out[..]);
            dec.run(&mut i, &mut o).unwrap();
            let k = o.pos();
            got.extend_from_slice(&out[..k]);
            n += k;
        }
        let rec = format!("{what}: record {j} of {}", recs.len());
        assert!(n >= 1, "{rec} decodes to nothing");
        assert!(n <= DECLARED_MMAP_LEN as usize, "{rec} decodes to {n}");
    }
    assert!(got == data, "{what}");
    assert_eq!(c.tally.records, recs.len() as u64);
    assert_eq!(
        c.tally.out_bytes,
        recs.iter().map(|r| r.len() as u64).sum::<u64>()
    );
    recs.iter().map(Vec::len).collect()
}

/// Every record holds a block end (decodes to at least one byte, read by
/// the `zstd` crate's decoder in order), decodes to no more than the
/// declared mmap_len, and all of them to exactly what was pushed: at
/// every ratio, with and without holding, pushes small and large.
#[test]
fn every_record_decodes_to_one_byte_or_more_and_within_mmap_len() {
    for level in ["zstd:1", "zstd:3", "zstd:-5"] {
        for kind in 0..4 {
            let data = bytes(kind, 3 << 20);
            for hold in [false, true] {
                for push in [1_000usize, 70_000, 300_000, 1 << 20] {
                    let what = format!("kind {kind}");
                    check_zstd(
                        CompressedFormat::Compressed,
                        level,
                        &data,
                        hold,
                        push,
                        &what,
                    );
                }
            }
        }
    }
}

/// COMPRESSED2 records keep the same rules, each a correct record of perf
/// 6.16's format (the reader's `extent` reads it by its header.size and
/// data_size), full ones at the most a record holds (65 512 bytes of
/// payload, 65 528 with the prefix) and never more.
#[test]
fn compressed2_records_are_whole_padded_and_decode_as_compressed_ones() {
    for level in ["zstd:1", "zstd:-5"] {
        for kind in 0..4 {
            let data = bytes(kind, 3 << 20);
            for hold in [false, true] {
                for push in [1_000usize, 300_000, 1 << 20] {
                    let what = format!("kind {kind}");
                    let f = CompressedFormat::Compressed2;
                    let sizes = check_zstd(f, level, &data, hold, push, &what);
                    assert!(sizes.iter().all(|&s| s <= FULL2), "{what}");
                    if kind == 0 && push >= 300_000 {
                        assert!(sizes.contains(&FULL2), "{what}: no full record");
                    }
                }
            }
        }
    }
}

/// lz4's records of `data` in `format` (pushes of `push`, a flush every
/// `flush_every`): each a correct record of the format, decoding through
/// perfz's own lz4 decoder to no more than the compressor's count of the
/// most a record took (`max_record_raw`: what it fed plus what was held
/// when it began), that within the bound lz4 files declare, and all of
/// them to `data`. Returns the records' sizes.
fn check_lz4(format: CompressedFormat, data: &[u8], push: usize, flush_every: usize) -> Vec<usize> {
    use perfz_codecs::{Decoder, Lz4Codec, Lz4Decoder};
    let mut c = Compressor::with_format(Lz4Codec::new(), format);
    c.set_hold(true);
    let recs = records_of(&mut c, data, push, flush_every);
    let declared = c.tally.max_record_raw;
    assert!(declared <= perfz_codecs::CodecId::LZ4_RECORD_DECODE_MAX as usize);
    assert_eq!(
        c.info().mmap_len,
        perfz_codecs::CodecId::LZ4_RECORD_DECODE_MAX
    );
    let mut dec = Lz4Decoder::new();
    let mut got = Vec::new();
    for (j, r) in recs.iter().enumerate() {
        let n = dec
            .decompress(payload_of(format, r), &mut got, usize::MAX)
            .unwrap();
        assert!(
            n <= declared,
            "{format} push {push} flush every {flush_every}: record {j} of {} \
             decodes to {n}, counted {declared}",
            recs.len()
        );
    }
    assert!(got == data, "{format} push {push} flush {flush_every}");
    recs.iter().map(Vec::len).collect()
}

/// lz4 (records end where full, blocks where its encoder ends them or a
/// flush does): on data from incompressible to runs of zeros, with
/// flushes now and then as the drain makes them.
#[test]
fn lz4_records_decode_within_the_declared_mmap_len() {
    for kind in 0..4 {
        let data = bytes(kind, 12 << 20);
        for push in [1_000usize, 70_000, 300_000, 1 << 20] {
            for flush_every in [1usize, 3, 50, usize::MAX] {
                check_lz4(CompressedFormat::Compressed, &data, push, flush_every);
            }
        }
    }
}

/// lz4 in COMPRESSED2 records: the same, full records at 65 528 bytes.
#[test]
fn lz4_compressed2_records_decode_within_the_declared_mmap_len() {
    for kind in 0..4 {
        let data = bytes(kind, 4 << 20);
        for push in [70_000usize, 1 << 20] {
            for flush_every in [3usize, usize::MAX] {
                let sizes = check_lz4(CompressedFormat::Compressed2, &data, push, flush_every);
                assert!(sizes.iter().all(|&s| s <= FULL2));
                assert!(kind != 0 || sizes.contains(&FULL2), "no full record");
            }
        }
    }
}

/// Codecs that cut chunks by input (snappy, zstd one-shot), in both
/// formats: every record one chunk of at most `max_input` bytes, a correct
/// record of its format, decoding through the codec's decoder to at least
/// one byte and within mmap_len, all of them to what was pushed.
#[test]
fn chunk_records_of_both_formats_decode_to_what_was_pushed() {
    struct Check<'a>(&'a [u8], CompressedFormat);
    impl CodecVisitor for Check<'_> {
        type Output = usize;
        fn visit<C: Codec + Send + 'static>(self, codec: C) -> usize {
            let Check(data, format) = self;
            let mut c = Compressor::with_format(codec, format);
            let recs = records_of(&mut c, data, 300_000, usize::MAX);
            let mut dec = perfz_codecs::AnyDecoder::for_id(C::ID).unwrap();
            let mut got = Vec::new();
            for r in &recs {
                let n = perfz_codecs::Decoder::decompress(
                    &mut dec,
                    payload_of(format, r),
                    &mut got,
                    usize::MAX,
                )
                .unwrap();
                assert!(n >= 1 && n <= c.max_input(), "{format}: decodes to {n}");
            }
            assert!(got == data, "{format}");
            recs.iter().map(Vec::len).max().unwrap_or(0)
        }
    }
    for spec in ["snappy", "zstd:1,oneshot"] {
        let spec: CodecSpec = spec.parse().unwrap();
        for kind in 0..4 {
            let data = bytes(kind, 1 << 20);
            for format in [CompressedFormat::Compressed, CompressedFormat::Compressed2] {
                let largest = spec.visit(Check(&data, format)).unwrap();
                let most = format.prefix() + format.max_payload();
                assert!(largest <= most, "{spec} {format} kind {kind}: {largest}");
            }
        }
    }
}
