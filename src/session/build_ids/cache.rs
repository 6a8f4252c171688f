//! Entries of perf's build-id cache (`~/.debug`), laid out as `perf
//! buildid-cache -a` lays them out and written so that concurrent
//! recorders never write into each other's: the end-of-recording pass
//! ([`build_ids`](super)) and the DSO capture
//! ([`dso_capture`](super::super::dso_capture)) both add theirs here.

use std::path::Path;

use crate::synth::build_id;

/// `AT/elf` (and an empty `AT/probes`), an entry of the cache, from
/// `source` (the DSO's path, or where its bytes can still be read: a
/// process's `/proc/PID/map_files/` entry); it must have build id `id`.
/// An entry already there is kept.
pub fn cache_elf(at: &Path, source: &Path, id: &[u8]) -> std::io::Result<()> {
    let elf = at.join("elf");
    if !elf.exists() {
        // The file must still be the one recorded.
        if build_id::of_file(source).as_deref() != Some(id) {
            return Err(std::io::Error::other("changed since it was mapped"));
        }
        match std::fs::hard_link(source, &elf) {
            Ok(()) => {}
            // Another recorder cached it meanwhile.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            // Another file system: a copy, never written over an existing
            // entry (which may be a hard link to the very file we copy from).
            Err(_) => put_new(&elf, |f| {
                std::io::copy(&mut std::fs::File::open(source)?, f).map(drop)
            })?,
        }
    }
    put_probes(at)
}

/// `AT/elf` (and an empty `AT/probes`), an entry of the cache, written by
/// `write` into a new file of its own that is linked in only when whole
/// (`write` returned Ok) and only if no entry is there yet: an entry
/// already there is kept and `write` is not called.
pub fn cache_elf_with(
    at: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let elf = at.join("elf");
    if std::fs::symlink_metadata(&elf).is_err() {
        put_new(&elf, write)?;
    }
    put_probes(at)
}

/// An empty `AT/probes`, as perf's entries have.
fn put_probes(at: &Path) -> std::io::Result<()> {
    let probes = at.join("probes");
    if !probes.exists() {
        put_new(&probes, |_| Ok(()))?;
    }
    Ok(())
}

/// `DIR/.build-id/<id[..2]>/<id[2..]>`, linking to `../../<rel>/<id>`.
pub fn link_build_id(dir: &Path, rel: &str, hexid: &str) -> std::io::Result<()> {
    let link_dir = dir.join(".build-id").join(&hexid[..2]);
    std::fs::create_dir_all(&link_dir)?;
    let link = link_dir.join(&hexid[2..]);
    if std::fs::symlink_metadata(&link).is_err() {
        match std::os::unix::fs::symlink(Path::new("../..").join(rel).join(hexid), &link) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// `AT/kallsyms`, the kernel's entry of the cache, from /proc/kallsyms.
/// An entry already there is kept.
pub fn cache_kallsyms(at: &Path) -> std::io::Result<()> {
    let k = at.join("kallsyms");
    if !k.exists() {
        let syms = std::fs::read("/proc/kallsyms")?;
        put_new(&k, |f| std::io::Write::write_all(f, &syms))?;
    }
    Ok(())
}

/// Creates `path` by writing a temporary file beside it and linking it in
/// place only if `path` is still free: concurrent recorders never write
/// into each other's entries (or through a hard link into a cached binary).
/// The temporary file has a random name and is created exclusively
/// (O_CREAT | O_EXCL, which never follows a symlink planted at that name),
/// and it is written through its own descriptor; whatever sits at `path`
/// already (a symlink included) is taken as the entry and never written.
fn put_new(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".perfz-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    write(tmp.as_file_mut())?;
    tmp.as_file().sync_all()?;
    // linkat without AT_SYMLINK_FOLLOW: fails with EEXIST on anything at
    // `path`, a dangling symlink too.
    let r = std::fs::hard_link(tmp.path(), path);
    drop(tmp); // removes the temporary name
    match r {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        r => r,
    }
}
