//! Where the kernel's text lies this boot, read from /proc/kallsyms once a
//! boot. The listing is 120 000-odd lines that the kernel formats on every
//! read (about 40 ms of CPU here), and every recording needs two numbers
//! of it: they are kept in the user's cache (`$XDG_CACHE_HOME/perfz`, else
//! `~/.cache/perfz`) under the boot's id, and taken from there only while
//! the listing's first page still says the same `_text` (KASLR, and
//! addresses the user may see: `kptr_restrict`).

use std::io::Read;
use std::path::{Path, PathBuf};

use super::kernel::kernel_text_range;

/// `(_text, end of text)` of the running kernel, or why not.
pub fn this_boot() -> Result<(u64, u64), String> {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok();
    let cache = cache_file();
    if let (Some(boot), Some(cache)) = (&boot, &cache) {
        if let Some(r) = cached(cache, boot.trim(), first_page_text()) {
            return Ok(r);
        }
    }
    let ks = read_kallsyms().map_err(|e| format!("cannot read /proc/kallsyms: {e}"))?;
    let r = kernel_text_range(&ks).ok_or_else(|| {
        "kernel addresses are hidden (/proc/sys/kernel/kptr_restrict); kernel frames will not be symbolized".to_string()
    })?;
    if let (Some(boot), Some(cache)) = (&boot, &cache) {
        // A cache that cannot be written costs the next recording the read.
        let _ = keep(cache, boot.trim(), r);
    }
    Ok(r)
}

/// /proc/kallsyms whole (its size says 0: room for a big listing up front,
/// so it is read without growing the buffer).
pub(super) fn read_kallsyms() -> std::io::Result<Vec<u8>> {
    let mut v = Vec::with_capacity(16 << 20);
    std::fs::File::open("/proc/kallsyms")?.read_to_end(&mut v)?;
    Ok(v)
}

/// `_text` as the listing's first page gives it (it comes in the first
/// lines), if it does.
fn first_page_text() -> Option<u64> {
    let mut page = vec![0u8; 4096];
    let n = std::fs::File::open("/proc/kallsyms")
        .ok()?
        .read(&mut page)
        .ok()?;
    let text = page[..n]
        .split(|&b| b == b'\n')
        .find(|l| l.ends_with(b" _text"))?;
    let addr = std::str::from_utf8(text.split(|&b| b == b' ').next()?).ok()?;
    u64::from_str_radix(addr, 16).ok().filter(|&a| a != 0)
}

fn cache_file() -> Option<PathBuf> {
    let dir = match std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".cache"),
    };
    Some(dir.join("perfz").join("kernel-text"))
}

/// The range kept in `file` for `boot`, where its start is `text` (the
/// listing's `_text` now).
fn cached(file: &Path, boot: &str, text: Option<u64>) -> Option<(u64, u64)> {
    let s = std::fs::read_to_string(file).ok()?;
    let mut w = s.split_whitespace();
    if w.next()? != boot {
        return None;
    }
    let start = u64::from_str_radix(w.next()?, 16).ok()?;
    let end = u64::from_str_radix(w.next()?, 16).ok()?;
    (Some(start) == text && end > start).then_some((start, end))
}

/// Keeps `(start, end)` for `boot` in `file` (written aside and renamed:
/// a reader sees the old or the new whole).
fn keep(file: &Path, boot: &str, (start, end): (u64, u64)) -> std::io::Result<()> {
    std::fs::create_dir_all(file.parent().expect("a cache directory"))?;
    let aside = file.with_extension(format!("{}", std::process::id()));
    std::fs::write(&aside, format!("{boot} {start:x} {end:x}\n"))?;
    std::fs::rename(&aside, file).inspect_err(|_| {
        let _ = std::fs::remove_file(&aside);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_range_is_used_for_its_boot_and_its_text_only() {
        let dir = std::env::temp_dir().join(format!("perfz-kernel-range-{}", std::process::id()));
        let file = dir.join("perfz").join("kernel-text");
        let r = (0xffffffff81000000, 0xffffffff83800000);
        keep(&file, "boot-a", r).unwrap();
        assert_eq!(cached(&file, "boot-a", Some(r.0)), Some(r));
        // Another boot, another _text (KASLR), or addresses hidden now.
        assert_eq!(cached(&file, "boot-b", Some(r.0)), None);
        assert_eq!(cached(&file, "boot-a", Some(r.0 + 0x200000)), None);
        assert_eq!(cached(&file, "boot-a", None), None);
        std::fs::write(&file, "boot-a zz 1\n").unwrap();
        assert_eq!(cached(&file, "boot-a", Some(r.0)), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_first_page_gives_the_listings_text() {
        let whole = kernel_text_range(&read_kallsyms().unwrap()).map(|r| r.0);
        assert_eq!(first_page_text(), whole);
    }
}
