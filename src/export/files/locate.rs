//! Where the files a recording maps are found, as perf finds them: the
//! path itself when its build id is the recorded one, else the build-id
//! cache's copy; separate debug files in the cache and /usr/lib/debug,
//! those of the recorded build id only.
//! With `--symfs DIR` every one of those paths is under DIR (perf's
//! `symbol__join_symfs`: DIR + the recorded path; `DIR,flat`: DIR + its
//! base name, the layout option perf gained after 6.12) and the cache is DIR/.debug,
//! as perf sets it; /proc/kallsyms is DIR/proc/kallsyms and the vDSO only
//! the cache's (perf: "every single file opened by perf is relative to
//! symfs"). Where none has the file or its symbols, a debuginfod
//! server may ([`crate::export::files::debuginfod`]).

use std::path::{Path, PathBuf};

use crate::export::files::debuginfod::Debuginfod;
use crate::export::files::file::FileBytes;
use crate::export::recording::process::Mapping;
use crate::format::side_band::os_path;
use crate::synth::build_id;

/// `--symfs DIR[,flat|,hierarchy]`: the root the recorded paths are looked up under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symfs {
    /// The directory.
    pub dir: PathBuf,
    /// Only base names are looked up in `dir` (perf's `flat` layout).
    pub flat: bool,
}

impl Symfs {
    /// perf's `--symfs` argument: `DIR`, `DIR,flat` or `DIR,hierarchy`.
    pub fn parse(arg: &str) -> Symfs {
        let (dir, flat) = match arg.rsplit_once(',') {
            Some((dir, "flat")) => (dir, true),
            Some((dir, "hierarchy")) => (dir, false),
            _ => (arg, false),
        };
        Symfs {
            dir: dir.into(),
            flat,
        }
    }

    /// `path` (a recorded path's text) under the root, as perf's
    /// path__join (DIR + "/" + path).
    pub(crate) fn join(&self, path: &str) -> PathBuf {
        let path = os_path(path);
        let path = match path.file_name() {
            Some(name) if self.flat => Path::new(name),
            _ => path.strip_prefix("/").unwrap_or(&path),
        };
        self.dir.join(path)
    }
}

/// Where one export looks for files.
#[derive(Default)]
pub(crate) struct Locate {
    /// `--symfs`.
    pub(crate) symfs: Option<Symfs>,
    /// The recording is from the running kernel (its vDSO is ours).
    pub(crate) this_kernel: bool,
    /// The debuginfod servers to ask, if any.
    pub(crate) debuginfod: Option<Debuginfod>,
}

impl Locate {
    /// A recorded path as this machine has it (under `--symfs`).
    fn real(&self, path: &str) -> PathBuf {
        match &self.symfs {
            Some(s) => s.join(path),
            None => os_path(path),
        }
    }

    /// The bytes of the file `m` maps (checked by build id, else the
    /// cache's copy, else a debuginfod server's; the vDSO when the
    /// recording is from this kernel) and where its separate debug
    /// files may be.
    pub(crate) fn image(&self, m: &Mapping) -> Option<(FileBytes, Vec<PathBuf>)> {
        if &*m.path == "[vdso]" {
            return self
                .this_kernel
                .then(vdso)
                .flatten()
                .map(|v| (FileBytes::Owned(v), Vec::new()));
        }
        let id = m.build_id.as_deref();
        let (bytes, id) = match self.elf_path(&m.path, id) {
            Some((path, id)) => (crate::export::files::file::map(&path)?, id),
            None => {
                let id = id?;
                let fetched = self.debuginfod.as_ref()?.executable(id, &m.path)?;
                (
                    crate::export::files::file::map(&fetched)?,
                    Some(id.to_vec()),
                )
            }
        };
        let mut debug = self.debug_files(&m.path, id.as_deref());
        if let (Some(d), Some(id)) = (&self.debuginfod, &id) {
            if debug.is_empty() && !has_symtab(&bytes) {
                debug.extend(d.debuginfo(id, &m.path));
            }
        }
        Some((bytes, debug))
    }

    /// The file mapped as `path`, and its build id: `path` itself (under
    /// `--symfs`) when its build id is the recorded one (or none was
    /// recorded), else the build-id cache's copy
    /// (`CACHE/.build-id/xx/rest/elf`, as perf and perfz fill it).
    fn elf_path(&self, path: &str, id: Option<&[u8]>) -> Option<(PathBuf, Option<Vec<u8>>)> {
        let p = self.real(path);
        let on_disk = build_id::of_file(&p);
        let Some(id) = id else {
            return p.is_file().then_some((p, on_disk));
        };
        if on_disk.as_deref() == Some(id) {
            return Some((p, on_disk));
        }
        let cached = self.cache_entry(id)?.join("elf");
        cached.is_file().then(|| (cached, Some(id.to_vec())))
    }

    /// The build-id cache (`~/.debug`, `$PERF_BUILDID_DIR`; `DIR/.debug`
    /// under `--symfs`, as perf's symbol__config_symfs sets it).
    fn cache_dir(&self) -> Option<PathBuf> {
        match &self.symfs {
            Some(s) => Some(s.dir.join(".debug")),
            None => build_id::cache_dir(),
        }
    }

    /// `CACHE/.build-id/xx/rest` (a directory of the cache).
    fn cache_entry(&self, id: &[u8]) -> Option<PathBuf> {
        let hex = build_id::hex(id);
        if hex.len() < 3 {
            return None; // no build id (perf's are 20 bytes, some 16 or 8)
        }
        Some(
            self.cache_dir()?
                .join(".build-id")
                .join(&hex[..2])
                .join(&hex[2..]),
        )
    }

    /// The separate debug files of the file mapped as `path` there are:
    /// of [`Locate::debug_paths`], those of build id `id` (any file there
    /// where none was recorded). Another build's debug file would name
    /// every frame wrongly; perf rejects it too ("build id mismatch").
    fn debug_files(&self, path: &str, id: Option<&[u8]>) -> Vec<PathBuf> {
        let mut v = self.debug_paths(path, id);
        match id {
            Some(id) => v.retain(|p| build_id::of_file(p).as_deref() == Some(id)),
            None => v.retain(|p| p.is_file()),
        }
        v
    }

    /// Where a file's separate debug symbols may be, perf's order: the
    /// build-id cache's debug file, `/usr/lib/debug/.build-id/xx/rest.debug`,
    /// `/usr/lib/debug/PATH` (the last two under `--symfs`).
    fn debug_paths(&self, path: &str, id: Option<&[u8]>) -> Vec<PathBuf> {
        let mut v = Vec::new();
        if let Some(id) = id.filter(|id| id.len() >= 2) {
            let hex = build_id::hex(id);
            v.extend(self.cache_entry(id).map(|d| d.join("debug")));
            let by_id = format!("/usr/lib/debug/.build-id/{}/{}.debug", &hex[..2], &hex[2..]);
            v.push(self.real(&by_id));
        }
        v.push(self.real(&format!("/usr/lib/debug/{}", path.trim_start_matches('/'))));
        v
    }
}

/// Whether an ELF image has a symbol table (.symtab): a stripped one has
/// only .dynsym, and its debug file is worth fetching.
fn has_symtab(bytes: &[u8]) -> bool {
    use object::{Object, ObjectSection};
    object::File::parse(bytes)
        .ok()
        .and_then(|f| f.section_by_name(".symtab").map(|s| s.size() > 0))
        .unwrap_or(false)
}

/// This process's vDSO image (the same for every process of this kernel).
fn vdso() -> Option<Vec<u8>> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let line = maps.lines().find(|l| l.ends_with("[vdso]"))?;
    let (range, _) = line.split_once(' ')?;
    let (a, b) = range.split_once('-')?;
    let (start, end) = (
        u64::from_str_radix(a, 16).ok()?,
        u64::from_str_radix(b, 16).ok()?,
    );
    // SAFETY: [start, end) is this process's vDSO mapping (read-only, mapped
    // for the process's whole life); it is copied out at once.
    let bytes = unsafe { std::slice::from_raw_parts(start as *const u8, (end - start) as usize) };
    Some(bytes.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symfs_joins_as_perf_joins() {
        let s = Symfs::parse("/sym");
        assert_eq!(s.join("/usr/bin/prog"), Path::new("/sym/usr/bin/prog"));
        let flat = Symfs::parse("/sym,flat");
        assert!(flat.flat);
        assert_eq!(flat.join("/usr/bin/prog"), Path::new("/sym/prog"));
        assert_eq!(Symfs::parse("/a,b").dir, Path::new("/a,b"));
        assert_eq!(Symfs::parse("/sym,hierarchy"), s);
        let l = Locate {
            symfs: Some(s),
            ..Default::default()
        };
        assert_eq!(l.cache_dir(), Some(PathBuf::from("/sym/.debug")));
        let d = l.debug_paths("/usr/bin/prog", Some(&[0xab, 0xcd, 0xef]));
        assert_eq!(
            d,
            [
                "/sym/.debug/.build-id/ab/cdef/debug",
                "/sym/usr/lib/debug/.build-id/ab/cdef.debug",
                "/sym/usr/lib/debug/usr/bin/prog"
            ]
            .map(PathBuf::from)
        );
        // A build id of no bytes (a hostile MMAP2's) is none: no panic.
        assert_eq!(
            l.debug_paths("/usr/bin/prog", Some(&[])),
            [PathBuf::from("/sym/usr/lib/debug/usr/bin/prog")]
        );
        assert_eq!(l.cache_entry(&[]), None);
    }
}
