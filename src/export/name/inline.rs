//! Inline frames (`perfz export --inline`): the functions DWARF says were
//! inlined at an address, by addr2line over the file's own or its separate
//! debug file's .debug_info, and over the split DWARF (`-gsplit-dwarf`'s
//! `.dwo` files, or a `.dwp` package) its skeleton units name, as `perf
//! script --inline` shows them: the inlined functions (innermost first)
//! above the frame's own function, which keeps the symbol table's name.

use std::path::PathBuf;
use std::sync::Arc;

use addr2line::LookupContinuation;
use gimli::{EndianReader, RunTimeEndian};
use object::{Object, ObjectSection};

use crate::export::files::file::FileBytes;

/// A DWARF section's bytes, not copied: a range of the mapped file, or
/// a compressed section inflated. Shared (Arc): a file's DWARF is loaded on
/// the thread that loads its symbols, beside the reading of the samples.
#[derive(Clone)]
enum SectionBytes {
    Mapped(Arc<FileBytes>, std::ops::Range<usize>),
    Inflated(Arc<Vec<u8>>),
}

impl std::ops::Deref for SectionBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            SectionBytes::Mapped(f, r) => &f[r.clone()],
            SectionBytes::Inflated(b) => b.as_slice(),
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
pub(crate) const MOST_INFLATED_RATIO: u64 = 64;
pub(crate) const MOST_INFLATED: u64 = 1 << 30;

/// One file's DWARF, ready for lookups, and where its split DWARF is.
pub struct Inline {
    context: addr2line::Context<Reader>,
    split: split::SplitDwarf,
}

impl Inline {
    /// The DWARF of the first of `debug` (separate debug files, best
    /// first) then `image` (`what`: its name in a note) that has any; None
    /// without.
    pub(crate) fn load(image: &Arc<FileBytes>, what: &str, debug: &[PathBuf]) -> Option<Inline> {
        let context = debug
            .iter()
            .find_map(|p| {
                let file = Arc::new(crate::export::files::file::map(p)?);
                from_file(&file, &p.display().to_string())
            })
            .or_else(|| from_file(image, what))?;
        Some(Inline {
            context,
            split: split::SplitDwarf::beside(std::path::Path::new(what)),
        })
    }

    /// An ELF image's own DWARF (no debug files): what the fuzz target
    /// feeds hostile bytes to.
    pub fn parse(image: &[u8]) -> Option<Inline> {
        let context = from_file(&Arc::new(FileBytes::Owned(image.to_vec())), "the image")?;
        Some(Inline {
            context,
            split: split::SplitDwarf::none(),
        })
    }

    /// The functions DWARF says were inlined at `svma` (the file's own
    /// address), innermost first: not the function that holds them, whose
    /// frame the symbol table names (DWARF's name for it can differ: the
    /// clone `msort_with_tmp.part.0` is `msort_with_tmp` there,
    /// `__libc_start_main` is `__libc_start_main_impl`).
    pub fn at(&self, svma: u64) -> Vec<Arc<str>> {
        // addr2line looks up [svma, svma + 1): the last address has none.
        if svma == u64::MAX {
            return Vec::new();
        }
        let mut lookup = self.context.find_frames(svma);
        let mut frames = loop {
            match lookup {
                addr2line::LookupResult::Output(Ok(frames)) => break frames,
                addr2line::LookupResult::Output(Err(_)) => return Vec::new(),
                addr2line::LookupResult::Load { load, continuation } => {
                    lookup = continuation.resume(self.split.load(&load));
                }
            }
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
        // The last is the function that holds the others (or, where DWARF
        // knows no function there, the address's line alone).
        names.pop();
        names
    }
}

/// `bytes`' DWARF; `what` names the file in a note.
fn from_file(bytes: &Arc<FileBytes>, what: &str) -> Option<addr2line::Context<Reader>> {
    let file = object::File::parse(&bytes[..]).ok()?;
    file.section_by_name(".debug_info")?;
    // .debug_info, most of the bytes, is inflated on a thread of its own
    // beside the rest (libc6-dbg's compresses 2.3 of its 3.3 MB).
    let dwarf = std::thread::scope(|s| {
        let info = s.spawn(|| section(&file, bytes, Some(".debug_info")));
        let rest = gimli::Dwarf::load(|id| {
            let name = (wanted(id) && id != gimli::SectionId::DebugInfo).then(|| id.name());
            section(&file, bytes, name)
        });
        let info = info.join().ok()?.ok()?;
        let mut dwarf = rest.ok()?;
        dwarf.debug_info = info.into();
        Some(dwarf)
    })?;
    addr2line::Context::from_dwarf(readable(dwarf, what)?).ok()
}

/// `dwarf` with its abbreviations parsed once for the units that share
/// them, if its inlined functions nest no deeper than perfz reads (else
/// None, with a note naming `what`).
fn readable(mut dwarf: gimli::Dwarf<Reader>, what: &str) -> Option<gimli::Dwarf<Reader>> {
    dwarf.populate_abbreviations_cache(gimli::AbbreviationsCacheStrategy::All);
    match deepest_inlining(&dwarf) {
        Ok(depth) if depth <= MOST_INLINE_DEPTH => Some(dwarf),
        Ok(depth) => {
            say!(
                "perfz export: note: {what}'s DWARF nests {depth} or more inlined functions (perfz reads at most {MOST_INLINE_DEPTH}): \
                 its inline frames are left out, its symbol table names its frames"
            );
            None
        }
        Err(_) => None,
    }
}

/// Whether addr2line reads section `id`: it reads no location lists
/// (where variables live, not which code is where), and libc6-dbg's
/// `.debug_loclists` is a fifth of its compressed DWARF, inflated for
/// nothing at every export.
fn wanted(id: gimli::SectionId) -> bool {
    !matches!(
        id,
        gimli::SectionId::DebugLoc | gimli::SectionId::DebugLocLists
    )
}

/// The section `name` of `file` (whose bytes are `bytes`) as a reader:
/// empty where it is missing, unreadable or not named; a compressed one
/// inflated within its bound.
fn section(
    file: &object::File<'_>,
    bytes: &Arc<FileBytes>,
    name: Option<&str>,
) -> Result<Reader, gimli::Error> {
    let endian = if file.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let empty = EndianReader::new(SectionBytes::Inflated(Arc::default()), endian);
    let Some(s) = name.and_then(|n| file.section_by_name(n)) else {
        return Ok(empty);
    };
    let Ok(c) = s.compressed_file_range() else {
        return Ok(empty);
    };
    let data = if c.format == object::CompressionFormat::None {
        let start = usize::try_from(c.offset).ok();
        let end = start.and_then(|s| s.checked_add(usize::try_from(c.compressed_size).ok()?));
        match (start, end) {
            (Some(s), Some(e)) if e <= bytes.len() => SectionBytes::Mapped(bytes.clone(), s..e),
            _ => return Ok(empty),
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
        SectionBytes::Inflated(Arc::new(data.into_owned()))
    };
    Ok(EndianReader::new(data, endian))
}

/// The most inlined functions DWARF may nest in one another. addr2line
/// reads each level on a stack frame of its own (more than 2 KiB in a
/// debug build), so 50 000 levels overflowed the stack and aborted the
/// export; compilers nest tens, a deep Rust iterator chain a few hundred.
const MOST_INLINE_DEPTH: usize = 1024;

/// How deep inlined subroutines nest in `dwarf`'s units, counted without
/// recursion; the count stops a level past [`MOST_INLINE_DEPTH`]. Every
/// DIE is read: the units are walked in two halves, each on a thread.
fn deepest_inlining(dwarf: &gimli::Dwarf<Reader>) -> gimli::Result<usize> {
    let mut units = Vec::new();
    let mut iter = dwarf.units();
    while let Some(header) = iter.next()? {
        units.push(header);
    }
    // Halves of about the same bytes.
    let half = units
        .iter()
        .map(|h| h.length_including_self())
        .sum::<usize>()
        / 2;
    let mut sum = 0;
    let cut = units
        .iter()
        .position(|h| {
            sum += h.length_including_self();
            sum > half
        })
        .unwrap_or(units.len());
    let (first, second) = units.split_at(cut);
    std::thread::scope(|s| {
        let other = s.spawn(|| deepest_in(dwarf, second));
        let one = deepest_in(dwarf, first);
        let other = other.join().unwrap_or(Err(gimli::Error::Io));
        Ok(one?.max(other?))
    })
}

/// How deep inlined subroutines nest in `units` of `dwarf` (see
/// [`deepest_inlining`]).
fn deepest_in(
    dwarf: &gimli::Dwarf<Reader>,
    units: &[gimli::UnitHeader<Reader>],
) -> gimli::Result<usize> {
    let mut deepest = 0;
    for header in units {
        let abbrevs = dwarf.abbreviations(header)?;
        let mut entries = header.entries_raw(&abbrevs, None)?;
        // The DIE depths of the inlined subroutines around the next entry.
        let mut open: Vec<isize> = Vec::new();
        while !entries.is_empty() {
            let depth = entries.next_depth();
            let Some(abbrev) = entries.read_abbreviation()? else {
                continue; // a null entry: the end of a level's children
            };
            while open.last().is_some_and(|&d| d >= depth) {
                open.pop();
            }
            if abbrev.tag() == gimli::DW_TAG_inlined_subroutine {
                open.push(depth);
                deepest = deepest.max(open.len());
                if deepest > MOST_INLINE_DEPTH {
                    return Ok(deepest);
                }
            }
            entries.skip_attributes(abbrev.attributes())?;
        }
    }
    Ok(deepest)
}

mod split;
#[cfg(test)]
mod tests;
