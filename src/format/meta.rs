//! What is known about an open perf.data, apart from where its reader is:
//! the mode, the header, the attrs (and which attr each id belongs to), the
//! features; and the HEADER_ATTR record of pipe mode.

use std::collections::HashMap;
use std::path::PathBuf;

use super::attr::{Attr, AttrEntry};
use super::endian::{Cursor, Endian};
use super::feature::{CompressedInfo, FeatureSet};
use super::header::FileHeader;
use super::record::Record;
use super::sample::Sample;
use super::FormatError;

/// How the perf.data is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// File mode: a 104-byte header, then attrs, records and feature sections.
    File,
    /// Pipe mode: a 16-byte header, then records only (attrs and features as
    /// HEADER_ATTR and HEADER_FEATURE records).
    Pipe,
    /// perf's `--threads` directory: a file-mode `data` plus bare `data.N` streams.
    Directory,
}

/// What is known about an open file: header, attrs, features. In pipe mode it
/// fills in as the HEADER_ATTR / HEADER_FEATURE records pass.
pub struct Meta {
    /// The path opened (the directory, for `--threads` output).
    pub path: PathBuf,
    /// File, pipe or directory layout.
    pub mode: Mode,
    /// Byte order of the file, from its magic.
    pub endian: Endian,
    /// File-mode header (also for the `data` file of a directory).
    pub header: Option<FileHeader>,
    /// Every event's attr and ids, in file order.
    pub attrs: Vec<AttrEntry>,
    /// The feature sections read so far.
    pub features: FeatureSet,
    pub(super) ids: HashMap<u64, usize>,
    pub(super) compressed: Option<CompressedInfo>,
}

impl Meta {
    /// Names from EVENT_DESC and the id → attr map.
    pub(super) fn index_attrs(&mut self) {
        if let Some(desc) = self.features.event_desc() {
            for (entry, (name, _)) in self.attrs.iter_mut().zip(desc) {
                entry.name.get_or_insert(name);
            }
        }
        self.ids = self
            .attrs
            .iter()
            .enumerate()
            .flat_map(|(i, a)| a.ids.iter().map(move |&id| (id, i)))
            .collect();
    }

    /// The HEADER_COMPRESSED feature, once known (pipe mode: once its record passed).
    pub fn compressed(&self) -> Option<CompressedInfo> {
        self.compressed
    }

    /// The attr a SAMPLE belongs to (format notes 4.7).
    pub fn attr_of_sample(&self, rec: &Record<'_>) -> Option<&AttrEntry> {
        self.attr_index_of_sample(rec).map(|i| &self.attrs[i])
    }

    /// The index in `attrs` of the attr a SAMPLE belongs to.
    pub fn attr_index_of_sample(&self, rec: &Record<'_>) -> Option<usize> {
        if self.attrs.len() <= 1 {
            return (!self.attrs.is_empty()).then_some(0);
        }
        let Some(at) = super::sample::id_offset(self.attrs[0].attr.sample_type()) else {
            return Some(0);
        };
        let b = rec.body().get(at..at + 8)?;
        let id = self.endian.u64(b.try_into().unwrap());
        self.ids.get(&id).copied()
    }

    /// Decodes a SAMPLE record with the attr it belongs to.
    pub fn parse_sample(&self, rec: &Record<'_>) -> Result<Option<Sample>, FormatError> {
        match self.attr_of_sample(rec) {
            Some(a) => Sample::parse(rec.body(), &a.attr, self.endian, rec.offset).map(Some),
            None => Ok(None),
        }
    }
}

/// An attr and its ids from a pipe's HEADER_ATTR record.
pub(super) fn parse_header_attr(rec: &Record<'_>, e: Endian) -> Result<AttrEntry, FormatError> {
    let body = rec.body();
    let at = rec.offset + 8;
    if body.len() < 8 {
        return Err(FormatError::invalid(
            at,
            "HEADER_ATTR record too short for an attr",
        ));
    }
    let declared = e.u32(body[4..8].try_into().unwrap()) as usize;
    let size = if declared == 0 { 64 } else { declared };
    let attr_bytes = size.div_ceil(8) * 8;
    if attr_bytes > body.len() {
        return Err(FormatError::invalid(
            at,
            format!("HEADER_ATTR attr.size {size} exceeds the record"),
        ));
    }
    let mut c = Cursor::new(body, e, at);
    let attr = Attr::parse(&mut c, size)?;
    let ids = body[attr_bytes..]
        .chunks_exact(8)
        .map(|b| e.u64(b.try_into().unwrap()))
        .collect();
    Ok(AttrEntry {
        attr,
        ids,
        name: None,
    })
}
