//! A perf.data file's sections before its data: the header checked against
//! the file's length, the attrs with their id arrays, the feature sections.
//! Every offset and size is checked before it is read.

use std::io::{Read, Seek, SeekFrom};

use super::attr::{Attr, AttrEntry};
use super::endian::{Cursor, Endian};
use super::feature::{feat, FeatureSet};
use super::header::{field, read_up_to, FileHeader, Section};
use super::FormatError;

/// Largest feature section we read (perf's are a few KiB).
const MAX_FEATURE_SIZE: u64 = 64 << 20;
/// Largest number of ids of one event (CPUs × threads).
const MAX_IDS: u64 = 1 << 20;

/// Where a file-mode data section ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DataEnd {
    /// Where the header says (a finished file).
    Header,
    /// At the end of the file (a recording that crashed: its header may not
    /// describe its data); features that cannot be read are left out.
    EndOfFile,
}

/// `s` lies within the file's `file_len` bytes.
fn within(s: Section, what: &str, file_len: u64) -> Result<(), FormatError> {
    match s.end() {
        Some(end) if end <= file_len => Ok(()),
        _ => Err(FormatError::invalid(
            s.offset,
            format!(
                "{what} ({} bytes at {:#x}) lies past the end of the {file_len}-byte file",
                s.size, s.offset
            ),
        )),
    }
}

/// The header's sections within the file (the data section to its end
/// where the header's size is not trusted) and its attr size in range.
pub(super) fn check_header(
    header: &FileHeader,
    file_len: u64,
    data_end: DataEnd,
) -> Result<(), FormatError> {
    within(header.attrs, "the attrs section", file_len)?;
    match data_end {
        DataEnd::EndOfFile if header.data.offset > file_len => {
            return Err(FormatError::invalid(
                field::DATA,
                "the data section starts past the end of the file",
            ));
        }
        DataEnd::EndOfFile => {}
        DataEnd::Header => within(header.data, "the data section", file_len)?,
    }
    if header.attr_size < 64 + 16 || header.attr_size > 4096 {
        return Err(FormatError::invalid(
            field::ATTR_SIZE,
            format!(
                "attr_size {} is out of range (perf writes 144)",
                header.attr_size
            ),
        ));
    }
    if header.attrs.size % header.attr_size != 0 {
        return Err(FormatError::invalid(
            field::ATTRS,
            format!(
                "attrs section size {} is not a multiple of attr_size {}",
                header.attrs.size, header.attr_size
            ),
        ));
    }
    Ok(())
}

/// The attrs, each with its id array.
pub(super) fn read_attrs<R: Read + Seek>(
    f: &mut R,
    header: &FileHeader,
    endian: Endian,
    file_len: u64,
) -> Result<Vec<AttrEntry>, FormatError> {
    let mut buf = vec![0u8; header.attrs.size as usize];
    f.seek(SeekFrom::Start(header.attrs.offset))?;
    f.read_exact(&mut buf)?;
    let mut attrs = Vec::new();
    for (i, entry) in buf.chunks(header.attr_size as usize).enumerate() {
        let base = header.attrs.offset + i as u64 * header.attr_size;
        let mut c = Cursor::new(entry, endian, base);
        let declared = endian.u32(entry[4..8].try_into().unwrap()) as usize;
        let size = if declared == 0 { 64 } else { declared };
        if size + 16 > entry.len() {
            return Err(FormatError::invalid(
                base + 4,
                format!(
                    "attr.size {size} does not fit the {}-byte attr entry",
                    entry.len()
                ),
            ));
        }
        let attr = Attr::parse(&mut c, size)?;
        c.pos = entry.len() - 16;
        let ids_sec = Section::read(&mut c, "attr id section")?;
        within(ids_sec, "an attr's id array", file_len)?;
        if ids_sec.size % 8 != 0 || ids_sec.size / 8 > MAX_IDS {
            return Err(FormatError::invalid(
                base,
                format!("id array of {} bytes", ids_sec.size),
            ));
        }
        let mut ib = vec![0u8; ids_sec.size as usize];
        f.seek(SeekFrom::Start(ids_sec.offset))?;
        f.read_exact(&mut ib)?;
        let ids = ib
            .chunks(8)
            .map(|b| endian.u64(b.try_into().unwrap()))
            .collect();
        attrs.push(AttrEntry {
            attr,
            ids,
            name: None,
        });
    }
    Ok(attrs)
}

/// The feature sections: their index table starts where the data ends.
pub(super) fn read_features<R: Read + Seek>(
    f: &mut R,
    header: &FileHeader,
    endian: Endian,
    file_len: u64,
) -> Result<FeatureSet, FormatError> {
    let mut features = FeatureSet {
        endian: Some(endian),
        ..Default::default()
    };
    let table_at = header
        .data
        .end()
        .ok_or_else(|| FormatError::invalid(field::DATA_SIZE, "data section size overflows"))?;
    let bits: Vec<u32> = header.feature_bits().collect();
    if bits.is_empty() {
        return Ok(features);
    }
    let mut tb = vec![0u8; bits.len() * 16];
    f.seek(SeekFrom::Start(table_at))?;
    if read_up_to(f, &mut tb)? < tb.len() {
        return Err(FormatError::Truncated {
            offset: table_at,
            what: format!("feature index table of {} entries", bits.len()),
        });
    }
    for (i, &bit) in bits.iter().enumerate() {
        let mut c = Cursor::new(&tb[i * 16..], endian, table_at + i as u64 * 16);
        let sec = Section::read(&mut c, "feature index entry")?;
        if bit == 0 || bit >= feat::LAST_FEATURE {
            // Bit 0 is reserved (a checkpoint's table uses its entry for a
            // record header); higher bits are unknown to perf 6.1 too. Both
            // are skipped, as perf does.
            continue;
        }
        within(sec, &format!("feature {}", feat::name(bit)), file_len)?;
        if sec.size > MAX_FEATURE_SIZE {
            return Err(FormatError::invalid(
                sec.offset,
                format!("feature {} claims {} bytes", feat::name(bit), sec.size),
            ));
        }
        let mut payload = vec![0u8; sec.size as usize];
        f.seek(SeekFrom::Start(sec.offset))?;
        f.read_exact(&mut payload)?;
        features.set(bit, payload);
    }
    Ok(features)
}
