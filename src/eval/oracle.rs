//! What eval's round trip must give back, computed without the push path's
//! cutter (`transform::stack_cut`): each sample is decoded by the reader's
//! parser (`format::sample`), found by its id as the reader finds it, and
//! its stack dump cut to `round_up(dyn_size, 8)` bytes, at least 8 — the
//! rule the recorder follows. Everything else is copied as it is.

use crate::format::endian::Endian;
use crate::format::record::records;
use crate::format::{AttrEntry, RecordType, Sample};

/// `stream` with every sample's unwritten stack bytes left out.
pub fn cut_stream(stream: &[u8], attrs: &[AttrEntry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(stream.len());
    let mut at = 0;
    for rec in records(stream) {
        let Ok((h, bytes)) = rec else { break };
        at += bytes.len();
        let cut = (h.type_ == RecordType::SAMPLE)
            .then(|| attr_of(&bytes[8..], attrs))
            .flatten()
            .and_then(|a| Sample::parse(&bytes[8..], &a.attr, Endian::Little, 0).ok())
            .filter(|s| {
                s.trailing == 0
                    && s.user_stack_size > 0
                    && s.user_stack_size % 8 == 0
                    && s.user_stack_len <= s.user_stack_size
            });
        match cut {
            Some(s) => {
                let size = s.user_stack_size as usize;
                // dyn_size <= size < 64 KiB (checked above): no overflow.
                let keep = (s.user_stack_len as usize).div_ceil(8).max(1) * 8;
                let keep = keep.min(size);
                let field = 8 + s.user_stack_at;
                let mut rec = bytes.to_vec();
                rec.drain(field + 8 + keep..field + 8 + size);
                rec[field..field + 8].copy_from_slice(&(keep as u64).to_le_bytes());
                let len = rec.len() as u16;
                rec[6..8].copy_from_slice(&len.to_le_bytes());
                out.extend_from_slice(&rec);
            }
            None => out.extend_from_slice(bytes),
        }
    }
    // Whatever did not parse as records passes as it is.
    out.extend_from_slice(&stream[at.min(stream.len())..]);
    out
}

/// The attr of a sample body, as the reader finds it (format notes 4.7).
fn attr_of<'a>(body: &[u8], attrs: &'a [AttrEntry]) -> Option<&'a AttrEntry> {
    if attrs.len() <= 1 {
        return attrs.first();
    }
    let at = crate::format::sample::id_offset(attrs[0].attr.sample_type())?;
    let id = u64::from_le_bytes(body.get(at..at + 8)?.try_into().ok()?);
    attrs.iter().find(|a| a.ids.contains(&id))
}
