//! The kernel map record `[kernel.kallsyms]_text` (format notes 4.4, pitfall
//! 10): without it perf cannot symbolize kernel frames.

use super::{cstr8, record};
use crate::format::record::{misc, RecordType, KERNEL_MAPS};
use crate::notes::Notes;

/// The MMAP record perf writes for the kernel image.
pub fn kernel_mmap(text: u64, end: u64, trailer: usize) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&u32::MAX.to_le_bytes()); // pid -1
    body.extend_from_slice(&0u32.to_le_bytes()); // tid
    body.extend_from_slice(&text.to_le_bytes()); // start
    body.extend_from_slice(&(end - text).to_le_bytes()); // len
    body.extend_from_slice(&text.to_le_bytes()); // pgoff = _text, how perf undoes KASLR
    cstr8(&mut body, format!("{KERNEL_MAPS}_text").as_bytes());
    record(RecordType::MMAP.0, misc::KERNEL, &body, trailer)
}

/// The kernel map of the running kernel (its text range as
/// [`kernel_range::this_boot`](super::kernel_range::this_boot) finds it),
/// or why not; `notes` gets why a kept range was not used.
pub fn synthesize(trailer: usize, notes: &mut Notes) -> Result<Vec<u8>, String> {
    let (text, end) = super::kernel_range::this_boot(notes)?;
    Ok(kernel_mmap(text, end, trailer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_map_is_one_mmap_record() {
        let r = kernel_mmap(0xffffffff81000000, 0xffffffff82000000, 24);
        assert_eq!(r.len(), 8 + 32 + 24 + 24);
        assert_eq!(u16::from_le_bytes([r[6], r[7]]) as usize, r.len());
    }
}
