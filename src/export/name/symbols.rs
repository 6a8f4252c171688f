//! Names for addresses: the function symbols of the ELF files the maps
//! name (checked by build id, else found in the build-id cache perfz and
//! perf fill), and the kernel's from /proc/kallsyms. Symbols are looked up
//! as perf does: a symbol covers [start, start + size), one of size 0 runs
//! to the next symbol.
//!
//! A file's symbols are its ELF .symtab or .dynsym (by `object`), those of
//! its debug file or its build-id cache copy (locate.rs), its PLT entries
//! (plt.rs) and the vDSO's; each file is loaded on a thread of its own as
//! samples first reach it. Tables are table.rs's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use object::{Object, ObjectSection, ObjectSymbol, SectionKind, SymbolKind};

use crate::export::files::file::FileBytes;
use crate::export::files::load_map::LoadMap;
use crate::export::files::locate::Locate;
use crate::export::name::inline::Inline;
use crate::export::name::kallsyms::Kallsyms;
use crate::export::name::table::{Sym, Table, TableBuilder};
use crate::export::recording::process::Mapping;

/// One ELF file's functions and how file offsets map to its addresses.
pub struct Elf {
    /// Its PT_LOAD entries.
    loads: LoadMap,
    symbols: Table,
    /// Its DWARF for inline frames, where they are asked for and it has any.
    dwarf: Option<Inline>,
}

/// The function (and data object) symbols of an ELF image: its .symtab,
/// or (`dynamic`) its .dynsym; None when it has none of that kind.
fn functions(bytes: &Arc<FileBytes>, dynamic: bool) -> Option<TableBuilder> {
    let file = &object::File::parse(&bytes[..]).ok()?;
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
    let mut b = TableBuilder::default();
    let mut take = |s: object::Symbol<'_, '_>| {
        let Ok(name) = s.name() else {
            return;
        };
        // Data objects too, as perf's elf_sym__filter takes them: a
        // garbage return address in .bss (Go's g0 stacks end in one) is
        // named by the object it falls in, as perf 7.3 names it.
        let object = matches!(s.flags(), object::SymbolFlags::Elf { st_info, .. }
            if st_info & 0xf == object::elf::STT_OBJECT);
        let kind_ok = match s.kind() {
            SymbolKind::Text => true,
            SymbolKind::Label | SymbolKind::Unknown => in_text(&s),
            SymbolKind::Data => object,
            _ => false,
        };
        if kind_ok && s.address() != 0 && !name.is_empty() {
            b.push(Sym {
                start: s.address(),
                end: s.address().saturating_add(s.size()),
                name,
                weak: s.is_weak(),
                global: s.is_global(),
                ifunc: matches!(s.flags(), object::SymbolFlags::Elf { st_info, .. }
                    if st_info & 0xf == object::elf::STT_GNU_IFUNC),
            });
        }
    };
    if dynamic {
        file.dynamic_symbols().for_each(&mut take);
    } else {
        file.symbols().for_each(&mut take);
    }
    (!b.is_empty()).then_some(b)
}

impl Elf {
    /// `image`: the file as mapped (its load map places file offsets);
    /// `debug`: files that may hold its full symbol table, best first —
    /// the first with a .symtab wins, as in perf; else the image's own
    /// .symtab, else its .dynsym.
    /// `inline`: its DWARF too, for inline frames; `what` names it in notes.
    fn load(image: Arc<FileBytes>, what: &str, debug: &[PathBuf], inline: bool) -> Option<Elf> {
        let file = object::File::parse(&image[..]).ok()?;
        let loads = LoadMap::of(&file);
        fn with_plt(mut b: TableBuilder, file: &object::File<'_>) -> Table {
            crate::export::name::plt::symbols(file, &mut b);
            b.table()
        }
        let from_debug = debug
            .iter()
            .find_map(|p| functions(&Arc::new(crate::export::files::file::map(p)?), false));
        let symbols = with_plt(
            from_debug
                .or_else(|| functions(&image, false))
                .or_else(|| functions(&image, true))
                .unwrap_or_default(),
            &file,
        );
        let dwarf = inline.then(|| Inline::load(&image, what, debug)).flatten();
        Some(Elf {
            loads,
            symbols,
            dwarf,
        })
    }

    /// An ELF image's own symbols (no debug files): what the fuzz target
    /// feeds hostile bytes to.
    pub fn parse(image: &[u8]) -> Option<Elf> {
        Elf::load(Arc::new(FileBytes::Owned(image.to_vec())), "", &[], false)
    }

    /// The file's own address (SVMA) of file offset `off` (`off` itself
    /// outside every segment).
    fn svma(&self, off: u64) -> u64 {
        self.loads.svma(off).unwrap_or(off)
    }

    /// The function at file offset `off`.
    pub fn at_offset(&self, off: u64) -> Option<Arc<str>> {
        self.symbols.lookup(self.svma(off))
    }
}

/// A mapped file as the maps name it: its path and recorded build id.
type FileKey = (Arc<str>, Option<Arc<[u8]>>);

/// A file's symbols: loaded, or being loaded on a thread of their own.
enum ElfLoad {
    Ready(Option<Elf>),
    Loading(std::thread::JoinHandle<Option<Elf>>),
}

impl ElfLoad {
    /// The symbols, waited for where they are being loaded.
    fn get(&mut self) -> Option<&Elf> {
        if let ElfLoad::Loading(_) = self {
            if let ElfLoad::Loading(h) = std::mem::replace(self, ElfLoad::Ready(None)) {
                // A load that panicked names nothing, as a file that is gone.
                *self = ElfLoad::Ready(h.join().ok().flatten());
            }
        }
        match self {
            ElfLoad::Ready(elf) => elf.as_ref(),
            ElfLoad::Loading(_) => None,
        }
    }
}

/// How many files are loaded on threads of their own at once at most
/// (more are loaded where they are first asked for).
const LOADING_AT_ONCE: usize = 4;

/// Every symbol source of one export, loaded once each.
pub(crate) struct Symbols {
    files: HashMap<FileKey, ElfLoad>,
    /// This machine's kernel symbols, being read on their own thread
    /// until a kernel frame needs them.
    kernel: std::sync::OnceLock<Option<Table>>,
    loading: std::sync::Mutex<Option<Kallsyms>>,
    /// Kernel frames are named (the recording's kernel is this one, or
    /// `--kallsyms` said whose it is).
    kernel_named: bool,
    /// Where files are found.
    locate: Arc<Locate>,
    /// Whether files' DWARF is loaded for inline frames.
    inline: bool,
    /// Each process's JIT symbol map (`/tmp/perf-PID.map`), once read.
    jit: HashMap<u32, [Option<Table>; 2]>,
    /// Each process's jitdump, where it mapped one.
    dumps: HashMap<u32, Arc<str>>,
}

impl Symbols {
    /// `kallsyms`: the kernel's symbols (see [`Kallsyms::read`]), when
    /// they are the recording's kernel's (else kernel frames stay
    /// addresses); `locate`: where files are found. `inline`: name the
    /// functions inlined at each address too.
    pub(crate) fn new(kallsyms: Option<Kallsyms>, locate: Arc<Locate>, inline: bool) -> Symbols {
        Symbols {
            files: HashMap::new(),
            locate,
            kernel: std::sync::OnceLock::new(),
            kernel_named: kallsyms.is_some(),
            loading: std::sync::Mutex::new(kallsyms),
            inline,
            jit: HashMap::new(),
            dumps: HashMap::new(),
        }
    }

    /// The functions inlined at `addr`, which `m` maps, innermost first
    /// (empty unless inline frames were asked for and DWARF has them).
    pub(crate) fn inlined(&mut self, m: &Mapping, addr: u64) -> Vec<Arc<str>> {
        let key = (m.path.clone(), m.build_id.clone());
        let Some(elf) = self.files.get_mut(&key).and_then(ElfLoad::get) else {
            return Vec::new();
        };
        let Some(off) = addr
            .checked_sub(m.start)
            .and_then(|d| d.checked_add(m.pgoff))
        else {
            return Vec::new();
        };
        let svma = elf.svma(off);
        elf.dwarf.as_ref().map_or_else(Vec::new, |d| d.at(svma))
    }

    /// Starts loading the symbols of the file `m` maps on a thread of its
    /// own, while the export goes on reading samples (a compiler's run to
    /// tens of thousands); the first frame named in it waits for them.
    pub(crate) fn load_beside(&mut self, m: &Mapping) {
        // Only files: anonymous memory has no symbols, JIT maps are
        // read where they are asked for.
        if !m.path.starts_with('/') {
            return;
        }
        let loading = self
            .files
            .values()
            .filter(|l| matches!(l, ElfLoad::Loading(h) if !h.is_finished()))
            .count();
        let key = (m.path.clone(), m.build_id.clone());
        if loading >= LOADING_AT_ONCE || self.files.contains_key(&key) {
            return;
        }
        let (m, locate, inline) = (m.clone(), self.locate.clone(), self.inline);
        let load = move || {
            let (image, debug) = locate.image(&m)?;
            // The vDSO's DWARF, if any, is not read (perf reads none).
            let inline = inline && &*m.path != "[vdso]";
            Elf::load(Arc::new(image), &m.path, &debug, inline)
        };
        self.files
            .insert(key, ElfLoad::Loading(std::thread::spawn(load)));
    }

    /// The function at `addr`, which `m` maps (user space).
    pub(crate) fn user(&mut self, m: &Mapping, addr: u64) -> Option<Arc<str>> {
        let key = (m.path.clone(), m.build_id.clone());
        let (locate, inline) = (&self.locate, self.inline && &*m.path != "[vdso]");
        let elf = self.files.entry(key).or_insert_with(|| {
            let elf = locate
                .image(m)
                .and_then(|(image, debug)| Elf::load(Arc::new(image), &m.path, &debug, inline));
            ElfLoad::Ready(elf)
        });
        let off = addr.checked_sub(m.start)?.checked_add(m.pgoff)?;
        elf.get()?.at_offset(off)
    }

    /// Notes the jitdumps the processes mapped (`jit-PID.dump`): their JIT
    /// code is named from them first.
    pub(crate) fn note_jitdumps(&mut self, dumps: impl IntoIterator<Item = (u32, Arc<str>)>) {
        self.dumps.extend(dumps);
    }

    /// The function at `addr` in process `pid` that its jitdump names,
    /// and the dump: as after `perf inject --jit`, whose files of JIT code
    /// are mapped over whatever was there (V8 logs its builtins, in node's
    /// own text, as code loads too).
    pub(crate) fn jitted(&mut self, pid: u32, addr: u64) -> Option<(Arc<str>, Arc<str>)> {
        let dump = self.dumps.get(&pid)?.clone();
        let [from_dump, _] = self.jit_tables(pid);
        Some((from_dump.as_ref()?.lookup(addr)?, dump))
    }

    /// The function a JIT named at `addr` in process `pid`'s anonymous
    /// memory, by the map it wrote (`--perf-basic-prof` and the like).
    pub(crate) fn jit(&mut self, pid: u32, addr: u64) -> Option<Arc<str>> {
        let [_, from_map] = self.jit_tables(pid);
        from_map.as_ref()?.lookup(addr)
    }

    /// Process `pid`'s jitdump's table and its JIT map's, once read.
    fn jit_tables(&mut self, pid: u32) -> &[Option<Table>; 2] {
        let dump = self.dumps.get(&pid).cloned();
        self.jit.entry(pid).or_insert_with(|| {
            [
                dump.as_deref()
                    .and_then(|d| crate::export::name::jitdump::load(Path::new(d))),
                crate::export::name::jit::load(&crate::export::name::jit::map_path(pid)),
            ]
        })
    }

    /// Whether kernel frames are named: the recording's kernel is this
    /// one (or `--kallsyms` gave its symbols).
    pub(crate) fn kernel_named(&self) -> bool {
        self.kernel_named
    }

    /// The kernel function at `addr`.
    pub(crate) fn kernel(&self, addr: u64) -> Option<Arc<str>> {
        let table = self.kernel.get_or_init(|| {
            let loading = self.loading.lock().ok()?.take()?;
            loading.wait()
        });
        table.as_ref()?.lookup(addr)
    }
}
