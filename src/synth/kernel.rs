//! The kernel map record `[kernel.kallsyms]_text` (format notes 4.4, pitfall
//! 10): without it perf cannot symbolize kernel frames.

use super::{cstr8, record};
use crate::format::record::{misc, RecordType, KERNEL_MAPS};

/// `(_text address, end of kernel text)` from a kallsyms listing, or `None`
/// when the addresses are hidden (kptr_restrict) or missing.
pub fn kernel_text_range(kallsyms: &str) -> Option<(u64, u64)> {
    let mut text = None;
    let mut end = 0u64;
    for line in kallsyms.lines() {
        let mut it = line.split_whitespace();
        let (Some(addr), Some(kind), Some(name)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        if it.next().is_some() {
            continue; // a module symbol: "[module]" follows
        }
        let Ok(a) = u64::from_str_radix(addr, 16) else {
            continue;
        };
        if name == "_text" {
            text = Some(a);
        }
        if matches!(kind, "T" | "t") && name != "_etext" {
            end = end.max(a);
        }
        if name == "_etext" {
            end = end.max(a);
        }
    }
    let start = text.filter(|&a| a != 0)?;
    (end > start).then(|| (start, (end | 0xfff) + 1))
}

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

/// Reads /proc/kallsyms and builds the kernel map, or explains why not.
pub fn synthesize(trailer: usize) -> Result<Vec<u8>, String> {
    let ks = std::fs::read_to_string("/proc/kallsyms")
        .map_err(|e| format!("cannot read /proc/kallsyms: {e}"))?;
    let (text, end) = kernel_text_range(&ks).ok_or_else(|| {
        "kernel addresses are hidden (/proc/sys/kernel/kptr_restrict); kernel frames will not be symbolized".to_string()
    })?;
    Ok(kernel_mmap(text, end, trailer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_text_and_skips_modules() {
        let ks = "ffffffff81000000 T _text\nffffffff81001000 T foo\nffffffff82000000 T _etext\nffffffffc0000000 t modfn\t[ext4]\n";
        assert_eq!(
            kernel_text_range(ks),
            Some((0xffffffff81000000, 0xffffffff82001000))
        );
        assert_eq!(kernel_text_range("0000000000000000 T _text\n"), None);
        let r = kernel_mmap(0xffffffff81000000, 0xffffffff82000000, 24);
        assert_eq!(r.len(), 8 + 32 + 24 + 24);
        assert_eq!(u16::from_le_bytes([r[6], r[7]]) as usize, r.len());
    }
}
