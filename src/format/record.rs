//! Record headers and types. Types are an open newtype: a record type we do not
//! know passes through every tool untouched.
//!
//! `records` is the one walker of in-memory record streams, and
//! `Record::from_ring` the one rule for "this record passed through a ring"
//! (replay, and through it eval, and convert ask it).

use super::endian::Endian;

/// The name perf gives the kernel's maps (`[kernel.kallsyms]_text` for its
/// image) and its module in perf script's output.
pub const KERNEL_MAPS: &str = "[kernel.kallsyms]";

/// `perf_event_header.misc` bits (`PERF_RECORD_MISC_*`).
pub mod misc {
    /// The CPU mode field: one of the values below it.
    pub const CPUMODE_MASK: u16 = 7;
    /// `PERF_RECORD_MISC_KERNEL`: the sample hit kernel code.
    pub const KERNEL: u16 = 1;
    /// `PERF_RECORD_MISC_USER`: the sample hit user code.
    pub const USER: u16 = 2;
    /// MMAP/MMAP2 of a data (not executable) mapping.
    pub const MMAP_DATA: u16 = 1 << 13;
    /// `PERF_RECORD_MISC_SWITCH_OUT`: a SWITCH record of a task going off
    /// its CPU (without it: coming on).
    pub const SWITCH_OUT: u16 = 1 << 13;
    /// MMAP2 carries a build id instead of the inode fields.
    pub const MMAP_BUILD_ID: u16 = 1 << 14;
    /// HEADER_BUILD_ID entry with its build id's size (perf's
    /// PERF_RECORD_MISC_BUILD_ID_SIZE).
    pub const BUILD_ID_SIZE: u16 = 1 << 15;
    /// LOST_SAMPLES counting the samples a BPF sample filter dropped, not
    /// samples lost for want of room (perf's
    /// PERF_RECORD_MISC_LOST_SAMPLES_BPF, perf 6.7+).
    pub const LOST_SAMPLES_BPF: u16 = 1 << 15;
}

/// `perf_event_header.type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordType(pub u32);

impl RecordType {
    /// `PERF_RECORD_MMAP`: a new executable mapping (address, length, offset, path).
    pub const MMAP: Self = Self(1);
    /// `PERF_RECORD_LOST`: records the kernel dropped because the ring was full.
    pub const LOST: Self = Self(2);
    /// `PERF_RECORD_COMM`: a task's new name (exec or prctl).
    pub const COMM: Self = Self(3);
    /// `PERF_RECORD_EXIT`: a task exited.
    pub const EXIT: Self = Self(4);
    /// `PERF_RECORD_THROTTLE`: the kernel throttled sampling (too many interrupts).
    pub const THROTTLE: Self = Self(5);
    /// `PERF_RECORD_UNTHROTTLE`: sampling resumed after a throttle.
    pub const UNTHROTTLE: Self = Self(6);
    /// `PERF_RECORD_FORK`: a new task (process or thread).
    pub const FORK: Self = Self(7);
    /// `PERF_RECORD_READ`: counter values of an inherited event at a child's exit.
    pub const READ: Self = Self(8);
    /// `PERF_RECORD_SAMPLE`: one sample, laid out as its attr's sample_type says.
    pub const SAMPLE: Self = Self(9);
    /// `PERF_RECORD_MMAP2`: MMAP plus device, inode (or build id) and protection.
    pub const MMAP2: Self = Self(10);
    /// `PERF_RECORD_LOST_SAMPLES`: samples the PMU dropped before the ring.
    pub const LOST_SAMPLES: Self = Self(13);
    /// `PERF_RECORD_SWITCH`: a context switch in or out of the traced task.
    pub const SWITCH: Self = Self(14);
    /// `PERF_RECORD_SWITCH_CPU_WIDE`: a context switch on a cpu, with the
    /// other task's pid and tid.
    pub const SWITCH_CPU_WIDE: Self = Self(15);
    /// First of perf's own ("user") record types, which never carry a trailer.
    pub const USER_START: Self = Self(64);
    /// `PERF_RECORD_HEADER_ATTR`: pipe mode's attr and its ids.
    pub const HEADER_ATTR: Self = Self(64);
    /// Pipe mode's tracing data: a 16-byte record (`u32 size`, pad) followed
    /// by `size` bytes that are not part of it.
    pub const HEADER_TRACING_DATA: Self = Self(66);
    /// `PERF_RECORD_HEADER_BUILD_ID`: pipe mode's build id of one binary.
    pub const HEADER_BUILD_ID: Self = Self(67);
    /// `PERF_RECORD_FINISHED_ROUND`: every record before it may be sorted by
    /// time against those after it.
    pub const FINISHED_ROUND: Self = Self(68);
    /// `PERF_RECORD_ID_INDEX`: the cpu and thread of each event id.
    pub const ID_INDEX: Self = Self(69);
    /// `PERF_RECORD_AUXTRACE`: a stretch of AUX area trace; its `size` bytes
    /// of trace follow the record and are not counted in its header.
    pub const AUXTRACE: Self = Self(71);
    /// `PERF_RECORD_THREAD_MAP`: the threads the events were opened on.
    pub const THREAD_MAP: Self = Self(73);
    /// `PERF_RECORD_CPU_MAP`: the cpus the events were opened on.
    pub const CPU_MAP: Self = Self(74);
    /// `PERF_RECORD_EVENT_UPDATE`: an event's name, unit, scale or cpus.
    pub const EVENT_UPDATE: Self = Self(78);
    /// `PERF_RECORD_TIME_CONV`: how to convert TSC values to event times.
    pub const TIME_CONV: Self = Self(79);
    /// `PERF_RECORD_HEADER_FEATURE`: pipe mode's feature section (u64 bit, then
    /// its payload).
    pub const HEADER_FEATURE: Self = Self(80);
    /// `PERF_RECORD_COMPRESSED`: codec bytes that decode to more records.
    pub const COMPRESSED: Self = Self(81);
    /// `PERF_RECORD_FINISHED_INIT`: the end of the synthesized side band.
    pub const FINISHED_INIT: Self = Self(82);
    /// `PERF_RECORD_COMPRESSED2` (perf 6.16+): COMPRESSED with a u64 `data_size`
    /// and padding to 8 bytes.
    pub const COMPRESSED2: Self = Self(83);

    /// True for records produced by the kernel (types below 64).
    pub fn is_kernel(self) -> bool {
        self.0 < Self::USER_START.0
    }

    /// True for COMPRESSED and COMPRESSED2: records whose body decodes to records.
    pub fn is_compressed(self) -> bool {
        self == Self::COMPRESSED || self == Self::COMPRESSED2
    }

    /// The name `perf report --stats` prints.
    pub fn name(self) -> Option<&'static str> {
        const KERNEL: [&str; 22] = [
            "",
            "MMAP",
            "LOST",
            "COMM",
            "EXIT",
            "THROTTLE",
            "UNTHROTTLE",
            "FORK",
            "READ",
            "SAMPLE",
            "MMAP2",
            "AUX",
            "ITRACE_START",
            "LOST_SAMPLES",
            "SWITCH",
            "SWITCH_CPU_WIDE",
            "NAMESPACES",
            "KSYMBOL",
            "BPF_EVENT",
            "CGROUP",
            "TEXT_POKE",
            "AUX_OUTPUT_HW_ID",
        ];
        const USER: [&str; 20] = [
            "ATTR",
            "EVENT_TYPE",
            "TRACING_DATA",
            "BUILD_ID",
            "FINISHED_ROUND",
            "ID_INDEX",
            "AUXTRACE_INFO",
            "AUXTRACE",
            "AUXTRACE_ERROR",
            "THREAD_MAP",
            "CPU_MAP",
            "STAT_CONFIG",
            "STAT",
            "STAT_ROUND",
            "EVENT_UPDATE",
            "TIME_CONV",
            "FEATURE",
            "COMPRESSED",
            "FINISHED_INIT",
            "COMPRESSED2",
        ];
        let t = self.0 as usize;
        match t {
            1..=21 => Some(KERNEL[t]),
            64..=83 => Some(USER[t - 64]),
            _ => None,
        }
    }
}

impl std::fmt::Display for RecordType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "type {}", self.0),
        }
    }
}

/// `struct perf_event_header`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordHeader {
    /// What the record is (`PERF_RECORD_*`).
    pub type_: RecordType,
    /// Flag bits whose meaning depends on the type (see the [`misc`] module).
    pub misc: u16,
    /// Bytes of the whole record, header included.
    pub size: u16,
}

impl RecordHeader {
    /// Bytes of the header itself.
    pub const SIZE: usize = 8;

    /// Reads a header stored in byte order `e`.
    pub fn parse(b: &[u8; 8], e: Endian) -> Self {
        RecordHeader {
            type_: RecordType(e.u32([b[0], b[1], b[2], b[3]])),
            misc: e.u16([b[4], b[5]]),
            size: e.u16([b[6], b[7]]),
        }
    }

    /// A header of a little-endian stream (what rings and our files hold).
    pub fn from_le(b: [u8; 8]) -> Self {
        Self::parse(&b, Endian::Little)
    }

    /// The 8 bytes of the header, little endian.
    pub fn to_le(self) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&self.type_.0.to_le_bytes());
        b[4..6].copy_from_slice(&self.misc.to_le_bytes());
        b[6..].copy_from_slice(&self.size.to_le_bytes());
        b
    }
}

/// One record as read: its header and all its bytes (header included), and where
/// it came from.
#[derive(Clone, Copy, Debug)]
pub struct Record<'a> {
    /// The record's header, decoded from the file's byte order.
    pub header: RecordHeader,
    /// The whole record, header included, in the file's byte order. An
    /// AUXTRACE's trace follows its `header.size` bytes here, so that the
    /// record travels with its payload: only for AUXTRACE is `bytes` longer
    /// than `header.size`.
    pub bytes: &'a [u8],
    /// File offset of the record, or of the COMPRESSED record it was inside.
    pub offset: u64,
    /// True if it came out of a COMPRESSED record.
    pub nested: bool,
    /// Which stream of a directory-format file (`None` for the main one).
    pub stream: Option<u32>,
}

impl<'a> Record<'a> {
    /// The bytes after the 8-byte header.
    pub fn body(&self) -> &'a [u8] {
        &self.bytes[RecordHeader::SIZE..]
    }

    /// Whether this record passed through a ring buffer, as opposed to the
    /// side band perf synthesizes before FINISHED_INIT and perf's own user
    /// records: anything inside a COMPRESSED record or a `--threads` data
    /// file, and kernel records once `after_init` (FINISHED_INIT was seen).
    /// The one rule for conversion, replay and eval.
    pub fn from_ring(&self, after_init: bool) -> bool {
        self.nested || self.stream.is_some() || (after_init && self.header.type_.is_kernel())
    }
}

/// A record stream in memory that does not walk: a header whose size is
/// below 8, or a record that runs past the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("at byte {offset} of the record stream: {what}")]
pub struct BadRecord {
    /// Where the bad record starts, in bytes from the stream's start.
    pub offset: usize,
    /// What is wrong with it.
    pub what: &'static str,
}

/// Walks a little-endian record stream held in memory (ring data, the
/// payloads kept by eval): each item is one whole record, header included.
/// Stops after the first error.
pub struct RecordIter<'a> {
    bytes: &'a [u8],
    at: usize,
}

/// The records of `bytes`, in order.
pub fn records(bytes: &[u8]) -> RecordIter<'_> {
    RecordIter { bytes, at: 0 }
}

impl<'a> Iterator for RecordIter<'a> {
    type Item = Result<(RecordHeader, &'a [u8]), BadRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.bytes.get(self.at..)?;
        if rest.is_empty() {
            return None;
        }
        let offset = self.at;
        let fail = |what| Some(Err(BadRecord { offset, what }));
        let Some(h) = rest.first_chunk::<8>() else {
            self.at = self.bytes.len();
            return fail("a record header cut off by the end");
        };
        let h = RecordHeader::from_le(*h);
        let size = h.size as usize;
        if size < RecordHeader::SIZE {
            self.at = self.bytes.len();
            return fail("a record header with a size below 8");
        }
        if size > rest.len() {
            self.at = self.bytes.len();
            return fail("a record cut off by the end");
        }
        self.at += size;
        Some(Ok((h, &rest[..size])))
    }
}
