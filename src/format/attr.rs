//! `struct perf_event_attr` and the ids that belong to it.

use super::endian::{Cursor, Endian};
use super::FormatError;

/// The largest attr perf 6.1 accepts in file mode (`PERF_ATTR_SIZE_VER7`).
/// `PERF_TYPE_*`: an attr's type.
pub const TYPE_HARDWARE: u32 = 0;
pub const TYPE_SOFTWARE: u32 = 1;
pub const TYPE_TRACEPOINT: u32 = 2;
pub const TYPE_HW_CACHE: u32 = 3;
pub const TYPE_RAW: u32 = 4;

pub const ATTR_SIZE_61: usize = 128;
/// The smallest attr ever published (`PERF_ATTR_SIZE_VER0`).
pub const ATTR_SIZE_VER0: usize = 64;

pub mod sample_type {
    pub const IP: u64 = 1 << 0;
    pub const TID: u64 = 1 << 1;
    pub const TIME: u64 = 1 << 2;
    pub const ADDR: u64 = 1 << 3;
    pub const READ: u64 = 1 << 4;
    pub const CALLCHAIN: u64 = 1 << 5;
    pub const ID: u64 = 1 << 6;
    pub const CPU: u64 = 1 << 7;
    pub const PERIOD: u64 = 1 << 8;
    pub const STREAM_ID: u64 = 1 << 9;
    pub const RAW: u64 = 1 << 10;
    pub const BRANCH_STACK: u64 = 1 << 11;
    pub const REGS_USER: u64 = 1 << 12;
    pub const STACK_USER: u64 = 1 << 13;
    pub const WEIGHT: u64 = 1 << 14;
    pub const DATA_SRC: u64 = 1 << 15;
    pub const IDENTIFIER: u64 = 1 << 16;
    pub const TRANSACTION: u64 = 1 << 17;
    pub const REGS_INTR: u64 = 1 << 18;
    pub const PHYS_ADDR: u64 = 1 << 19;
    pub const AUX: u64 = 1 << 20;
    pub const CGROUP: u64 = 1 << 21;
    pub const DATA_PAGE_SIZE: u64 = 1 << 22;
    pub const CODE_PAGE_SIZE: u64 = 1 << 23;
    pub const WEIGHT_STRUCT: u64 = 1 << 24;
}

pub mod read_format {
    pub const TOTAL_TIME_ENABLED: u64 = 1 << 0;
    pub const TOTAL_TIME_RUNNING: u64 = 1 << 1;
    pub const ID: u64 = 1 << 2;
    pub const GROUP: u64 = 1 << 3;
    pub const LOST: u64 = 1 << 4;
}

/// Flag bits of the u64 at offset 40.
pub mod flags {
    pub const DISABLED: u64 = 1 << 0;
    pub const INHERIT: u64 = 1 << 1;
    pub const MMAP: u64 = 1 << 8;
    pub const COMM: u64 = 1 << 9;
    pub const FREQ: u64 = 1 << 10;
    pub const ENABLE_ON_EXEC: u64 = 1 << 12;
    pub const TASK: u64 = 1 << 13;
    pub const MMAP_DATA: u64 = 1 << 17;
    pub const SAMPLE_ID_ALL: u64 = 1 << 18;
    pub const EXCLUDE_GUEST: u64 = 1 << 20;
    pub const EXCLUDE_CALLCHAIN_USER: u64 = 1 << 22;
    pub const MMAP2: u64 = 1 << 23;
    pub const COMM_EXEC: u64 = 1 << 24;
    pub const USE_CLOCKID: u64 = 1 << 25;
    pub const CONTEXT_SWITCH: u64 = 1 << 26;
    pub const KSYMBOL: u64 = 1 << 29;
    pub const BPF_EVENT: u64 = 1 << 30;
    pub const BUILD_ID: u64 = 1 << 34;
}

/// One event's attr, kept as the little-endian bytes perf would write, with the
/// fields the reader needs decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attr {
    /// `attr.size` bytes, little endian (converted if the file was big endian).
    pub raw: Vec<u8>,
}

macro_rules! field {
    ($name:ident, $off:expr, u64) => {
        pub fn $name(&self) -> u64 {
            self.get_u64($off)
        }
    };
    ($name:ident, $off:expr, u32) => {
        pub fn $name(&self) -> u32 {
            self.get_u32($off)
        }
    };
}

impl Attr {
    /// An all-zero attr of perf 6.1's size, to fill in with the setters.
    pub fn new() -> Self {
        let mut a = Attr {
            raw: vec![0; ATTR_SIZE_61],
        };
        a.set_u32(4, ATTR_SIZE_61 as u32);
        a
    }

    /// Parses `attr.size` bytes at `c`, where `size` came from the attr itself
    /// (0 means 64, the first published size).
    pub(crate) fn parse(c: &mut Cursor<'_>, size: usize) -> Result<Self, FormatError> {
        let at = c.offset();
        let bytes = c.bytes(size, "perf_event_attr")?;
        if size < ATTR_SIZE_VER0 {
            return Err(FormatError::invalid(
                at,
                format!("attr size {size} is below the minimum of 64"),
            ));
        }
        let mut raw = bytes.to_vec();
        if c.endian == Endian::Big {
            swap_attr(&mut raw);
        }
        let mut a = Attr { raw };
        a.set_u32(4, size as u32);
        Ok(a)
    }

    fn get_u64(&self, off: usize) -> u64 {
        self.raw
            .get(off..off + 8)
            .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap()))
    }
    fn get_u32(&self, off: usize) -> u32 {
        self.raw
            .get(off..off + 4)
            .map_or(0, |b| u32::from_le_bytes(b.try_into().unwrap()))
    }
    pub fn set_u64(&mut self, off: usize, v: u64) {
        self.raw[off..off + 8].copy_from_slice(&v.to_le_bytes());
    }
    pub fn set_u32(&mut self, off: usize, v: u32) {
        self.raw[off..off + 4].copy_from_slice(&v.to_le_bytes());
    }

    field!(type_, 0, u32);
    field!(size, 4, u32);
    field!(config, 8, u64);
    field!(sample_period, 16, u64);
    field!(sample_type, 24, u64);
    field!(read_format, 32, u64);
    field!(flags, 40, u64);
    field!(branch_sample_type, 72, u64);
    field!(sample_regs_user, 80, u64);
    field!(sample_stack_user, 88, u32);
    field!(sample_regs_intr, 96, u64);

    pub fn sample_id_all(&self) -> bool {
        self.flags() & flags::SAMPLE_ID_ALL != 0
    }

    /// The attr as perf 6.1 accepts it in file mode: at most 128 bytes. Newer
    /// fields (config3 at 128..136) are dropped only if they are zero.
    pub fn for_perf61(&self) -> Result<Attr, FormatError> {
        if self.raw.len() <= ATTR_SIZE_61 {
            return Ok(self.clone());
        }
        if self.raw[ATTR_SIZE_61..].iter().any(|&b| b != 0) {
            return Err(FormatError::Unsupported(format!(
                "an attr of {} bytes uses fields perf 6.1 does not know (it accepts at most 128)",
                self.raw.len()
            )));
        }
        let mut a = Attr {
            raw: self.raw[..ATTR_SIZE_61].to_vec(),
        };
        a.set_u32(4, ATTR_SIZE_61 as u32);
        Ok(a)
    }
}

impl Default for Attr {
    fn default() -> Self {
        Self::new()
    }
}

/// Converts a big-endian attr to little endian, field by field (2.3 of the
/// format notes). The flag bit-field word is a u64 like the others.
fn swap_attr(raw: &mut [u8]) {
    // (offset, width) of every field up to 136 bytes.
    const FIELDS: &[(usize, usize)] = &[
        (0, 4),
        (4, 4),
        (8, 8),
        (16, 8),
        (24, 8),
        (32, 8),
        (40, 8),
        (48, 4),
        (52, 4),
        (56, 8),
        (64, 8),
        (72, 8),
        (80, 8),
        (88, 4),
        (92, 4),
        (96, 8),
        (104, 4),
        (108, 2),
        (110, 2),
        (112, 4),
        (116, 4),
        (120, 8),
        (128, 8),
    ];
    for &(off, w) in FIELDS {
        if off + w <= raw.len() {
            raw[off..off + w].reverse();
        }
    }
}

/// An attr and the kernel ids of its event fds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttrEntry {
    pub attr: Attr,
    pub ids: Vec<u64>,
    /// The event's name, from EVENT_DESC (or HEADER_EVENT_UPDATE), if known.
    pub name: Option<String>,
}
