//! Names for addresses: the function symbols of the ELF files the maps
//! name (checked by build id, else found in the build-id cache perfz and
//! perf fill), and the kernel's from /proc/kallsyms. Symbols are looked up
//! as perf does: a symbol covers [start, start + size), one of size 0 runs
//! to the next symbol.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol, SectionKind, SymbolKind};

use super::file::FileBytes;
use super::inline::Inline;
use super::process::Mapping;
use crate::synth::build_id;

/// A symbol as read, before duplicates are chosen between.
pub(super) struct Sym {
    pub start: u64,
    pub end: u64,
    pub name: Arc<str>,
    pub weak: bool,
    pub global: bool,
}

/// Which of two symbols at one address perf keeps (util/symbol.c,
/// choose_best_symbol): one with a size, not weak, global, with fewer
/// leading underscores, with the longer name; else the first.
fn better(a: &Sym, b: &Sym) -> bool {
    let key = |s: &Sym| {
        (
            s.end > s.start,
            !s.weak,
            s.global,
            std::cmp::Reverse(s.name.bytes().take_while(|&c| c == b'_').count()),
            s.name.len(),
        )
    };
    key(b) > key(a)
}

/// Sorted, non-overlapping symbols: (start, end, name).
#[derive(Default)]
pub struct Table(Vec<(u64, u64, Arc<str>)>);

impl Table {
    /// An ELF file's table: duplicates chosen between, then each symbol of
    /// size 0 runs to the next (perf's dso__load_sym order).
    pub(super) fn new(v: Vec<Sym>) -> Table {
        Table::build(v, false)
    }

    /// The kernel's: ends fixed first, then duplicates chosen between
    /// (perf's __dso__load_kallsyms order), so of several names at one
    /// address the last listed is the one with a size, and wins.
    fn kallsyms(v: Vec<Sym>) -> Table {
        Table::build(v, true)
    }

    fn build(mut v: Vec<Sym>, ends_first: bool) -> Table {
        // Stable: of equals, the first in the file stays first.
        v.sort_by_key(|s| s.start);
        if ends_first {
            for i in 0..v.len() {
                if v[i].end <= v[i].start {
                    v[i].end = v.get(i + 1).map_or(u64::MAX, |n| n.start);
                }
            }
        }
        let mut kept: Vec<Sym> = Vec::with_capacity(v.len());
        for s in v {
            match kept.last_mut() {
                Some(last) if last.start == s.start => {
                    if better(last, &s) {
                        *last = s;
                    }
                }
                _ => kept.push(s),
            }
        }
        let mut t: Vec<(u64, u64, Arc<str>)> =
            kept.into_iter().map(|s| (s.start, s.end, s.name)).collect();
        for i in 0..t.len() {
            if t[i].1 <= t[i].0 {
                t[i].1 = t.get(i + 1).map_or(u64::MAX, |n| n.0);
            }
        }
        Table(t)
    }

    fn lookup(&self, addr: u64) -> Option<&Arc<str>> {
        let i = self.0.partition_point(|s| s.0 <= addr).checked_sub(1)?;
        let (_, end, name) = &self.0[i];
        (addr < *end).then_some(name)
    }
}

/// An ELF file's PT_LOAD segments: (file offset, file size, address).
pub(super) fn segments(file: &object::File<'_>) -> Vec<(u64, u64, u64)> {
    file.segments()
        .map(|s| {
            let (off, size) = s.file_range();
            (off, size, s.address())
        })
        .collect()
}

/// The address (SVMA) of file offset `off` in `segments`, if one holds it.
pub(super) fn svma_in(segments: &[(u64, u64, u64)], off: u64) -> Option<u64> {
    let (o, _, a) = segments
        .iter()
        .find(|(o, size, _)| (*o..o.saturating_add(*size)).contains(&off))?;
    Some((off - o).wrapping_add(*a))
}

/// One ELF file's functions and how file offsets map to its addresses.
pub struct Elf {
    /// PT_LOAD segments: (file offset, file size, address).
    segments: Vec<(u64, u64, u64)>,
    symbols: Table,
}

/// The function symbols of an ELF image: its .symtab, or (`dynamic`) its
/// .dynsym; None when it has none of that kind.
fn functions(file: &object::File<'_>, dynamic: bool) -> Option<Vec<Sym>> {
    // Functions, and labels in executable sections (as perf's
    // elf_sym__is_label: assembly entry points such as _dl_start_user).
    let in_text = |s: &object::Symbol<'_, '_>| {
        s.section_index()
            .and_then(|i| file.section_by_index(i).ok())
            // The flag, not the kind: a debug file's .text is NOBITS.
            .is_some_and(|sec| match sec.flags() {
                object::SectionFlags::Elf { sh_flags } => {
                    sh_flags & u64::from(object::elf::SHF_EXECINSTR) != 0
                }
                _ => sec.kind() == SectionKind::Text,
            })
    };
    let take = |s: object::Symbol<'_, '_>| {
        let name = s.name().ok()?;
        let kind_ok = match s.kind() {
            SymbolKind::Text => true,
            SymbolKind::Label | SymbolKind::Unknown => in_text(&s),
            _ => false,
        };
        (kind_ok && s.address() != 0 && !name.is_empty()).then(|| Sym {
            start: s.address(),
            end: s.address().saturating_add(s.size()),
            name: Arc::from(name),
            weak: s.is_weak(),
            global: s.is_global(),
        })
    };
    let v: Vec<Sym> = if dynamic {
        file.dynamic_symbols().filter_map(take).collect()
    } else {
        file.symbols().filter_map(take).collect()
    };
    (!v.is_empty()).then_some(v)
}

impl Elf {
    /// `image`: the file as mapped (its segments place file offsets);
    /// `debug`: files that may hold its full symbol table, best first —
    /// the first with a .symtab wins, as in perf; else the image's own
    /// .symtab, else its .dynsym.
    fn load(image: &[u8], debug: &[PathBuf]) -> Option<Elf> {
        let file = object::File::parse(image).ok()?;
        let segments = segments(&file);
        let from_debug = debug.iter().find_map(|p| {
            let data = super::file::map(p)?;
            functions(&object::File::parse(&*data).ok()?, false)
        });
        let mut syms = from_debug
            .or_else(|| functions(&file, false))
            .or_else(|| functions(&file, true))
            .unwrap_or_default();
        syms.extend(super::plt::symbols(&file));
        Some(Elf {
            segments,
            symbols: Table::new(syms),
        })
    }

    /// An ELF image's own symbols (no debug files): what the fuzz target
    /// feeds hostile bytes to.
    pub fn parse(image: &[u8]) -> Option<Elf> {
        Elf::load(image, &[])
    }

    /// The file's own address (SVMA) of file offset `off` (`off` itself
    /// outside every segment).
    fn svma(&self, off: u64) -> u64 {
        svma_in(&self.segments, off).unwrap_or(off)
    }

    /// The function at file offset `off`.
    pub fn at_offset(&self, off: u64) -> Option<&Arc<str>> {
        self.symbols.lookup(self.svma(off))
    }
}

/// A mapped file as the maps name it: its path and recorded build id.
type FileKey = (Arc<str>, Option<Arc<[u8]>>);

/// Every symbol source of one export, loaded once each.
pub struct Symbols {
    files: HashMap<FileKey, Option<Elf>>,
    /// This machine's kernel symbols, being read on their own thread
    /// until a kernel frame needs them.
    kernel: std::sync::OnceLock<Option<Table>>,
    loading: std::sync::Mutex<Option<Kallsyms>>,
    this_kernel: bool,
    /// Each file's DWARF for inline frames, when they are asked for.
    inline: Option<HashMap<FileKey, Option<Inline>>>,
    /// Each process's JIT symbol map (`/tmp/perf-PID.map`), once read.
    jit: HashMap<u32, Option<Table>>,
}

impl Symbols {
    /// `kallsyms`: this machine's kernel symbols (see [`Kallsyms::read`]),
    /// when the recording is from this kernel (else kernel frames stay
    /// addresses). `inline`: name the functions inlined at each address too.
    pub fn new(kallsyms: Option<Kallsyms>, inline: bool) -> Symbols {
        Symbols {
            files: HashMap::new(),
            this_kernel: kallsyms.is_some(),
            kernel: std::sync::OnceLock::new(),
            loading: std::sync::Mutex::new(kallsyms),
            inline: inline.then(HashMap::new),
            jit: HashMap::new(),
        }
    }

    /// The functions inlined at `addr`, which `m` maps, innermost first
    /// (empty unless inline frames were asked for and DWARF has them).
    pub fn inlined(&mut self, m: &Mapping, addr: u64) -> Vec<Arc<str>> {
        let key = (m.path.clone(), m.build_id.clone());
        let (Some(inline), Some(Some(elf))) = (self.inline.as_mut(), self.files.get(&key)) else {
            return Vec::new();
        };
        let Some(off) = addr
            .checked_sub(m.start)
            .and_then(|d| d.checked_add(m.pgoff))
        else {
            return Vec::new();
        };
        let svma = elf.svma(off);
        let dwarf = inline.entry(key).or_insert_with(|| {
            if &*m.path == "[vdso]" {
                return None;
            }
            let (image, debug) = image(m, false)?;
            Inline::load(&image, &debug)
        });
        dwarf.as_ref().map_or_else(Vec::new, |d| d.at(svma))
    }

    /// The function at `addr`, which `m` maps (user space).
    pub fn user(&mut self, m: &Mapping, addr: u64) -> Option<Arc<str>> {
        let key = (m.path.clone(), m.build_id.clone());
        let kernel = self.this_kernel;
        let elf = self.files.entry(key).or_insert_with(|| {
            let (image, debug) = image(m, kernel)?;
            Elf::load(&image, &debug)
        });
        let off = addr.checked_sub(m.start)?.checked_add(m.pgoff)?;
        elf.as_ref()?.at_offset(off).cloned()
    }

    /// The function a JIT named at `addr` in process `pid`'s anonymous
    /// memory, by the map it wrote (`--perf-basic-prof` and the like).
    pub fn jit(&mut self, pid: u32, addr: u64) -> Option<Arc<str>> {
        let table = self
            .jit
            .entry(pid)
            .or_insert_with(|| super::jit::load(&super::jit::map_path(pid)));
        table.as_ref()?.lookup(addr).cloned()
    }

    /// The kernel function at `addr`.
    pub fn kernel(&self, addr: u64) -> Option<Arc<str>> {
        let table = self.kernel.get_or_init(|| {
            let loading = self.loading.lock().ok()?.take()?;
            loading.0.join().ok().flatten()
        });
        table.as_ref()?.lookup(addr).cloned()
    }
}

/// /proc/kallsyms, read on a thread of its own (the kernel prints it for
/// tens of milliseconds) while the export reads the recording.
pub struct Kallsyms(std::thread::JoinHandle<Option<Table>>);

impl Kallsyms {
    pub fn read() -> Kallsyms {
        Kallsyms(std::thread::spawn(load_kallsyms))
    }
}

/// The bytes of the file `m` maps (checked by build id, else the cache's
/// copy; the vDSO when the recording is from this kernel) and where its
/// separate debug files may be.
pub(super) fn image(m: &Mapping, this_kernel: bool) -> Option<(FileBytes, Vec<PathBuf>)> {
    if &*m.path == "[vdso]" {
        // The recording is from this kernel: its vDSO is ours.
        return this_kernel
            .then(vdso)
            .flatten()
            .map(|v| (FileBytes::Owned(v), Vec::new()));
    }
    let (path, id) = elf_path(&m.path, m.build_id.as_deref())?;
    Some((
        super::file::map(&path)?,
        debug_files(&m.path, id.as_deref()),
    ))
}

/// The file mapped as `path`, and its build id: `path` itself when its
/// build id is the recorded one (or none was recorded), else the build-id
/// cache's copy (`~/.debug/.build-id/xx/rest/elf`, as perf and perfz fill
/// it).
fn elf_path(path: &str, id: Option<&[u8]>) -> Option<(PathBuf, Option<Vec<u8>>)> {
    let p = Path::new(path);
    let on_disk = build_id::of_file(p);
    let Some(id) = id else {
        return p.is_file().then(|| (p.to_path_buf(), on_disk));
    };
    if on_disk.as_deref() == Some(id) {
        return Some((p.to_path_buf(), on_disk));
    }
    let cached = cache_entry(id)?.join("elf");
    cached.is_file().then(|| (cached, Some(id.to_vec())))
}

/// `~/.debug/.build-id/xx/rest` (a directory of the cache).
fn cache_entry(id: &[u8]) -> Option<PathBuf> {
    let hex = build_id::hex(id);
    Some(
        build_id::cache_dir()?
            .join(".build-id")
            .join(&hex[..2])
            .join(&hex[2..]),
    )
}

/// Where a file's separate debug symbols may be, perf's order: the
/// build-id cache's debug file, `/usr/lib/debug/.build-id/xx/rest.debug`,
/// `/usr/lib/debug/PATH`.
fn debug_files(path: &str, id: Option<&[u8]>) -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Some(id) = id {
        let hex = build_id::hex(id);
        v.extend(cache_entry(id).map(|d| d.join("debug")));
        v.push(PathBuf::from(format!(
            "/usr/lib/debug/.build-id/{}/{}.debug",
            &hex[..2],
            &hex[2..]
        )));
    }
    v.push(Path::new("/usr/lib/debug").join(path.trim_start_matches('/')));
    v
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

/// /proc/kallsyms' functions (t/T/w/W), as perf reads them.
fn load_kallsyms() -> Option<Table> {
    let text = std::fs::read_to_string("/proc/kallsyms").ok()?;
    let v: Vec<Sym> = text
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let addr = u64::from_str_radix(it.next()?, 16).ok()?;
            let kind = it.next()?;
            let name = it.next()?;
            (addr != 0 && matches!(kind, "t" | "T" | "w" | "W")).then(|| Sym {
                start: addr,
                end: 0,
                name: name.into(),
                weak: kind.eq_ignore_ascii_case("w"),
                global: kind == "T" || kind == "W",
            })
        })
        .collect();
    (!v.is_empty()).then(|| Table::kallsyms(v))
}
