//! `struct perf_event_attr` and the ids that belong to it.
//!
//! An `Attr` is kept as the little-endian bytes perf would write, with
//! accessors for the fields read; an `AttrEntry` is an attr with its ids and
//! its name.

use super::endian::{Cursor, Endian};
use super::FormatError;

/// `PERF_TYPE_HARDWARE`: an attr's type for generalized hardware events.
pub const TYPE_HARDWARE: u32 = 0;
/// `PERF_TYPE_SOFTWARE`: kernel software counters (cpu-clock, page-faults, ...).
pub const TYPE_SOFTWARE: u32 = 1;
/// `PERF_TYPE_TRACEPOINT`: config is a tracefs event id.
pub const TYPE_TRACEPOINT: u32 = 2;
/// `PERF_TYPE_HW_CACHE`: config encodes cache, operation and result.
pub const TYPE_HW_CACHE: u32 = 3;
/// `PERF_TYPE_RAW`: config is a PMU-specific raw event code.
pub const TYPE_RAW: u32 = 4;

/// The event name perf's `--off-cpu` writes (its samples' period: the
/// nanoseconds a thread was off the CPU).
pub const OFF_CPU_NAME: &str = "offcpu-time";
/// `PERF_COUNT_SW_BPF_OUTPUT`: the config perf's `offcpu-time` attr has.
pub const SW_BPF_OUTPUT: u64 = 10;

/// The largest attr perf 6.1 accepts in file mode (`PERF_ATTR_SIZE_VER7`), in
/// bytes.
pub const ATTR_SIZE_61: usize = 128;
/// The smallest attr ever published (`PERF_ATTR_SIZE_VER0`).
pub const ATTR_SIZE_VER0: usize = 64;

/// `PERF_SAMPLE_*`: bits of `attr.sample_type`, which say what a sample
/// record holds (fields appear in bit order).
pub mod sample_type {
    /// `PERF_SAMPLE_IP`: the instruction pointer.
    pub const IP: u64 = 1 << 0;
    /// `PERF_SAMPLE_TID`: pid and tid (u32 each).
    pub const TID: u64 = 1 << 1;
    /// `PERF_SAMPLE_TIME`: the timestamp (ns, of the event's clock).
    pub const TIME: u64 = 1 << 2;
    /// `PERF_SAMPLE_ADDR`: the data address (of a fault, a memory access).
    pub const ADDR: u64 = 1 << 3;
    /// `PERF_SAMPLE_READ`: counter values, laid out as `read_format` says.
    pub const READ: u64 = 1 << 4;
    /// `PERF_SAMPLE_CALLCHAIN`: a u64 count, then that many instruction pointers.
    pub const CALLCHAIN: u64 = 1 << 5;
    /// `PERF_SAMPLE_ID`: the event fd's kernel id.
    pub const ID: u64 = 1 << 6;
    /// `PERF_SAMPLE_CPU`: the cpu (u32) and a u32 of padding.
    pub const CPU: u64 = 1 << 7;
    /// `PERF_SAMPLE_PERIOD`: the period the sample stands for.
    pub const PERIOD: u64 = 1 << 8;
    /// `PERF_SAMPLE_STREAM_ID`: the id of the very event that sampled (an inherited
    /// child's own, where ID gives its parent's).
    pub const STREAM_ID: u64 = 1 << 9;
    /// `PERF_SAMPLE_RAW`: a u32 size, then raw data (a tracepoint's fields).
    pub const RAW: u64 = 1 << 10;
    /// `PERF_SAMPLE_BRANCH_STACK`: the last branches (LBR), as
    /// `branch_sample_type` asks.
    pub const BRANCH_STACK: u64 = 1 << 11;
    /// `PERF_SAMPLE_REGS_USER`: the ABI, then the user registers in
    /// `sample_regs_user`.
    pub const REGS_USER: u64 = 1 << 12;
    /// `PERF_SAMPLE_STACK_USER`: a copy of the user stack (size, bytes, dyn_size).
    pub const STACK_USER: u64 = 1 << 13;
    /// `PERF_SAMPLE_WEIGHT`: a u64 cost of the sample (e.g. memory latency).
    pub const WEIGHT: u64 = 1 << 14;
    /// `PERF_SAMPLE_DATA_SRC`: where a memory access was served from.
    pub const DATA_SRC: u64 = 1 << 15;
    /// `PERF_SAMPLE_IDENTIFIER`: the id again, at a fixed place (first in samples,
    /// last in sample_id trailers).
    pub const IDENTIFIER: u64 = 1 << 16;
    /// `PERF_SAMPLE_TRANSACTION`: why a hardware transaction aborted.
    pub const TRANSACTION: u64 = 1 << 17;
    /// `PERF_SAMPLE_REGS_INTR`: the ABI, then the registers at the interrupt.
    pub const REGS_INTR: u64 = 1 << 18;
    /// `PERF_SAMPLE_PHYS_ADDR`: the physical address of `ADDR`.
    pub const PHYS_ADDR: u64 = 1 << 19;
    /// `PERF_SAMPLE_AUX`: a u64 size, then a snapshot of the AUX area.
    pub const AUX: u64 = 1 << 20;
    /// `PERF_SAMPLE_CGROUP`: the cgroup id.
    pub const CGROUP: u64 = 1 << 21;
    /// `PERF_SAMPLE_DATA_PAGE_SIZE`: the page size behind `ADDR`.
    pub const DATA_PAGE_SIZE: u64 = 1 << 22;
    /// `PERF_SAMPLE_CODE_PAGE_SIZE`: the page size behind `IP`.
    pub const CODE_PAGE_SIZE: u64 = 1 << 23;
    /// `PERF_SAMPLE_WEIGHT_STRUCT`: the weight as three smaller fields (same u64
    /// slot as `WEIGHT`).
    pub const WEIGHT_STRUCT: u64 = 1 << 24;
}

/// `PERF_FORMAT_*`: bits of `attr.read_format`, the layout of counter values
/// (in `PERF_SAMPLE_READ` and from read(2)).
pub mod read_format {
    /// `PERF_FORMAT_TOTAL_TIME_ENABLED`: ns the event was enabled.
    pub const TOTAL_TIME_ENABLED: u64 = 1 << 0;
    /// `PERF_FORMAT_TOTAL_TIME_RUNNING`: ns the event was on the PMU.
    pub const TOTAL_TIME_RUNNING: u64 = 1 << 1;
    /// `PERF_FORMAT_ID`: each value is followed by its event's id.
    pub const ID: u64 = 1 << 2;
    /// `PERF_FORMAT_GROUP`: the values of every event in the group, after a count.
    pub const GROUP: u64 = 1 << 3;
    /// `PERF_FORMAT_LOST`: each value is followed by its count of lost samples.
    pub const LOST: u64 = 1 << 4;
}

/// Flag bits of the u64 at offset 40.
pub mod flags {
    /// `disabled`: the event starts off (enabled later, e.g. by `ENABLE_ON_EXEC`).
    pub const DISABLED: u64 = 1 << 0;
    /// `inherit`: children forked after the open are counted too.
    pub const INHERIT: u64 = 1 << 1;
    /// `exclude_user`: user mode is not counted.
    pub const EXCLUDE_USER: u64 = 1 << 4;
    /// `exclude_kernel`: kernel mode is not counted.
    pub const EXCLUDE_KERNEL: u64 = 1 << 5;
    /// `mmap`: `PERF_RECORD_MMAP` records for executable mappings.
    pub const MMAP: u64 = 1 << 8;
    /// `comm`: `PERF_RECORD_COMM` records when a task is named (exec, prctl).
    pub const COMM: u64 = 1 << 9;
    /// `freq`: `sample_period` holds `sample_freq`, samples per second.
    pub const FREQ: u64 = 1 << 10;
    /// `inherit_stat`: children's counts are reported per task (READ records at exit).
    pub const INHERIT_STAT: u64 = 1 << 11;
    /// `enable_on_exec`: the event is enabled at the target's next exec.
    pub const ENABLE_ON_EXEC: u64 = 1 << 12;
    /// `task`: `PERF_RECORD_FORK` and `PERF_RECORD_EXIT` records.
    pub const TASK: u64 = 1 << 13;
    /// `mmap_data`: mmap records for non-executable mappings too.
    pub const MMAP_DATA: u64 = 1 << 17;
    /// `sample_id_all`: non-sample records end with a sample_id trailer.
    pub const SAMPLE_ID_ALL: u64 = 1 << 18;
    /// `exclude_guest`: nothing is counted while a guest (VM) runs.
    pub const EXCLUDE_GUEST: u64 = 1 << 20;
    /// `exclude_callchain_user`: callchains stop at the kernel's frames.
    pub const EXCLUDE_CALLCHAIN_USER: u64 = 1 << 22;
    /// `exclude_callchain_kernel`: callchains without kernel frames.
    pub const EXCLUDE_CALLCHAIN_KERNEL: u64 = 1 << 21;
    /// `mmap2`: `PERF_RECORD_MMAP2` (with device, inode or build id) instead of MMAP.
    pub const MMAP2: u64 = 1 << 23;
    /// `comm_exec`: COMM records from an exec carry `PERF_RECORD_MISC_COMM_EXEC`.
    pub const COMM_EXEC: u64 = 1 << 24;
    /// `use_clockid`: timestamps come from `attr.clockid` (e.g. CLOCK_MONOTONIC).
    pub const USE_CLOCKID: u64 = 1 << 25;
    /// `context_switch`: `PERF_RECORD_SWITCH` / `SWITCH_CPU_WIDE` records.
    pub const CONTEXT_SWITCH: u64 = 1 << 26;
    /// `namespaces`: `PERF_RECORD_NAMESPACES` records when a task's namespaces change.
    pub const NAMESPACES: u64 = 1 << 28;
    /// `ksymbol`: `PERF_RECORD_KSYMBOL` records (JIT and BPF kernel symbols).
    pub const KSYMBOL: u64 = 1 << 29;
    /// `bpf_event`: `PERF_RECORD_BPF_EVENT` records (BPF program loads).
    pub const BPF_EVENT: u64 = 1 << 30;
    /// `cgroup`: `PERF_RECORD_CGROUP` records when a cgroup is made.
    pub const CGROUP: u64 = 1 << 32;
    /// `build_id`: MMAP2 records carry the build id instead of device and inode.
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
        /// The u64 `perf_event_attr` field this method is named after, at its byte
        /// offset (0 when the attr is too short to have it).
        pub fn $name(&self) -> u64 {
            self.get_u64($off)
        }
    };
    ($name:ident, $off:expr, u32) => {
        /// The u32 `perf_event_attr` field this method is named after, at its byte
        /// offset (0 when the attr is too short to have it).
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
    /// Writes `v` as the little-endian u64 at byte `off` (panics past the attr's end).
    pub fn set_u64(&mut self, off: usize, v: u64) {
        self.raw[off..off + 8].copy_from_slice(&v.to_le_bytes());
    }
    /// Writes `v` as the little-endian u32 at byte `off` (panics past the attr's end).
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

    /// Whether the `sample_id_all` flag is set: non-sample records end with a
    /// sample_id trailer.
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
    /// The event's `perf_event_attr`.
    pub attr: Attr,
    /// The kernel ids of its fds (one per cpu or thread), as samples' ID or
    /// IDENTIFIER carry them.
    pub ids: Vec<u64>,
    /// The event's name, from EVENT_DESC (or HEADER_EVENT_UPDATE), if known.
    pub name: Option<String>,
}

impl AttrEntry {
    /// `attr`, named `name`, with no ids yet.
    pub fn new(attr: Attr, name: Option<String>) -> AttrEntry {
        AttrEntry {
            attr,
            ids: Vec::new(),
            name,
        }
    }
}
