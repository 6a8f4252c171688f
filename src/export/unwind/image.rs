//! What unwinding needs of one mapped ELF file: its unwind sections
//! (.eh_frame, .eh_frame_hdr, .debug_frame, its own or its debug file's),
//! read once per export and shared with framehop as [`Bytes`], its load
//! map, and what its call frame information covers.

use std::ops::{Deref, Range};
use std::sync::Arc;

use framehop::{ExplicitModuleSectionInfo, Module};
use gimli::{
    BaseAddresses, DebugFrame, EhFrame, EhFrameHdr, LittleEndian, UnwindContext,
    UnwindSection as _, UnwindTableRow,
};
use object::{Object, ObjectSection};

use crate::export::files::file::FileBytes;
use crate::export::files::load_map::LoadMap;
use crate::export::recording::process::Mapping;
use crate::export::unwind::cfi_cover::{CfiCover, Leaf};
use crate::export::unwind::plt::Plt;

/// A part of a file's bytes, shared.
#[derive(Clone)]
pub(crate) struct Bytes(Arc<FileBytes>, Range<usize>);

impl Default for Bytes {
    fn default() -> Bytes {
        Bytes(Arc::new(FileBytes::Owned(Vec::new())), 0..0)
    }
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0[self.1.clone()]
    }
}

/// A section: its address in the file's own terms (SVMA) and its bytes.
#[derive(Clone)]
struct UnwindSection {
    svma: Range<u64>,
    data: Option<Bytes>,
}

/// What unwinding needs of one ELF file.
pub(crate) struct Image {
    /// Its PT_LOAD entries.
    loads: LoadMap,
    text: Option<UnwindSection>,
    eh_frame: Option<UnwindSection>,
    eh_frame_hdr: Option<UnwindSection>,
    got: Option<Range<u64>>,
    debug_frame: Option<Bytes>,
    /// What its FDEs cover, read where a sample's leaf is first looked up.
    cover: std::sync::OnceLock<CfiCover>,
    /// Its PLT sections, left without CFI where LLD linked it.
    plt: Plt,
}

fn section(file: &object::File<'_>, bytes: &Arc<FileBytes>, name: &str) -> Option<UnwindSection> {
    let s = file.section_by_name(name)?;
    let svma = s.address()..s.address().checked_add(s.size())?;
    Some(UnwindSection {
        svma,
        data: data(&s, bytes),
    })
}

/// A section's bytes: a part of the file's, or, where it is compressed
/// (SHF_COMPRESSED: Go's .debug_frame, a -dbgsym file's), inflated within
/// the bound the inline reader keeps. None where they cannot be read.
fn data(s: &object::Section<'_, '_>, bytes: &Arc<FileBytes>) -> Option<Bytes> {
    use crate::export::name::inline::{MOST_INFLATED, MOST_INFLATED_RATIO};
    let c = s.compressed_file_range().ok()?;
    if c.format == object::CompressionFormat::None {
        let start = usize::try_from(c.offset).ok()?;
        let end = start.checked_add(usize::try_from(c.compressed_size).ok()?)?;
        return (end <= bytes.len()).then(|| Bytes(bytes.clone(), start..end));
    }
    let most = c
        .compressed_size
        .saturating_mul(MOST_INFLATED_RATIO)
        .min(MOST_INFLATED);
    if c.uncompressed_size > most {
        return None;
    }
    let inflated = s.uncompressed_data().ok()?.into_owned();
    let len = inflated.len();
    Some(Bytes(Arc::new(FileBytes::Owned(inflated)), 0..len))
}

impl Image {
    pub(crate) fn load(bytes: FileBytes, debug: &[std::path::PathBuf]) -> Option<Image> {
        let bytes = Arc::new(bytes);
        let file = object::File::parse(&bytes[..]).ok()?;
        let debug_frame = section(&file, &bytes, ".debug_frame")
            .and_then(|s| s.data)
            .or_else(|| {
                debug.iter().find_map(|p| {
                    let d = Arc::new(crate::export::files::file::map(p)?);
                    let f = object::File::parse(&d[..]).ok()?;
                    section(&f, &d, ".debug_frame")?.data
                })
            });
        Some(Image {
            loads: LoadMap::of(&file),
            text: section(&file, &bytes, ".text"),
            eh_frame: section(&file, &bytes, ".eh_frame"),
            // framehop searches its table as gimli does: one it cannot
            // read is not given to either.
            eh_frame_hdr: section(&file, &bytes, ".eh_frame_hdr")
                .filter(|s| s.data.as_deref().is_some_and(hdr_fits)),
            got: section(&file, &bytes, ".got").map(|s| s.svma),
            debug_frame,
            cover: std::sync::OnceLock::new(),
            plt: Plt::of(&file),
        })
    }

    /// How a leaf at file offset `off` is left: by its CFI where an FDE
    /// covers it, as its PLT stub where one holds it, else by the frame
    /// pointer (an offset outside every segment: the frame pointer too).
    pub(crate) fn leaf(&self, off: u64) -> Leaf {
        let Some(svma) = self.svma_of(off) else {
            return Leaf::FramePointer;
        };
        let cover = self.cover.get_or_init(|| {
            let eh = self.eh_frame.as_ref();
            let eh = eh.and_then(|s| Some((&s.data.as_ref()?[..], s.svma.start)));
            CfiCover::of(eh, self.debug_frame.as_deref())
        });
        if cover.covers(svma) {
            return Leaf::Cfi;
        }
        self.plt
            .cfa_offset(svma)
            .map_or(Leaf::FramePointer, Leaf::Plt)
    }

    /// The file's own address (SVMA) of file offset `off`.
    pub(crate) fn svma_of(&self, off: u64) -> Option<u64> {
        self.loads.svma(off)
    }

    /// The CFI row gimli gives for the file's own address `svma`: from
    /// .eh_frame (through .eh_frame_hdr's table where there is one), else
    /// from .debug_frame. None where no FDE covers it.
    pub(crate) fn cfi_row(&self, svma: u64) -> Option<UnwindTableRow<usize>> {
        let mut ctx = UnwindContext::new();
        let eh = self.eh_frame.as_ref();
        if let Some((bytes, at)) = eh.and_then(|s| Some((s.data.as_ref()?, s.svma.start))) {
            let mut bases = BaseAddresses::default().set_eh_frame(at);
            if let Some(text) = &self.text {
                bases = bases.set_text(text.svma.start);
            }
            if let Some(got) = &self.got {
                bases = bases.set_got(got.start);
            }
            let mut frame = EhFrame::new(&bytes[..], LittleEndian);
            frame.set_address_size(8);
            let hdr = self.eh_frame_hdr.as_ref();
            let hdr = hdr.and_then(|h| Some((h.data.as_ref()?, h.svma.start)));
            if let Some((_, at)) = hdr {
                bases = bases.set_eh_frame_hdr(at);
            }
            let hdr = hdr.and_then(|(b, _)| parsed_hdr(b, &bases));
            let fde = match &hdr {
                Some(hdr) => hdr_fde(hdr, &frame, &bases, svma),
                None => frame
                    .fde_for_address(&bases, svma, EhFrame::cie_from_offset)
                    .ok(),
            };
            let row = fde.and_then(|f| {
                f.unwind_info_for_address(&frame, &bases, &mut ctx, svma)
                    .ok()
            });
            if let Some(row) = row {
                return Some(row.clone());
            }
        }
        let mut frame = DebugFrame::new(self.debug_frame.as_deref()?, LittleEndian);
        frame.set_address_size(8);
        let bases = BaseAddresses::default();
        let row =
            frame.unwind_info_for_address(&bases, &mut ctx, svma, DebugFrame::cie_from_offset);
        row.ok().cloned()
    }

    /// A framehop module for this file mapped as `m`.
    pub(crate) fn module(&self, m: &Mapping) -> Option<Module<Bytes>> {
        let base_avma = self.loads.bias(m.start, m.end, m.pgoff)?;
        let info = ExplicitModuleSectionInfo {
            base_svma: 0,
            text_svma: self.text.as_ref().map(|s| s.svma.clone()),
            text: self.text.as_ref().and_then(|s| s.data.clone()),
            got_svma: self.got.clone(),
            eh_frame_svma: self.eh_frame.as_ref().map(|s| s.svma.clone()),
            eh_frame: self.eh_frame.as_ref().and_then(|s| s.data.clone()),
            eh_frame_hdr_svma: self.eh_frame_hdr.as_ref().map(|s| s.svma.clone()),
            eh_frame_hdr: self.eh_frame_hdr.as_ref().and_then(|s| s.data.clone()),
            debug_frame: self.debug_frame.clone(),
            ..Default::default()
        };
        Some(Module::new(
            m.path.to_string(),
            m.start..m.end,
            base_avma,
            info,
        ))
    }
}

type Slice<'a> = gimli::EndianSlice<'a, LittleEndian>;

/// The FDE .eh_frame_hdr's table gives for `svma`, where it covers it;
/// the offset found here: gimli's `pointer_to_offset` subtracts unchecked,
/// and a hostile table points below .eh_frame.
fn hdr_fde<'a>(
    hdr: &gimli::ParsedEhFrameHdr<Slice<'a>>,
    frame: &EhFrame<Slice<'a>>,
    bases: &BaseAddresses,
    svma: u64,
) -> Option<gimli::FrameDescriptionEntry<Slice<'a>>> {
    let table = hdr.table()?;
    let ptr = table.lookup(svma, bases).ok()?.direct().ok()?;
    let off = ptr.checked_sub(hdr.eh_frame_ptr().direct().ok()?)?;
    let off = gimli::EhFrameOffset(usize::try_from(off).ok()?);
    let fde = frame
        .fde_from_offset(bases, off, EhFrame::cie_from_offset)
        .ok()?;
    fde.contains(svma).then_some(fde)
}

/// `.eh_frame_hdr` parsed, where its table holds the rows it declares
/// (see [`hdr_fits`]).
fn parsed_hdr<'a>(
    b: &'a [u8],
    bases: &BaseAddresses,
) -> Option<gimli::ParsedEhFrameHdr<Slice<'a>>> {
    hdr_fits(b).then(|| EhFrameHdr::new(b, LittleEndian).parse(bases, 8).ok())?
}

/// Whether the `.eh_frame_hdr` `b` is version 1 and its table holds the
/// rows it declares. gimli's binary search (framehop's too) multiplies the
/// declared count unchecked (a hostile count overflowed it; found by
/// fuzzing export_inputs): a table that cannot be read is left out, and
/// `.eh_frame` is searched instead.
fn hdr_fits(b: &[u8]) -> bool {
    // The bytes of a value in `enc` (DW_EH_PE_*: the low four bits give
    // the format, 0x08 a signed one), where fixed.
    let size = |enc: u8| match enc & 0x0f {
        0x00 | 0x04 | 0x0c => Some(8),
        0x02 | 0x0a => Some(2),
        0x03 | 0x0b => Some(4),
        _ => None,
    };
    let &[1, ptr_enc, count_enc, table_enc, ref rest @ ..] = b else {
        return false;
    };
    let (Some(ptr), Some(count), Some(cell)) = (size(ptr_enc), size(count_enc), size(table_enc))
    else {
        return false;
    };
    let Some(count_bytes) = rest.get(ptr..ptr + count) else {
        return false;
    };
    // gimli reads a signed count sign-extended: its top bit set, a count
    // past any table.
    let negative = count_enc & 0x08 != 0 && count_bytes[count - 1] & 0x80 != 0;
    let mut word = [0u8; 8];
    word[..count].copy_from_slice(count_bytes);
    let rows = (rest.len() - ptr - count) / (2 * cell);
    !negative && u64::from_le_bytes(word) <= rows as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An .eh_frame_hdr: version 1, eh_frame_ptr sdata4|pcrel, the count
    /// as `count_enc`, the table as datarel|sdata4, then `rows` rows.
    fn hdr(count_enc: u8, count: &[u8], rows: usize) -> Vec<u8> {
        let mut b = vec![1, 0x1b, count_enc, 0x3b];
        b.extend(0x100i32.to_le_bytes());
        b.extend(count);
        for i in 0..rows as i32 {
            b.extend((i * 16).to_le_bytes());
            b.extend((i * 32).to_le_bytes());
        }
        b
    }

    #[test]
    fn a_table_that_holds_fewer_rows_than_it_declares_is_left_out() {
        let bases = BaseAddresses::default().set_eh_frame_hdr(0x2000);
        let fits = hdr(0x03, &3u32.to_le_bytes(), 3);
        let hdr_of = |b: &[u8]| parsed_hdr(b, &bases).map(|h| h.table().is_some());
        assert_eq!(hdr_of(&fits), Some(true));
        // The count fuzzing found: gimli's search multiplied it past u64.
        assert_eq!(hdr_of(&hdr(0x04, &u64::MAX.to_le_bytes(), 3)), None);
        assert_eq!(hdr_of(&hdr(0x03, &4u32.to_le_bytes(), 3)), None);
        // A signed count gimli reads sign-extended (0x8000 as sdata2).
        assert_eq!(hdr_of(&hdr(0x0a, &0x8000u16.to_le_bytes(), 0x8000)), None);
        assert_eq!(hdr_of(&hdr(0x0a, &3u16.to_le_bytes(), 3)), Some(true));
        // Variable-length counts, a cut header, another version.
        assert_eq!(hdr_of(&hdr(0x01, &[3], 3)), None);
        assert_eq!(hdr_of(&fits[..6]), None);
        let mut v2 = fits.clone();
        v2[0] = 2;
        assert_eq!(hdr_of(&v2), None);
        // What passes is searched without overflow.
        let ok = hdr(0x03, &3u32.to_le_bytes(), 3);
        let parsed = parsed_hdr(&ok, &bases).unwrap();
        assert!(parsed.table().unwrap().lookup(0x20, &bases).is_ok());
    }
}
