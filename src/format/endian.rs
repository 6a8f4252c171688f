//! Byte order, chosen once per file from its magic, and a bounds-checked cursor.

use super::FormatError;

/// The byte order of a perf.data file: that of the machine that recorded it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endian {
    /// Magic `PERFILE2` as written: recorded on a little-endian machine.
    Little,
    /// Magic byte-swapped: recorded on a big-endian machine.
    Big,
}

impl Endian {
    /// Reads a u16 stored in this byte order.
    pub fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        }
    }
    /// Reads a u32 stored in this byte order.
    pub fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }
    /// Reads a u64 stored in this byte order.
    pub fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        }
    }
}

/// A cursor over a byte slice whose reads fail (with the absolute file offset)
/// instead of panicking when the slice is too short. Records are parsed with
/// unaligned loads: COMPRESSED records leave later records at odd offsets.
#[derive(Clone, Copy)]
pub struct Cursor<'a> {
    /// The bytes being parsed.
    pub buf: &'a [u8],
    /// Index in `buf` of the next byte to read.
    pub pos: usize,
    /// The file's byte order, applied to every integer read.
    pub endian: Endian,
    /// File offset of `buf[0]`, for error messages.
    pub base: u64,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `buf`, which sits at file offset `base`.
    pub fn new(buf: &'a [u8], endian: Endian, base: u64) -> Self {
        Cursor {
            buf,
            pos: 0,
            endian,
            base,
        }
    }

    /// Bytes left to read.
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// File offset of the next byte to read.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Takes the next `n` bytes, or fails naming `what` and the offset.
    pub fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8], FormatError> {
        if n > self.remaining() {
            return Err(FormatError::Truncated {
                offset: self.offset(),
                what: format!("{what}: needs {n} bytes, {} left", self.remaining()),
            });
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Steps over `n` bytes, or fails naming `what` if fewer are left.
    pub fn skip(&mut self, n: usize, what: &str) -> Result<(), FormatError> {
        self.bytes(n, what).map(drop)
    }

    /// Reads a u16 in the file's byte order; `what` names it in errors.
    pub fn u16(&mut self, what: &str) -> Result<u16, FormatError> {
        let b = self.bytes(2, what)?;
        Ok(self.endian.u16([b[0], b[1]]))
    }

    /// Reads a u32 in the file's byte order; `what` names it in errors.
    pub fn u32(&mut self, what: &str) -> Result<u32, FormatError> {
        let b = self.bytes(4, what)?;
        Ok(self.endian.u32(b.try_into().unwrap()))
    }

    /// Reads a u64 in the file's byte order; `what` names it in errors.
    pub fn u64(&mut self, what: &str) -> Result<u64, FormatError> {
        let b = self.bytes(8, what)?;
        Ok(self.endian.u64(b.try_into().unwrap()))
    }
}
