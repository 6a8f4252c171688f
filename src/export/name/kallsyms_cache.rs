//! This boot's kernel functions kept between exports. /proc/kallsyms is
//! 200 000-odd lines the kernel formats on every read (two thirds of a
//! frame-pointer export's CPU); the table built from its function lines
//! (as bytes: name/table/bytes.rs; parsing the lines again took a
//! frame-pointer export 20 ms) is kept in perfz's cache directory
//! (`kallsyms-table`, beside the `kallsyms` lines an older perfz keeps;
//! written and read as [`CacheDir`](crate::synth::kernel_cache::CacheDir)
//! does: ours, mode 0600, no link followed) under a first line that says
//! what it holds:
//! the boot's id, `_text` as the listing's first page gives it now (KASLR,
//! and whether addresses are shown at all), and the loaded modules (names,
//! sizes, addresses). A kept table is used only where all three are still
//! so. BPF programs' symbols come and go within a boot: a kept table may
//! lack the newest (perf reads the listing as it is at its start).

use std::ffi::OsStr;
use std::hash::Hasher;
use std::path::Path;

use crate::synth::kernel_cache::CacheDir;

const NAME: &str = "kallsyms-table";
/// The most a kept table may hold (a kernel with every module loaded lists
/// some 20 MB of functions).
const MAX_BYTES: u64 = 64 << 20;

/// What a kept table must say of itself to be this boot's: None where
/// that cannot be known (no boot id, addresses hidden).
fn key() -> Option<String> {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let text = crate::synth::kernel_range::this_boot_text()?;
    let modules = std::fs::read_to_string("/proc/modules").unwrap_or_default();
    let mut h = std::hash::DefaultHasher::new();
    for l in modules.lines() {
        // name size refcount deps state address: not the counts.
        let f: Vec<&str> = l.split_whitespace().collect();
        for i in [0, 1, 5] {
            h.write(f.get(i).unwrap_or(&"").as_bytes());
            h.write_u8(0);
        }
    }
    Some(format!(
        "perfz-kallsyms 2 {} {text:x} {:016x}\n",
        boot.trim(),
        h.finish()
    ))
}

/// The table's bytes kept for this boot, if they are.
pub(crate) fn load() -> Option<Vec<u8>> {
    load_from(&crate::synth::kernel_range::cache_dir()?, &key()?)
}

/// Keeps `table` (the bytes of the table of /proc/kallsyms' functions)
/// for this boot; a cache that cannot be written costs the next export
/// the read.
pub(crate) fn keep(table: &[u8]) {
    if let (Some(dir), Some(key)) = (crate::synth::kernel_range::cache_dir(), key()) {
        keep_in(&dir, &key, table);
    }
}

fn load_from(dir: &Path, key: &str) -> Option<Vec<u8>> {
    let dir = CacheDir::open(dir, false).ok()??;
    let mut kept = dir.read_bytes(OsStr::new(NAME), MAX_BYTES)?;
    if !kept.starts_with(key.as_bytes()) {
        return None;
    }
    kept.drain(..key.len());
    Some(kept)
}

fn keep_in(dir: &Path, key: &str, kept: &[u8]) {
    if kept.len() as u64 + key.len() as u64 > MAX_BYTES {
        return;
    }
    let Ok(Some(dir)) = CacheDir::open(dir, true) else {
        return;
    };
    let mut all = Vec::with_capacity(key.len() + kept.len());
    all.extend_from_slice(key.as_bytes());
    all.extend_from_slice(kept);
    let _ = dir.replace(OsStr::new(NAME), &all);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_list_is_used_under_its_own_key_only() {
        let root =
            std::env::temp_dir().join(format!("perfz-kallsyms-cache-{}", std::process::id()));
        let dir = root.join("perfz");
        let _ = std::fs::create_dir_all(&root);
        let lines = b"ffffffff81000000 T _text\nffffffff81000100 t helper\t[kvm]\n";
        let key = "perfz-kallsyms 1 boot-a ffffffff81000000 0123456789abcdef\n";
        keep_in(&dir, key, lines);
        assert_eq!(load_from(&dir, key).as_deref(), Some(&lines[..]));
        // Another boot, _text (KASLR) or set of modules: not used.
        let other = "perfz-kallsyms 1 boot-b ffffffff81000000 0123456789abcdef\n";
        assert_eq!(load_from(&dir, other), None);
        // A list kept by someone else, or writable by others: not read.
        use std::os::unix::fs::PermissionsExt;
        let file = dir.join(NAME);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert_eq!(load_from(&dir, key), None);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn this_boots_key_names_the_boot_and_text() {
        // Not root, or addresses hidden: no key, nothing kept.
        if let Some(k) = key() {
            let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
            assert!(
                k.starts_with(&format!("perfz-kallsyms 2 {} ", boot.trim())),
                "{k}"
            );
            assert!(k.ends_with('\n'));
            assert_eq!(
                key(),
                Some(k),
                "the key is the same from one call to the next"
            );
        }
    }
}
