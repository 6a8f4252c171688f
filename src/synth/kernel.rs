//! The kernel map record `[kernel.kallsyms]_text` (format notes 4.4, pitfall
//! 10): without it perf cannot symbolize kernel frames.

use super::{cstr8, record};
use crate::format::record::{misc, RecordType, KERNEL_MAPS};

/// `(_text address, end of kernel text)` from a kallsyms listing, or `None`
/// when the addresses are hidden (kptr_restrict) or missing. The end is
/// past the last text symbol (`T`/`t`) of the kernel itself (a module's
/// lines end with `\t[module]`).
///
/// A listing is about 120 000 lines, read at every recording's start: one
/// pass over the bytes, a line's address parsed only where its kind is
/// text.
pub fn kernel_text_range(kallsyms: &[u8]) -> Option<(u64, u64)> {
    let mut text = None;
    let mut end = 0u64;
    let mut rest = kallsyms;
    while !rest.is_empty() {
        let n = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        let line = &rest[..n];
        rest = rest.get(n + 1..).unwrap_or_default();
        // "ADDR KIND NAME", or "ADDR KIND NAME\t[module]".
        let Some(sp) = memchr::memchr(b' ', line) else {
            continue;
        };
        let (kind, name) = match line.get(sp + 1..) {
            Some([k, b' ', name @ ..]) => (*k, name),
            _ => continue,
        };
        let is_text = matches!(kind, b'T' | b't');
        if !is_text && name != b"_text" {
            continue;
        }
        if memchr::memchr2(b'\t', b' ', name).is_some() {
            continue; // a module symbol
        }
        let Some(a) = hex(&line[..sp]) else {
            continue;
        };
        if name == b"_text" {
            text = Some(a);
        }
        if is_text {
            end = end.max(a);
        }
    }
    let start = text.filter(|&a| a != 0)?;
    (end > start).then(|| (start, (end | 0xfff) + 1))
}

/// A hexadecimal address of at most 16 digits.
fn hex(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    s.iter().try_fold(0u64, |a, &c| {
        let d = (c as char).to_digit(16)?;
        Some(a << 4 | u64::from(d))
    })
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

/// The kernel map of the running kernel (its text range as
/// [`kernel_range::this_boot`](super::kernel_range::this_boot) finds it),
/// or why not; `notes` gets why a kept range was not used.
pub fn synthesize(trailer: usize, notes: &mut Vec<String>) -> Result<Vec<u8>, String> {
    let (text, end) = super::kernel_range::this_boot(notes)?;
    Ok(kernel_mmap(text, end, trailer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_text_and_skips_modules() {
        let ks = b"ffffffff81000000 T _text\nffffffff81001000 T foo\nffffffff82000000 T _etext\nffffffffc0000000 t modfn\t[ext4]\n";
        assert_eq!(
            kernel_text_range(ks),
            Some((0xffffffff81000000, 0xffffffff82001000))
        );
        assert_eq!(kernel_text_range(b"0000000000000000 T _text\n"), None);
        let r = kernel_mmap(0xffffffff81000000, 0xffffffff82000000, 24);
        assert_eq!(r.len(), 8 + 32 + 24 + 24);
        assert_eq!(u16::from_le_bytes([r[6], r[7]]) as usize, r.len());
    }

    /// The listing read the plain way, split on white space: the model.
    fn model(kallsyms: &str) -> Option<(u64, u64)> {
        let (mut text, mut end) = (None, 0u64);
        for line in kallsyms.lines() {
            let w: Vec<&str> = line.split_whitespace().collect();
            let [addr, kind, name] = w[..] else {
                continue;
            };
            let Ok(a) = u64::from_str_radix(addr, 16) else {
                continue;
            };
            if name == "_text" {
                text = Some(a);
            }
            if matches!(kind, "T" | "t") {
                end = end.max(a);
            }
        }
        let start = text.filter(|&a| a != 0)?;
        (end > start).then(|| (start, (end | 0xfff) + 1))
    }

    #[test]
    fn this_machines_listing_reads_as_the_model_reads_it() {
        let ks = super::super::kernel_range::read_kallsyms().expect("/proc/kallsyms");
        let got = kernel_text_range(&ks);
        assert_eq!(got, model(std::str::from_utf8(&ks).unwrap()));
        // Odd lines: no kind, a bad address, a last line without its end.
        let odd =
            b"zz T _text\nffffffff81000000\nffffffff81000000 T _text\n\n \nffffffff81200000 t x";
        assert_eq!(
            kernel_text_range(odd),
            model(std::str::from_utf8(odd).unwrap())
        );
        assert_eq!(
            kernel_text_range(odd),
            Some((0xffffffff81000000, 0xffffffff81201000))
        );
    }
}
