//! Entries of perf's build-id cache (`~/.debug`), laid out as `perf
//! buildid-cache -a` lays them out and written so that concurrent
//! recorders never write into each other's: the end-of-recording pass
//! (`build_ids.rs`) and the DSO capture ([`dso_capture`](super)) both add
//! theirs here.

use std::path::Path;

/// `AT/elf` (and an empty `AT/probes`), an entry of the cache, as a hard
/// link to the open `file`: the very file that was opened and checked
/// (linked through its descriptor, never through a path resolved again),
/// as perf links a DSO into its cache. An entry already there is kept. An
/// error where the link cannot be made (another file system, or
/// protected_hardlinks): the caller copies instead.
pub fn cache_elf_linked(at: &Path, file: &std::fs::File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let elf = at.join("elf");
    if std::fs::symlink_metadata(&elf).is_err() {
        let from = std::ffi::CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
        let to = std::ffi::CString::new(elf.as_os_str().as_bytes())?;
        // SAFETY: linkat reads two NUL-terminated paths alive for the call.
        // AT_SYMLINK_FOLLOW makes /proc's link name the open file itself;
        // the new name is never followed (EEXIST on anything there).
        let r = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            // Another recorder cached it meanwhile.
            if e.kind() != std::io::ErrorKind::AlreadyExists {
                return Err(e);
            }
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
pub fn link_build_id(dir: &Path, rel: &Path, hexid: &str) -> std::io::Result<()> {
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
