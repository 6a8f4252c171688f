//! The kernel map record `[kernel.kallsyms]_text` (format notes 4.4, pitfall
//! 10): without it perf cannot symbolize kernel frames.

use super::{cstr8, record};
use crate::format::record::{misc, RecordType, KERNEL_MAPS};
use crate::notes::Notes;

/// The record perf writes for the kernel image: with its build id, perf
/// 7.x's MMAP2 (a build-id MMAP2, which perf 5.12 and newer read); without
/// one, perf 6.x's MMAP.
pub fn kernel_mmap(text: u64, end: u64, build_id: Option<&[u8]>, trailer: usize) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&u32::MAX.to_le_bytes()); // pid -1
    body.extend_from_slice(&0u32.to_le_bytes()); // tid
    body.extend_from_slice(&text.to_le_bytes()); // start
    body.extend_from_slice(&(end - text).to_le_bytes()); // len
    body.extend_from_slice(&text.to_le_bytes()); // pgoff = _text, how perf undoes KASLR
    let name = format!("{KERNEL_MAPS}_text");
    let Some(id) = build_id.filter(|id| !id.is_empty() && id.len() <= 20) else {
        cstr8(&mut body, name.as_bytes());
        return record(RecordType::MMAP.0, misc::KERNEL, &body, trailer);
    };
    // build_id_size, two reserved bytes, the id padded to 20; prot, flags.
    body.extend_from_slice(&[id.len() as u8, 0, 0, 0]);
    body.extend_from_slice(id);
    body.resize(body.len() + 20 - id.len(), 0);
    body.extend_from_slice(&[0; 8]);
    cstr8(&mut body, name.as_bytes());
    let misc = misc::KERNEL | misc::MMAP_BUILD_ID;
    record(RecordType::MMAP2.0, misc, &body, trailer)
}

/// The kernel map of the running kernel (its text range as
/// [`kernel_range::this_boot`](super::kernel_range::this_boot) finds it),
/// or why not; `notes` gets why a kept range was not used.
pub fn synthesize(trailer: usize, notes: &mut Notes) -> Result<Vec<u8>, String> {
    let (text, end) = super::kernel_range::this_boot(notes)?;
    let id = super::build_id::of_kernel();
    Ok(kernel_mmap(text, end, id.as_deref(), trailer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_map_is_one_mmap_record() {
        let r = kernel_mmap(0xffffffff81000000, 0xffffffff82000000, None, 24);
        assert_eq!(r.len(), 8 + 32 + 24 + 24);
        assert_eq!(u16::from_le_bytes([r[6], r[7]]) as usize, r.len());
    }

    #[test]
    fn with_a_build_id_it_is_perf_7s_mmap2() {
        // perf 7.3's own, byte for byte (`perf report -D`, sample_id of
        // TID and TIME zeroed): start, len, pgoff, build id, prot 0, flags 0.
        let id: Vec<u8> = (0..20).collect();
        let r = kernel_mmap(0xffffffff81000000, 0xffffffff82259b00, Some(&id), 16);
        assert_eq!(&r[..8], &[0x0a, 0, 0, 0, 0x01, 0x40, 0x70, 0x00]);
        assert_eq!(r[40], 20, "build_id_size");
        assert_eq!(&r[44..64], &id[..]);
        assert_eq!(&r[64..72], &[0; 8], "prot and flags");
        assert_eq!(&r[72..95], b"[kernel.kallsyms]_text\0");
        assert_eq!(r.len(), 0x70);
        let parsed = crate::format::side_band::SideBand::parse(
            RecordType::MMAP2,
            misc::KERNEL | misc::MMAP_BUILD_ID,
            &r[8..],
        );
        assert!(
            matches!(parsed, Some(crate::format::side_band::SideBand::Map { kernel: true, build_id: Some(b), .. }) if b == id)
        );
    }
}
