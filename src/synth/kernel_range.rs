//! Where the kernel's text lies this boot, read from /proc/kallsyms once a
//! boot. The listing is 120 000-odd lines that the kernel formats on every
//! read (about 40 ms of CPU here), and every recording needs two numbers
//! of it: they are kept in the user's cache (`$XDG_CACHE_HOME/perfz`, else
//! `~/.cache/perfz`; [`kernel_cache`](super::kernel_cache) says how it is
//! read and written safely) under the boot's id, and taken from there only
//! while the running kernel confirms both: the listing's first page still
//! says the same `_text` (KASLR, and addresses the user may see:
//! `kptr_restrict`), and the end covers the kernel's code and lies within
//! its image as /proc/iomem gives them ([`super::kernel_image`]).
//! Where /proc/iomem hides them (not root), nothing can confirm a kept
//! range cheaply: the cache is neither read nor written.

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::kernel::kernel_text_range;
use super::kernel_cache::CacheDir;
use super::kernel_image::{self, ImageSpan};

/// `(_text, end of text)` of the running kernel, or why not; `notes` gets
/// why a cache that is there is not used.
pub fn this_boot(notes: &mut Vec<String>) -> Result<(u64, u64), String> {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok();
    let boot = boot.as_deref().map(str::trim).filter(|b| !b.is_empty());
    let kept = match (boot, kernel_image::running(), cache_file()) {
        (Some(boot), Some(span), Some(file)) => Some((boot, span, file)),
        _ => None,
    };
    if let Some((boot, span, file)) = &kept {
        match cached(file, boot, first_page_text(), *span) {
            Ok(Some(r)) => return Ok(r),
            Ok(None) => {}
            Err(why) => notes.push(why),
        }
    }
    let ks = read_kallsyms().map_err(|e| format!("cannot read /proc/kallsyms: {e}"))?;
    let r = kernel_text_range(&ks).ok_or_else(|| {
        "kernel addresses are hidden (/proc/sys/kernel/kptr_restrict); kernel frames will not be symbolized".to_string()
    })?;
    if let Some((boot, span, file)) = &kept {
        // A cache that cannot be written costs the next recording the read
        // (and one the kernel would not confirm is not kept).
        if span.confirms(r) {
            let _ = keep(file, boot, r);
        }
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

/// `file`'s directory and name.
fn split(file: &Path) -> (&Path, &OsStr) {
    let name = file.file_name().expect("a cache file's name");
    (file.parent().expect("a cache directory"), name)
}

/// The range kept in `file` for `boot`, where its start is `text` (the
/// listing's `_text` now) and `span` (the running kernel's image)
/// confirms its end; `Err` says why the cache's directory is not trusted.
fn cached(
    file: &Path,
    boot: &str,
    text: Option<u64>,
    span: ImageSpan,
) -> Result<Option<(u64, u64)>, String> {
    let (dir, name) = split(file);
    let Some(s) = CacheDir::open(dir, false)?.and_then(|d| d.read(name)) else {
        return Ok(None);
    };
    let w: Vec<&str> = s.split_whitespace().collect();
    let [b, start, end] = w[..] else {
        return Ok(None);
    };
    let (Ok(start), Ok(end)) = (u64::from_str_radix(start, 16), u64::from_str_radix(end, 16))
    else {
        return Ok(None);
    };
    let ok = b == boot && Some(start) == text && span.confirms((start, end));
    Ok(ok.then_some((start, end)))
}

/// Keeps `(start, end)` for `boot` in `file` (written aside under a fresh
/// name and renamed: a reader sees the old or the new whole).
fn keep(file: &Path, boot: &str, (start, end): (u64, u64)) -> Result<(), String> {
    let (dir, name) = split(file);
    let dir = CacheDir::open(dir, true)?.ok_or("no cache directory")?;
    let line = format!("{boot} {start:x} {end:x}\n");
    dir.replace(name, line.as_bytes())
        .map_err(|e| e.to_string())
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
        let span = ImageSpan {
            code: 0x2000000,
            image: 0x3000000,
        };
        let got = |boot, text, span| cached(&file, boot, text, span).unwrap();
        assert_eq!(got("boot-a", Some(r.0), span), Some(r));
        // Another boot, another _text (KASLR), or addresses hidden now.
        assert_eq!(got("boot-b", Some(r.0), span), None);
        assert_eq!(got("boot-a", Some(r.0 + 0x200000), span), None);
        assert_eq!(got("boot-a", None, span), None);
        // An end short of the kernel's code, or past its image.
        let longer = ImageSpan {
            code: 0x2801000,
            ..span
        };
        assert_eq!(got("boot-a", Some(r.0), longer), None);
        let shorter = ImageSpan {
            image: 0x2000000,
            ..span
        };
        assert_eq!(got("boot-a", Some(r.0), shorter), None);
        std::fs::write(&file, "boot-a zz 1\n").unwrap();
        assert_eq!(got("boot-a", Some(r.0), span), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_link_planted_at_the_name_written_aside_writes_through_to_nothing() {
        use std::os::unix::fs::DirBuilderExt;
        let dir =
            std::env::temp_dir().join(format!("perfz-kernel-range-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = dir.join("perfz");
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&cache)
            .unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, "precious\n").unwrap();
        // The name an older perfz wrote aside (its pid), planted.
        let aside = cache.join(format!("kernel-text.{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &aside).unwrap();
        let file = cache.join("kernel-text");
        let r = (0xffffffff81000000, 0xffffffff83800000);
        let _ = keep(&file, "boot-a", r);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
        let m = std::fs::symlink_metadata(&file).unwrap();
        assert!(m.file_type().is_file(), "the cache is {m:?}");
        let kept = std::fs::read_to_string(&file).unwrap();
        assert_eq!(kept, "boot-a ffffffff81000000 ffffffff83800000\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_first_page_gives_the_listings_text() {
        let whole = kernel_text_range(&read_kallsyms().unwrap()).map(|r| r.0);
        assert_eq!(first_page_text(), whole);
    }
}
