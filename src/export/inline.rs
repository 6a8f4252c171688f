//! Inline frames (`perfz export --inline`): the functions DWARF says were
//! inlined at an address, by addr2line over the file's own or its separate
//! debug file's .debug_info, as `perf script --inline` shows them: where
//! DWARF knows the address, its functions (innermost first) stand for the
//! frame; elsewhere the symbol table's.

use std::path::PathBuf;
use std::sync::Arc;

use gimli::{EndianReader, RunTimeEndian};
use object::{Object, ObjectSection};

use super::file::FileBytes;

/// A DWARF section's bytes, not copied: a range of the mapped file, or
/// a compressed section inflated. Shared (Arc): a file's DWARF is loaded on
/// the thread that loads its symbols, beside the reading of the samples.
#[derive(Clone)]
enum SectionBytes {
    Mapped(Arc<FileBytes>, std::ops::Range<usize>),
    Inflated(Arc<[u8]>),
}

impl std::ops::Deref for SectionBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            SectionBytes::Mapped(f, r) => &f[r.clone()],
            SectionBytes::Inflated(b) => b,
        }
    }
}

impl std::fmt::Debug for SectionBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SectionBytes({} bytes)", self.len())
    }
}

// SAFETY: the bytes a SectionBytes derefs to are a mapping's or an Arc's
// heap allocation, which neither moving nor cloning the handle moves; a
// clone derefs to the same bytes.
unsafe impl stable_deref_trait::StableDeref for SectionBytes {}
// SAFETY: as above.
unsafe impl stable_deref_trait::CloneStableDeref for SectionBytes {}

type Reader = EndianReader<RunTimeEndian, SectionBytes>;

/// The most a compressed section may inflate to: 64 times its compressed
/// bytes (DWARF compresses 3 to 10 times), and 1 GiB. A bomb (2.6 GB of
/// zeros from a 36 KB program) is left unread, with the rest of the
/// file's DWARF.
const MOST_INFLATED_RATIO: u64 = 64;
const MOST_INFLATED: u64 = 1 << 30;

/// One file's DWARF, ready for lookups.
pub struct Inline(addr2line::Context<Reader>);

impl Inline {
    /// The DWARF of the first of `debug` (separate debug files, best
    /// first) then `image` that has any; None without.
    pub fn load(image: &Arc<FileBytes>, debug: &[PathBuf]) -> Option<Inline> {
        debug
            .iter()
            .find_map(|p| from_file(&Arc::new(super::file::map(p)?)))
            .or_else(|| from_file(image))
    }

    /// An ELF image's own DWARF (no debug files): what the fuzz target
    /// feeds hostile bytes to.
    pub fn parse(image: &[u8]) -> Option<Inline> {
        from_file(&Arc::new(FileBytes::Owned(image.to_vec())))
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

fn from_file(bytes: &Arc<FileBytes>) -> Option<Inline> {
    let file = object::File::parse(&bytes[..]).ok()?;
    file.section_by_name(".debug_info")?;
    let endian = if file.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let load = |id: gimli::SectionId| -> Result<Reader, gimli::Error> {
        let empty = SectionBytes::Inflated(Arc::from(&[][..]));
        let Some(s) = file.section_by_name(id.name()) else {
            return Ok(EndianReader::new(empty, endian));
        };
        let Ok(c) = s.compressed_file_range() else {
            return Ok(EndianReader::new(empty, endian));
        };
        let bytes = if c.format == object::CompressionFormat::None {
            let start = usize::try_from(c.offset).ok();
            let end = start.and_then(|s| s.checked_add(usize::try_from(c.compressed_size).ok()?));
            match (start, end) {
                (Some(s), Some(e)) if e <= bytes.len() => SectionBytes::Mapped(bytes.clone(), s..e),
                _ => empty,
            }
        } else {
            let most = c
                .compressed_size
                .saturating_mul(MOST_INFLATED_RATIO)
                .min(MOST_INFLATED);
            if c.uncompressed_size > most {
                return Err(gimli::Error::Io);
            }
            let data = s.uncompressed_data().map_err(|_| gimli::Error::Io)?;
            SectionBytes::Inflated(Arc::from(&*data))
        };
        Ok(EndianReader::new(bytes, endian))
    };
    let mut dwarf = gimli::Dwarf::load(load).ok()?;
    // Units that share an abbreviation table parse it once.
    dwarf.populate_abbreviations_cache(gimli::AbbreviationsCacheStrategy::All);
    addr2line::Context::from_dwarf(dwarf).ok().map(Inline)
}
