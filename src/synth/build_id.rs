//! Build ids: the NT_GNU_BUILD_ID note of an ELF file (read from its
//! PT_NOTE segments, or its SHT_NOTE sections when a file has no program
//! headers), and of the running kernel (/sys/kernel/notes).
//!
//! The synthesized MMAP2 records carry the build id of their file (proc.rs,
//! `MMAP_BUILD_ID` in misc), as the kernel writes its own with
//! `attr.build_id`. HEADER_BUILD_ID and the build-id cache are the
//! session's, at the end of a recording (session/build_ids.rs).

use std::collections::HashMap;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Mutex;

/// Longest build id perf stores (SHA-1).
pub const MAX_SIZE: usize = 20;
const NT_GNU_BUILD_ID: u32 = 3;

/// The build id in a block of ELF notes (`namesz, descsz, type, name,
/// desc`, each padded to 4), if one is there.
pub fn from_notes(b: &[u8], big: bool) -> Option<Vec<u8>> {
    let u32_at = |p: usize| -> Option<u32> {
        let w: [u8; 4] = b.get(p..p + 4)?.try_into().ok()?;
        Some(if big {
            u32::from_be_bytes(w)
        } else {
            u32::from_le_bytes(w)
        })
    };
    let mut p = 0;
    while p + 12 <= b.len() {
        let (namesz, descsz, t) = (u32_at(p)? as usize, u32_at(p + 4)? as usize, u32_at(p + 8)?);
        let name_at = p + 12;
        let desc_at = name_at + namesz.div_ceil(4) * 4;
        let next = desc_at.checked_add(descsz.div_ceil(4) * 4)?;
        if t == NT_GNU_BUILD_ID && b.get(name_at..name_at + namesz)? == b"GNU\0" {
            let id = b.get(desc_at..desc_at + descsz)?;
            return (!id.is_empty() && id.len() <= MAX_SIZE).then(|| id.to_vec());
        }
        p = next;
    }
    None
}

/// The build id of the ELF file at `path`, if it is a regular file, an
/// ELF file and has one. Opened without blocking: a FIFO at a path a
/// recording names never hangs the caller.
pub fn of_file(path: &Path) -> Option<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    of_open(&f)
}

/// The build id of the open file `f`, if it is a regular file, an ELF file
/// and has one: read from the descriptor itself (at offsets, its position
/// untouched), so the file checked is the file read.
pub fn of_open(f: &std::fs::File) -> Option<Vec<u8>> {
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    of_elf(|off, buf| f.read_exact_at(buf, off).is_ok())
}

/// The build id of an ELF image in memory (fuzzing, tests).
pub fn of_bytes(b: &[u8]) -> Option<Vec<u8>> {
    of_elf(|off, buf| {
        let Some(src) = usize::try_from(off)
            .ok()
            .and_then(|o| b.get(o..o.checked_add(buf.len())?))
        else {
            return false;
        };
        buf.copy_from_slice(src);
        true
    })
}

/// How an ELF file lays out its integers: 64- or 32-bit words, big or
/// little endian (`e_ident`'s class and data bytes).
#[derive(Clone, Copy)]
struct ElfLayout {
    is64: bool,
    big: bool,
}

impl ElfLayout {
    /// The u16 at byte `p` of `b`.
    fn u16_at(self, b: &[u8], p: usize) -> u16 {
        let w = [b[p], b[p + 1]];
        if self.big {
            u16::from_be_bytes(w)
        } else {
            u16::from_le_bytes(w)
        }
    }

    /// The u32 at byte `p` of `b`.
    fn u32_at(self, b: &[u8], p: usize) -> u32 {
        let w: [u8; 4] = b[p..p + 4].try_into().unwrap();
        if self.big {
            u32::from_be_bytes(w)
        } else {
            u32::from_le_bytes(w)
        }
    }

    /// The u64 at byte `p` of `b`.
    fn u64_at(self, b: &[u8], p: usize) -> u64 {
        let w: [u8; 8] = b[p..p + 8].try_into().unwrap();
        if self.big {
            u64::from_be_bytes(w)
        } else {
            u64::from_le_bytes(w)
        }
    }

    /// The address-sized word (u64 or u32) at byte `p` of `b`.
    fn word(self, b: &[u8], p: usize) -> u64 {
        if self.is64 {
            self.u64_at(b, p)
        } else {
            self.u32_at(b, p) as u64
        }
    }
}

/// Reads an ELF through `read_at(offset, buf)` (false: not there).
fn of_elf(read_at: impl Fn(u64, &mut [u8]) -> bool) -> Option<Vec<u8>> {
    let mut h = [0u8; 64];
    if !read_at(0, &mut h) {
        return None;
    }
    if &h[..4] != b"\x7fELF" {
        return None;
    }
    let (is64, big) = (h[4] == 2, h[5] == 2);
    let l = ElfLayout { is64, big };
    // (table offset, entry size, count) of program and section headers.
    let (phoff, shoff) = if is64 {
        (l.u64_at(&h, 32), l.u64_at(&h, 40))
    } else {
        (l.u32_at(&h, 28) as u64, l.u32_at(&h, 32) as u64)
    };
    let (phentsize, phnum, shentsize, shnum) = if is64 {
        (
            l.u16_at(&h, 54),
            l.u16_at(&h, 56),
            l.u16_at(&h, 58),
            l.u16_at(&h, 60),
        )
    } else {
        (
            l.u16_at(&h, 42),
            l.u16_at(&h, 44),
            l.u16_at(&h, 46),
            l.u16_at(&h, 48),
        )
    };
    let read = |off: u64, len: u64| -> Option<Vec<u8>> {
        if len > 1 << 20 {
            return None;
        }
        let mut b = vec![0u8; len as usize];
        read_at(off, &mut b).then_some(b)
    };
    // PT_NOTE (4): p_offset, p_filesz.
    let (off_at, size_at) = if is64 { (8, 32) } else { (4, 16) };
    if let Some(ph) = read(phoff, phentsize as u64 * phnum as u64).filter(|_| phentsize > 0) {
        for e in ph.chunks(phentsize as usize) {
            if e.len() >= size_at + 8 && l.u32_at(e, 0) == 4 {
                if let Some(id) =
                    read(l.word(e, off_at), l.word(e, size_at)).and_then(|n| from_notes(&n, big))
                {
                    return Some(id);
                }
            }
        }
    }
    // SHT_NOTE (7): sh_offset, sh_size.
    let (off_at, size_at) = if is64 { (24, 32) } else { (16, 20) };
    let sh = read(shoff, shentsize as u64 * shnum as u64).filter(|_| shentsize > 0)?;
    sh.chunks(shentsize as usize)
        .filter(|e| e.len() >= size_at + 8 && l.u32_at(e, 4) == 7)
        .find_map(|e| read(l.word(e, off_at), l.word(e, size_at)).and_then(|n| from_notes(&n, big)))
}

/// [`of_file`], remembered per path for the session (a library is mapped
/// many times by many processes).
pub fn cached(path: &str) -> Option<Vec<u8>> {
    static CACHE: Mutex<Option<HashMap<String, Option<Vec<u8>>>>> = Mutex::new(None);
    let mut g = CACHE.lock().ok()?;
    g.get_or_insert_with(HashMap::new)
        .entry(path.to_string())
        .or_insert_with(|| of_file(Path::new(path)))
        .clone()
}

/// The running kernel's build id.
pub fn of_kernel() -> Option<Vec<u8>> {
    let b = std::fs::read("/sys/kernel/notes").ok()?;
    from_notes(&b, cfg!(target_endian = "big"))
}

/// The build id in lowercase hex, as perf prints it and names its cache.
pub fn hex(id: &[u8]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// perf's build-id cache directory: `$PERF_BUILDID_DIR`, else `~/.debug`.
pub fn cache_dir() -> Option<std::path::PathBuf> {
    if let Some(d) = std::env::var_os("PERF_BUILDID_DIR") {
        return Some(d.into());
    }
    Some(std::path::PathBuf::from(std::env::var_os("HOME")?).join(".debug"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_give_the_gnu_build_id() {
        let mut n = Vec::new();
        // An unrelated note first, then the build id.
        for (name, t, desc) in [
            (&b"XYZ\0"[..], 1u32, &[1u8, 2, 3][..]),
            (b"GNU\0", 3, &[0xab; 20]),
        ] {
            n.extend_from_slice(&(name.len() as u32).to_le_bytes());
            n.extend_from_slice(&(desc.len() as u32).to_le_bytes());
            n.extend_from_slice(&t.to_le_bytes());
            n.extend_from_slice(name);
            n.extend_from_slice(desc);
            n.resize(n.len().div_ceil(4) * 4, 0);
        }
        assert_eq!(from_notes(&n, false), Some(vec![0xab; 20]));
        assert_eq!(from_notes(&n[..20], false), None);
        assert_eq!(from_notes(&[], false), None);
    }

    #[test]
    fn this_executable_and_the_kernel_have_build_ids() {
        // Debian's toolchain links with --build-id; rustc asks for one too.
        let libc = [
            "/lib/x86_64-linux-gnu/libc.so.6",
            "/usr/lib/x86_64-linux-gnu/libc.so.6",
        ]
        .iter()
        .find(|p| Path::new(p).exists());
        if let Some(p) = libc {
            let id = of_file(Path::new(p)).expect("libc has a build id");
            assert_eq!(id.len(), 20);
        }
        assert_eq!(of_file(Path::new("/proc/self/status")), None);
        if let Some(k) = of_kernel() {
            assert!(!k.is_empty());
        }
    }
}
