//! A mapped file copied into the build-id cache: at most the bytes that
//! were checked, read from the descriptor that was checked, dropped when
//! the file changed meanwhile, within the per-file and per-recording limits
//! (the recording's bytes reserved before the copy), and never readable by
//! anyone the original was not readable by.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path};
use std::sync::atomic::{AtomicU64, Ordering};

use super::cache;
use crate::synth::build_id;

/// An open file with its status as read from that descriptor (fstat): what
/// the limits were checked against is what is copied.
pub struct Checked {
    file: File,
    md: Metadata,
}

/// What says a file changed: its size and its modification and change times.
fn stamp(md: &Metadata) -> (u64, i64, i64, i64, i64) {
    (
        md.len(),
        md.mtime(),
        md.mtime_nsec(),
        md.ctime(),
        md.ctime_nsec(),
    )
}

impl Checked {
    /// `file` with its status as of now.
    pub fn new(file: File) -> io::Result<Checked> {
        let md = file.metadata()?;
        Ok(Checked { file, md })
    }

    /// The file's device and inode numbers.
    pub fn dev_ino(&self) -> (u64, u64) {
        (self.md.dev(), self.md.ino())
    }

    /// The size checked: the most bytes ever copied.
    pub fn size(&self) -> u64 {
        self.md.len()
    }

    /// Whether the cache may hold the file itself, a hard link to it, as
    /// perf's does: a regular file of the recorder's user or root that
    /// nobody else can write. A link to anyone else's file would let them
    /// change the cache's entry after it was checked.
    pub fn linkable(&self) -> bool {
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        self.md.is_file()
            && (self.md.uid() == 0 || self.md.uid() == me)
            && self.md.mode() & 0o022 == 0
    }

    /// Why it is not copied: not a regular file, or over `max` bytes.
    pub fn refusal(&self, max: u64) -> Option<String> {
        if !self.md.is_file() {
            return Some("not a regular file".into());
        }
        let size = self.size();
        (size > max).then(|| format!("{size} bytes, over the {max}-byte limit"))
    }

    /// Copies the checked size from the checked descriptor into `out`,
    /// never more; an error when the file changed meanwhile (fewer bytes
    /// there, another size or time than checked), and then what `out` holds
    /// is to be dropped.
    pub fn copy_to(&self, out: &mut File) -> io::Result<()> {
        let copied = io::copy(&mut (&self.file).take(self.size()), out)?;
        let now = self.file.metadata()?;
        if copied != self.size() || stamp(&now) != stamp(&self.md) {
            return Err(io::Error::other("changed while it was copied"));
        }
        Ok(())
    }

    /// The mode of a copy, whose owner is the recorder (root): read and
    /// write for it, and read for the group and others only where the
    /// original was readable by its group and by others, that is by anyone.
    pub fn copy_mode(&self) -> u32 {
        if self.md.mode() & 0o044 == 0o044 {
            0o644
        } else {
            0o600
        }
    }
}

/// The bytes one recording may copy, reserved before each copy so that no
/// race (a file grown meanwhile, copies side by side) passes the limit.
pub struct Budget {
    used: AtomicU64,
    max: u64,
}

impl Budget {
    pub const fn new(max: u64) -> Budget {
        Budget {
            used: AtomicU64::new(0),
            max,
        }
    }

    /// Starts over, for a new recording.
    pub fn reset(&self) {
        self.used.store(0, Ordering::SeqCst);
    }

    /// Reserves `n` bytes; false, reserving nothing, when they would pass
    /// the limit.
    pub fn reserve(&self, n: u64) -> bool {
        self.used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |u| {
                u.checked_add(n).filter(|&t| t <= self.max)
            })
            .is_ok()
    }

    /// Gives back `n` bytes reserved for a copy that was dropped.
    pub fn release(&self, n: u64) {
        let _ = self
            .used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |u| {
                Some(u.saturating_sub(n))
            });
    }

    /// The bytes reserved so far.
    #[cfg(test)]
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::SeqCst)
    }
}

/// Keeps `src`, mapped at `path`, in the build-id cache at `dir` in perf's
/// layout (`DIR/PATH/<id>/elf` and its `.build-id` link), when it is a
/// regular file with a build id (the record's `want` where it carries
/// one); returns the build id. The entry is a hard link to `src` where
/// [`Checked::linkable`] (and the file system allows it), else a copy of
/// at most `max_file` bytes whose own build id is checked too: the entry
/// holds what was mapped.
pub fn keep(
    dir: &Path,
    path: &str,
    src: &Checked,
    want: Option<&[u8]>,
    budget: &Budget,
    max_file: u64,
) -> Result<Vec<u8>, String> {
    if let Some(why) = src.refusal(u64::MAX) {
        return Err(why);
    }
    let id = build_id::of_open(&src.file).ok_or("no build id")?;
    if want.is_some_and(|b| b != id) {
        return Err("another file than the one mapped".into());
    }
    // The recorded path's bytes (not UTF-8 ones too).
    let file = crate::format::side_band::os_path(path);
    let rel = file.strip_prefix("/").unwrap_or(&file);
    if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err("not a plain absolute path".into());
    }
    let hexid = build_id::hex(&id);
    let at = dir.join(rel).join(&hexid);
    std::fs::create_dir_all(&at).map_err(|e| e.to_string())?;
    let linked = src.linkable() && cache::cache_elf_linked(&at, &src.file).is_ok();
    let copied = || {
        cache::cache_elf_with(&at, |f| match src.refusal(max_file) {
            Some(why) => Err(io::Error::other(why)),
            None => copy_within(src, f, &id, budget),
        })
    };
    if !linked {
        if let Err(e) = copied() {
            let _ = std::fs::remove_dir(&at); // when nothing is left in it
            return Err(e.to_string());
        }
    }
    cache::link_build_id(dir, rel, &hexid).map_err(|e| e.to_string())?;
    Ok(id)
}

/// Copies `src` into `out` within the recording's `budget`, with build id
/// `id` and the mode of a copy ([`Checked::copy_mode`]); the bytes reserved
/// are given back when the copy is dropped.
fn copy_within(src: &Checked, out: &mut File, id: &[u8], budget: &Budget) -> io::Result<()> {
    let size = src.size();
    if !budget.reserve(size) {
        return Err(io::Error::other(format!(
            "the capture's {} bytes are used",
            budget.max
        )));
    }
    let copied = src.copy_to(out).and_then(|()| {
        if build_id::of_open(out).as_deref() != Some(id) {
            return Err(io::Error::other("changed while it was copied"));
        }
        out.set_permissions(std::fs::Permissions::from_mode(src.copy_mode()))
    });
    if copied.is_err() {
        budget.release(size);
    }
    copied
}
