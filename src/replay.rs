//! Raw ring-buffer streams for benches, `perfz eval` and tests: the records a
//! recording's rings held, extracted from any perf.data, and replayed as
//! ring-sized pushes.
//!
//! `ring_stream` takes the records inside COMPRESSED records, those of
//! `data.N` streams, or the kernel records after FINISHED_INIT of a plain
//! file: what passed through a ring (`Record::from_ring` in format/record.rs
//! is the one rule).

use std::path::Path;

use perfz_codecs::Input;

use crate::format::record::{records, RecordHeader};
use crate::format::{FormatError, PerfReader};

/// The kernel records of a file in order (decompressed), as one byte stream:
/// what its ring buffers held. Synthesized records (before FINISHED_INIT) and
/// perf's user records are left out: they never pass through a ring.
pub fn ring_stream(path: &Path) -> Result<Vec<u8>, FormatError> {
    let mut r = PerfReader::open(path)?;
    let mut out = Vec::new();
    let mut after_init = false;
    let mut pre_init = Vec::new();
    while let Some((rec, _)) = r.next_record()? {
        let t = rec.header.type_;
        if t == crate::format::RecordType::FINISHED_INIT {
            after_init = true;
            pre_init.clear();
        } else if rec.from_ring(after_init) {
            out.extend_from_slice(rec.bytes);
        } else if !after_init && t.is_kernel() {
            pre_init.extend_from_slice(rec.bytes);
        }
    }
    if !after_init {
        // A file without FINISHED_INIT: its kernel records are all we have.
        out.splice(0..0, pre_init);
    }
    Ok(out)
}

/// Repeats a record stream up to `len` bytes, XOR-ing every 8-byte word of
/// every record body with a key of its repetition. Within one repetition the
/// structure (and so the ratio) is the original's; across repetitions nothing
/// matches, so a codec with a long window cannot cheat on the repeats.
/// Headers stay intact, so the result is still a walkable record stream.
pub fn varied_stream(base: &[u8], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + base.len());
    let mut key = 0x9e37_79b9_7f4a_7c15u64;
    let mut first = true;
    while out.len() < len && !base.is_empty() {
        let start = out.len();
        out.extend_from_slice(base);
        if !first {
            // Where each record's body lies, then XOR the bodies.
            let bodies: Vec<(usize, usize)> = records(&out[start..])
                .map_while(Result::ok)
                .scan(start, |at, (h, _)| {
                    let body = (*at + RecordHeader::SIZE, *at + h.size as usize);
                    *at += h.size as usize;
                    Some(body)
                })
                .collect();
            for (from, to) in bodies {
                for w in out[from..to].chunks_exact_mut(8) {
                    let v = u64::from_le_bytes(w.try_into().unwrap()) ^ key;
                    w.copy_from_slice(&v.to_le_bytes());
                }
            }
        }
        first = false;
        key = key.rotate_left(17).wrapping_mul(0x2545_f491_4f6c_dd1d);
    }
    out
}

/// Cuts a record stream into pushes of about `push` bytes that end at record
/// boundaries (a ring's head always does), each presented as two slices split
/// at a point that moves the way a ring's wrap does — the wrap cuts records
/// anywhere — so both the one- and two-slice paths run.
pub fn pushes(stream: &[u8], push: usize) -> impl Iterator<Item = Input<'_>> {
    let push = push.max(1);
    let mut start = 0;
    let mut i = 0usize;
    std::iter::from_fn(move || {
        if start >= stream.len() {
            return None;
        }
        let mut end = start;
        for rec in records(&stream[start..]) {
            match rec {
                Ok((h, _)) if end - start < push => end += h.size as usize,
                Ok(_) => break,
                // Not a record stream (or a broken one): cut anywhere.
                Err(_) => {
                    end = stream.len().min(start + push);
                    break;
                }
            }
        }
        if end == start {
            end = stream.len().min(start + push);
        }
        let c = &stream[start..end];
        start = end;
        i += 1;
        // Every third push wraps, at a different point each time.
        let k = if i % 3 == 0 {
            (i * 40_961) % c.len()
        } else {
            c.len()
        };
        Some(Input::two(&c[..k], &c[k..]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pushes_cover_the_stream_in_order() {
        // Records of 64 bytes: header (type 9, size 64), then filler.
        let s: Vec<u8> = (0..1500u32)
            .flat_map(|i| {
                let mut r = vec![9, 0, 0, 0, 0, 0, 64, 0];
                r.extend((0..56).map(|k| (i + k) as u8));
                r
            })
            .collect();
        let joined: Vec<u8> = pushes(&s, 7_000)
            .flat_map(|p| p.parts().flatten().copied().collect::<Vec<_>>())
            .collect();
        assert_eq!(joined, s);
        assert!(
            pushes(&s, 7_000).any(|p| !p.first.is_empty() && !p.second.is_empty()),
            "some pushes wrap"
        );
        assert!(
            pushes(&s, 7_000).all(|p| p.len() % 64 == 0),
            "pushes end at records"
        );
    }
}
