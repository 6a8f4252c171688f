//! The running kernel's image as /proc/iomem lists it: `Kernel code` from
//! `_text` to `_etext`, then its other parts (`Kernel rodata`, `Kernel
//! data`, `Kernel bss`, ...), in physical addresses that differ from the
//! virtual ones by one offset. Their sizes check a kept text range against
//! the running kernel without reading /proc/kallsyms: a few dozen lines,
//! where kallsyms is 120 000. Only a user with CAP_SYS_ADMIN (root) sees
//! the addresses; others see zeros, and then there is nothing to check
//! with.

/// Lengths from `_text` of the kernel's code and of its whole image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageSpan {
    /// `_etext - _text`: the end of the text every kernel frame lies in.
    pub code: u64,
    /// From `_text` to the end of the image's last part.
    pub image: u64,
}

/// The running kernel's, where /proc/iomem shows it.
pub fn running() -> Option<ImageSpan> {
    parse(&std::fs::read_to_string("/proc/iomem").ok()?)
}

/// From the text of /proc/iomem.
pub fn parse(iomem: &str) -> Option<ImageSpan> {
    let mut code = None;
    let mut last = 0u64;
    for line in iomem.lines() {
        let Some((range, name)) = line.trim_start().split_once(" : ") else {
            continue;
        };
        if !name.starts_with("Kernel ") {
            continue;
        }
        let Some((a, b)) = range.split_once('-') else {
            continue;
        };
        let (Ok(a), Ok(b)) = (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16)) else {
            continue;
        };
        if name == "Kernel code" {
            code = Some((a, b));
        }
        last = last.max(b);
    }
    let (a, b) = code?;
    // Zeros where the addresses are hidden.
    (b > a && last >= b).then(|| ImageSpan {
        code: b + 1 - a,
        image: last + 1 - a,
    })
}

impl ImageSpan {
    /// Whether `(start, end)` (`_text` and the page past the last text
    /// symbol) can be this kernel's text: it covers all the code, ends on
    /// a page, and lies within the image.
    pub fn confirms(&self, (start, end): (u64, u64)) -> bool {
        let len = end.wrapping_sub(start);
        end > start
            && end % 4096 == 0
            && len >= self.code
            && len <= self.image.next_multiple_of(4096)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const X86: &str = "00000000-00000fff : Reserved\n00100000-7ffdffff : System RAM\n  01000000-02269a87 : Kernel code\n  02400000-02e06fff : Kernel rodata\n  03000000-0327c03f : Kernel data\n  03b30000-03c60fff : Kernel bss\n";

    #[test]
    fn the_image_bounds_a_text_range() {
        let s = parse(X86).unwrap();
        assert_eq!(
            s,
            ImageSpan {
                code: 0x1269a88,
                image: 0x2c61000
            }
        );
        let t = 0xffffffff81000000;
        assert!(s.confirms((t, t + 0x27f3000)));
        assert!(s.confirms((t, t + 0x126a000)));
        // Short of the code, past the image, off a page, backwards.
        assert!(!s.confirms((t, t + 0x1000)));
        assert!(!s.confirms((t, t + 0x1269000)));
        assert!(!s.confirms((t, t + 0x2c62000)));
        assert!(!s.confirms((t, t + 0x27f3008)));
        assert!(!s.confirms((t, t - 0x1000)));
        // Hidden (not root) or absent: nothing to check with.
        let hidden = "  00000000-00000000 : Kernel code\n  00000000-00000000 : Kernel bss\n";
        assert_eq!(parse(hidden), None);
        assert_eq!(parse("00100000-7ffdffff : System RAM\n"), None);
    }

    #[test]
    fn this_machines_text_is_confirmed() {
        let s = running().expect("/proc/iomem shows the kernel's image to root only: run as root");
        let ks = super::super::kernel_range::read_kallsyms().unwrap();
        if let Some(r) = super::super::kernel_range::kernel_text_range(&ks) {
            assert!(s.confirms(r), "{s:x?} against {r:x?}");
        }
    }
}
