//! Files as perf 6.16 writes them with `-z`: a perf file's COMPRESSED
//! (81) records rewritten as COMPRESSED2 (83: header, u64 data_size, data,
//! zero padding to 8 bytes), by hand from the bytes (not by perfz's code).

use std::path::Path;

const HEADER_SIZE: usize = 104;

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// One COMPRESSED2 record of `payload`; `wrapped`: as perf 6.16's writer
/// left a record of 65529-65535 bytes (header.size wrapped to 0, no padding).
fn record(payload: &[u8], wrapped: bool) -> Vec<u8> {
    let total = 16 + payload.len();
    let aligned = total.div_ceil(8) * 8;
    let size = if wrapped {
        assert!(aligned == 1 << 16, "a wrapped record is 65529-65535 bytes");
        0u16
    } else {
        u16::try_from(aligned).expect("a record fits in u16")
    };
    let mut r = Vec::with_capacity(aligned);
    r.extend_from_slice(&83u32.to_le_bytes());
    r.extend_from_slice(&0u16.to_le_bytes());
    r.extend_from_slice(&size.to_le_bytes());
    r.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    r.extend_from_slice(payload);
    if !wrapped {
        r.resize(aligned, 0);
    }
    r
}

/// Writes `input` (a file-mode perf.data with COMPRESSED records) to
/// `output` with every COMPRESSED record as COMPRESSED2 and the feature
/// sections moved by what the data section grew. With `wrap`, the first
/// record whose payload can be cut to 65515 bytes is cut there, the first
/// piece wrapped as perf 6.16's bug left it. Returns the COMPRESSED2
/// records written and whether one is wrapped.
pub fn rewrite(input: &Path, output: &Path, wrap: bool) -> (usize, bool) {
    let b = std::fs::read(input).unwrap();
    assert_eq!(&b[..8], b"PERFILE2");
    assert_eq!(u64_at(&b, 8), HEADER_SIZE as u64, "a file-mode perf.data");
    let (off, size) = (u64_at(&b, 40) as usize, u64_at(&b, 48) as usize);
    let end = off + size;
    let mut data = Vec::with_capacity(size + size / 8);
    let (mut n, mut wrapped) = (0, false);
    let mut at = off;
    while at < end {
        let t = u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        let s = u16::from_le_bytes(b[at + 6..at + 8].try_into().unwrap()) as usize;
        assert!(s >= 8, "record at {at}");
        let rec = &b[at..at + s];
        if t == 81 {
            let mut payload = &rec[8..];
            // The stream goes on across records: the fixed perf 6.16
            // cuts its payloads at 65512 bytes (aligned 65528).
            const CUT: usize = 65515;
            if wrap && !wrapped && payload.len() > CUT {
                data.extend(record(&payload[..CUT], true));
                payload = &payload[CUT..];
                wrapped = true;
                n += 1;
            }
            for piece in payload.chunks(65512) {
                data.extend(record(piece, false));
                n += 1;
            }
        } else {
            data.extend_from_slice(rec);
        }
        at += s;
    }
    let grew = data.len() - size;
    let mut out = b[..off].to_vec();
    out[48..56].copy_from_slice(&(data.len() as u64).to_le_bytes());
    out.extend(data);
    // The feature table: one (offset, size) per feature bit set, each
    // offset past the data section moved with it.
    let bits: u32 = b[72..104].iter().map(|x| x.count_ones()).sum();
    let mut rest = b[end..].to_vec();
    for i in 0..bits as usize {
        let o = u64_at(&rest, i * 16);
        if o >= end as u64 {
            rest[i * 16..i * 16 + 8].copy_from_slice(&(o + grew as u64).to_le_bytes());
        }
    }
    out.extend(rest);
    std::fs::write(output, out).unwrap();
    (n, wrapped)
}

/// The sizes of the COMPRESSED2 records in the data section of `path` (a
/// file-mode perf.data), each checked from the bytes as a correct
/// writer's: header.size the record's, data_size its codec bytes, the
/// record padded with zeros to the next multiple of 8 and no further
/// (and the same read by perfz's reader's own `compressed2::extent`). A
/// COMPRESSED (81) record among them fails: the writer was asked for 83.
pub fn written(path: &Path) -> Vec<usize> {
    use perfz::format::compressed2::extent;
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[..8], b"PERFILE2");
    let (off, size) = (u64_at(&b, 40) as usize, u64_at(&b, 48) as usize);
    let mut sizes = Vec::new();
    let mut at = off;
    while at < off + size {
        let t = u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        let s = u16::from_le_bytes(b[at + 6..at + 8].try_into().unwrap()) as usize;
        assert!(s >= 8, "record at {at:#x}");
        assert_ne!(t, 81, "a COMPRESSED record at {at:#x}");
        if t == 83 {
            let data_size = u64_at(&b, at + 8) as usize;
            let what = format!("COMPRESSED2 at {at:#x}: size {s}, data_size {data_size}");
            assert_eq!(s, (16 + data_size).div_ceil(8) * 8, "{what}");
            assert_eq!(extent(s, data_size as u64), Some((s, data_size)), "{what}");
            assert!(
                b[at + 16 + data_size..at + s].iter().all(|&x| x == 0),
                "{what}"
            );
            sizes.push(s);
        }
        at += s;
    }
    assert_eq!(
        at,
        off + size,
        "the records end where the data section does"
    );
    sizes
}
