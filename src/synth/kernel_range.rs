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

use crate::notes::Notes;
use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::kernel_cache::CacheDir;
use super::kernel_image::{self, ImageSpan};

/// `(_text, end of text)` of the running kernel, or why not; `notes` gets
/// why a cache that is there is not used.
pub fn this_boot(notes: &mut Notes) -> Result<(u64, u64), String> {
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

/// `_text` of this boot, as the listing's first page gives it (it comes in
/// the first lines), if it does (not to a user kptr_restrict hides it from).
pub fn this_boot_text() -> Option<u64> {
    first_page_text()
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

/// perfz's cache directory: `$XDG_CACHE_HOME/perfz`, else `~/.cache/perfz`.
pub fn cache_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".cache"),
    };
    Some(dir.join("perfz"))
}

fn cache_file() -> Option<PathBuf> {
    Some(cache_dir()?.join("kernel-text"))
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

    #[test]
    fn finds_text_and_skips_modules() {
        let ks = b"ffffffff81000000 T _text\nffffffff81001000 T foo\nffffffff82000000 T _etext\nffffffffc0000000 t modfn\t[ext4]\n";
        assert_eq!(
            kernel_text_range(ks),
            Some((0xffffffff81000000, 0xffffffff82001000))
        );
        assert_eq!(kernel_text_range(b"0000000000000000 T _text\n"), None);
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
        let ks = read_kallsyms().expect("/proc/kallsyms");
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
