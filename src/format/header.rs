//! The file-mode header (104 bytes) and the pipe-mode header (16 bytes).
//!
//! The fields' offsets are named in `field`; `read_prefix` (magic and size)
//! is the one place that tells file mode from pipe mode.

use super::endian::{Cursor, Endian};
use super::FormatError;

/// `"PERFILE2"` read as a little-endian u64.
pub const MAGIC: u64 = 0x3245_4c49_4652_4550;
/// Size of `struct perf_file_header`.
pub const FILE_HEADER_SIZE: u64 = 104;
/// Size of the pipe-mode header (magic + size).
pub const PIPE_HEADER_SIZE: u64 = 16;

/// Byte offsets of the fields of `struct perf_file_header`.
pub mod field {
    /// `magic`: `PERFILE2`.
    pub const MAGIC: u64 = 0;
    /// `size`: the header's own size (104, or 72 in old files).
    pub const SIZE: u64 = 8;
    /// `attr_size`: bytes per entry of the attrs section (attr + ids section).
    pub const ATTR_SIZE: u64 = 16;
    /// `attrs`: the attrs section (offset, size).
    pub const ATTRS: u64 = 24;
    /// `data`: the data section (offset, size); the records.
    pub const DATA: u64 = 40;
    /// `data.size`, the second half of the data section.
    pub const DATA_SIZE: u64 = 48;
    /// Obsolete, always zero.
    pub const EVENT_TYPES: u64 = 56;
    /// The 256-bit feature bitmap.
    pub const FEATURES: u64 = 72;
}

/// Size of the header perf wrote before the feature bitmap existed.
pub const OLD_FILE_HEADER_SIZE: u64 = field::FEATURES;

/// The first 16 bytes of any perf.data: the byte order (from the magic) and
/// the header size, which tells file mode (104) from pipe mode (16).
pub fn read_prefix(src: &mut impl std::io::Read) -> Result<(Endian, u64), FormatError> {
    let mut b = [0u8; 16];
    let n = read_up_to(src, &mut b)?;
    if n < b.len() {
        return Err(FormatError::Truncated {
            offset: 0,
            what: format!("file header: the input has only {n} bytes"),
        });
    }
    let endian = detect_endian(b[..8].try_into().expect("8 bytes"))?;
    Ok((endian, endian.u64(b[8..].try_into().expect("8 bytes"))))
}

/// Reads until `buf` is full or the input ends; returns how much it read.
pub(crate) fn read_up_to(r: &mut impl std::io::Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// `{offset, size}` of a part of the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Section {
    /// File offset of the first byte.
    pub offset: u64,
    /// Length in bytes.
    pub size: u64,
}

impl Section {
    /// The offset just past the section (`None` if it overflows a u64).
    pub fn end(&self) -> Option<u64> {
        self.offset.checked_add(self.size)
    }

    pub(crate) fn read(c: &mut Cursor<'_>, what: &str) -> Result<Self, FormatError> {
        Ok(Section {
            offset: c.u64(what)?,
            size: c.u64(what)?,
        })
    }

    /// The 16 bytes perf writes for it: offset then size, little endian.
    pub fn to_le(self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.offset.to_le_bytes());
        b[8..].copy_from_slice(&self.size.to_le_bytes());
        b
    }
}

/// The magic tells file mode from pipe mode (by the size field) and the byte order.
pub fn detect_endian(magic: [u8; 8]) -> Result<Endian, FormatError> {
    if u64::from_le_bytes(magic) == MAGIC {
        Ok(Endian::Little)
    } else if u64::from_be_bytes(magic) == MAGIC {
        Ok(Endian::Big)
    } else {
        Err(FormatError::BadMagic { found: magic })
    }
}

/// `struct perf_file_header`.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct FileHeader {
    /// Bytes per entry of the attrs section: the attr plus a 16-byte ids section.
    pub attr_size: u64,
    /// Where the attr entries are.
    pub attrs: Section,
    /// Where the records are.
    pub data: Section,
    /// 256 feature bits.
    pub features: [u64; 4],
}

impl FileHeader {
    /// Parses the 104 (or old 72) header bytes at the start of `buf`.
    pub fn parse(buf: &[u8], endian: Endian) -> Result<Self, FormatError> {
        let mut c = Cursor::new(buf, endian, 0);
        c.skip(8, "magic")?;
        let size = c.u64("header size")?;
        if size != FILE_HEADER_SIZE && size != OLD_FILE_HEADER_SIZE {
            return Err(FormatError::invalid(
                field::SIZE,
                format!("header size {size}; perf writes 104 (or 72 for old files)"),
            ));
        }
        let attr_size = c.u64("attr_size")?;
        let attrs = Section::read(&mut c, "attrs section")?;
        let data = Section::read(&mut c, "data section")?;
        c.skip(16, "event_types section")?;
        let mut features = [0u64; 4];
        if size == FILE_HEADER_SIZE {
            for w in &mut features {
                *w = c.u64("feature bitmap")?;
            }
        }
        Ok(FileHeader {
            attr_size,
            attrs,
            data,
            features,
        })
    }

    /// Whether feature bit `bit` (`HEADER_*`) is set; false past 256.
    pub fn has_feature(&self, bit: u32) -> bool {
        bit < 256 && self.features[(bit / 64) as usize] & (1 << (bit % 64)) != 0
    }

    /// Set feature bits, ascending: the order of the feature index table.
    pub fn feature_bits(&self) -> impl Iterator<Item = u32> + '_ {
        (0..256).filter(|&b| self.has_feature(b))
    }

    /// The header as perf writes it (104 bytes, little endian, magic included).
    pub fn to_le(&self) -> [u8; FILE_HEADER_SIZE as usize] {
        let mut b = [0u8; FILE_HEADER_SIZE as usize];
        let mut put = |at: u64, bytes: &[u8]| {
            b[at as usize..at as usize + bytes.len()].copy_from_slice(bytes);
        };
        put(field::MAGIC, &MAGIC.to_le_bytes());
        put(field::SIZE, &FILE_HEADER_SIZE.to_le_bytes());
        put(field::ATTR_SIZE, &self.attr_size.to_le_bytes());
        put(field::ATTRS, &self.attrs.to_le());
        put(field::DATA, &self.data.to_le());
        // field::EVENT_TYPES: obsolete, zero.
        for (i, w) in self.features.iter().enumerate() {
            put(field::FEATURES + 8 * i as u64, &w.to_le_bytes());
        }
        b
    }
}
