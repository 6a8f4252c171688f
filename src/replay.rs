//! Raw ring-buffer streams for benches, `perfz eval` and tests: the records a
//! recording's rings held, extracted from any perf.data, and replayed as
//! ring-sized pushes.

use std::path::Path;

use perfz_codecs::Input;

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
        } else if rec.nested || rec.stream.is_some() || (after_init && t.is_kernel()) {
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
        while end < stream.len() && end - start < push {
            let size = stream
                .get(end + 6..end + 8)
                .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]) as usize);
            // Not a record stream (or a broken one): cut anywhere.
            end = if size < 8 {
                stream.len().min(start + push)
            } else {
                (end + size).min(stream.len())
            };
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
