//! Inline frames (`perfz export --inline`): the functions DWARF says were
//! inlined at an address, by addr2line over the file's own or its separate
//! debug file's .debug_info, as `perf script --inline` shows them: where
//! DWARF knows the address, its functions (innermost first) stand for the
//! frame; elsewhere the symbol table's.

use std::borrow::Cow;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use gimli::{EndianRcSlice, RunTimeEndian};
use object::{Object, ObjectSection};

type Reader = EndianRcSlice<RunTimeEndian>;

/// One file's DWARF, ready for lookups.
pub struct Inline(addr2line::Context<Reader>);

impl Inline {
    /// The DWARF of the first of `debug` (separate debug files, best
    /// first) then `image` that has any; None without.
    pub fn load(image: &[u8], debug: &[PathBuf]) -> Option<Inline> {
        debug
            .iter()
            .find_map(|p| from_file(&super::file::map(p)?))
            .or_else(|| from_file(image))
    }

    /// The functions DWARF names at `svma` (the file's own address),
    /// innermost first: those inlined there, then the one that holds them.
    /// perf shows these in place of the symbol table's name whenever DWARF
    /// has any (its name for a function can differ from the symbol's, e.g.
    /// `__libc_start_main_impl` for `__libc_start_main`).
    pub fn at(&self, svma: u64) -> Vec<Arc<str>> {
        // addr2line looks up [svma, svma + 1): the last address has none.
        if svma == u64::MAX {
            return Vec::new();
        }
        let Ok(mut frames) = self.0.find_frames(svma).skip_all_loads() else {
            return Vec::new();
        };
        let mut names = Vec::new();
        while let Ok(Some(f)) = frames.next() {
            let name = f
                .function
                .as_ref()
                .and_then(|n| n.demangle().ok())
                .map_or_else(|| Arc::from("[unknown]"), |n| Arc::from(&*n));
            names.push(name);
        }
        names
    }
}

fn from_file(bytes: &[u8]) -> Option<Inline> {
    let file = object::File::parse(bytes).ok()?;
    file.section_by_name(".debug_info")?;
    let endian = if file.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let load = |id: gimli::SectionId| -> Result<Reader, gimli::Error> {
        let data = file
            .section_by_name(id.name())
            .and_then(|s| s.uncompressed_data().ok())
            .unwrap_or(Cow::Borrowed(&[]));
        Ok(EndianRcSlice::new(Rc::from(&*data), endian))
    };
    let dwarf = gimli::Dwarf::load(load).ok()?;
    addr2line::Context::from_dwarf(dwarf).ok().map(Inline)
}
