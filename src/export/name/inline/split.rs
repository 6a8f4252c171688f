//! SplitDwarf DWARF (`-gsplit-dwarf`, gcc's and clang's): the binary keeps a
//! skeleton unit per compile unit, naming the `.dwo` file (DW_AT_dwo_name,
//! relative to DW_AT_comp_dir) that holds the unit's functions, inlined
//! ones among them; `dwp` packs them into `<binary>.dwp`. addr2line asks
//! for a unit's split part when a lookup first needs it; this finds it as
//! libdw and gdb do: in the package beside the binary, else the `.dwo` at
//! its compile directory, else beside the binary. A part whose DWO id is
//! not the skeleton's (a rebuilt object) is left unread, as one missing:
//! the frames keep their symbols' names, without inline frames.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gimli::Reader as _;

use super::{readable, section, wanted, Reader};

/// Where one binary's split DWARF is.
pub(super) struct SplitDwarf {
    /// The binary's directory: `.dwo` files are looked for there too.
    dir: Option<PathBuf>,
    /// `<binary>.dwp`, if there is one.
    /// Boxed: a package's tables are large beside the rest.
    package: Option<Box<gimli::DwarfPackage<Reader>>>,
}

impl SplitDwarf {
    /// The split DWARF of the binary at `binary` (the path it was run
    /// from, as the recording names it).
    pub(super) fn beside(binary: &Path) -> SplitDwarf {
        let mut dwp = binary.as_os_str().to_owned();
        dwp.push(".dwp");
        SplitDwarf {
            dir: binary.parent().map(Path::to_path_buf),
            package: package(Path::new(&dwp)).map(Box::new),
        }
    }

    /// No split DWARF (an image without a path).
    pub(super) fn none() -> SplitDwarf {
        SplitDwarf {
            dir: None,
            package: None,
        }
    }

    /// The split part of the unit `load` asks for, if it is found and is
    /// that unit's.
    pub(super) fn load(
        &self,
        load: &addr2line::SplitDwarfLoad<Reader>,
    ) -> Option<Arc<gimli::Dwarf<Reader>>> {
        if let Some(p) = &self.package {
            if let Ok(Some(unit)) = p.find_cu(load.dwo_id, &load.parent) {
                let unit = readable(unit, "the .dwp")?;
                return Some(Arc::new(with_parents_line_strings(unit, load)));
            }
        }
        let name = path_of(load.path.as_ref()?)?;
        let mut at = Vec::new();
        if let Some(dir) = load.comp_dir.as_ref().and_then(path_of) {
            at.push(dir.join(&name));
        } else {
            at.push(name.clone());
        }
        if let Some(dir) = &self.dir {
            at.push(dir.join(&name));
            at.extend(name.file_name().map(|f| dir.join(f)));
        }
        at.iter().find_map(|p| dwo(p, load))
    }
}

/// A path as DWARF spells it (bytes, not necessarily UTF-8).
fn path_of(r: &Reader) -> Option<PathBuf> {
    let bytes = r.to_slice().ok()?;
    Some(PathBuf::from(OsStr::from_bytes(&bytes)))
}

/// The `.dwo` at `path`, if it holds the unit `load` asks for.
fn dwo(path: &Path, load: &addr2line::SplitDwarfLoad<Reader>) -> Option<Arc<gimli::Dwarf<Reader>>> {
    let bytes = Arc::new(crate::export::files::file::map(path)?);
    let file = object::File::parse(&bytes[..]).ok()?;
    let mut dwarf =
        gimli::Dwarf::load(|id| section(&file, &bytes, id.dwo_name().filter(|_| wanted(id))))
            .ok()?;
    dwarf.file_type = gimli::DwarfFileType::Dwo;
    let header = dwarf.units().next().ok()??;
    if dwarf.unit(header).ok()?.dwo_id != Some(load.dwo_id) {
        return None;
    }
    let mut dwarf = readable(dwarf, &path.display().to_string())?;
    dwarf.make_dwo(&load.parent);
    Some(Arc::new(with_parents_line_strings(dwarf, load)))
}

/// `dwo` reading the skeleton's line strings (`.debug_line_str`) from the
/// binary. addr2line names an inlined function's call file from the
/// skeleton's line table, through the split part's sections, where a
/// `.dwo` has no `.debug_line_str` (DWARF 5 keeps it in the binary): every
/// lookup in the unit failed (`UnexpectedEof`), inline frames and all.
fn with_parents_line_strings(
    mut dwo: gimli::Dwarf<Reader>,
    load: &addr2line::SplitDwarfLoad<Reader>,
) -> gimli::Dwarf<Reader> {
    dwo.debug_line_str = load.parent.debug_line_str.clone();
    dwo
}

/// The DWARF package at `path`, if there is one.
fn package(path: &Path) -> Option<gimli::DwarfPackage<Reader>> {
    let bytes = Arc::new(crate::export::files::file::map(path)?);
    let file = object::File::parse(&bytes[..]).ok()?;
    let empty = section(&file, &bytes, None).ok()?;
    // Every section, location lists too: a package's index gives each
    // unit's range of them, which gimli checks against the section.
    gimli::DwarfPackage::load(|id| section(&file, &bytes, id.dwo_name()), empty).ok()
}
