//! Feature sections (format notes section 3): kept as raw payloads, so that
//! features we do not interpret survive a conversion, with typed views of the
//! ones we do.

use std::collections::BTreeMap;

use perfz_codecs::CodecId;

use super::endian::{Cursor, Endian};
use super::FormatError;

/// Feature bit numbers (perf 6.1 `HEADER_*`).
pub mod feat {
    /// `HEADER_TRACING_DATA`: tracefs event formats, for tracepoint events.
    pub const TRACING_DATA: u32 = 1;
    /// `HEADER_BUILD_ID`: build ids of the binaries samples hit.
    pub const BUILD_ID: u32 = 2;
    /// `HEADER_HOSTNAME`: the recording machine's host name.
    pub const HOSTNAME: u32 = 3;
    /// `HEADER_OSRELEASE`: the kernel release (`uname -r`).
    pub const OSRELEASE: u32 = 4;
    /// `HEADER_VERSION`: the version of the tool that recorded.
    pub const VERSION: u32 = 5;
    /// `HEADER_ARCH`: the machine architecture (`uname -m`).
    pub const ARCH: u32 = 6;
    /// `HEADER_NRCPUS`: cpus available and online.
    pub const NRCPUS: u32 = 7;
    /// `HEADER_CPUDESC`: the cpu model name.
    pub const CPUDESC: u32 = 8;
    /// `HEADER_CPUID`: the cpu's vendor, family, model and stepping.
    pub const CPUID: u32 = 9;
    /// `HEADER_TOTAL_MEM`: MemTotal, in kB.
    pub const TOTAL_MEM: u32 = 10;
    /// `HEADER_CMDLINE`: the recording command line.
    pub const CMDLINE: u32 = 11;
    /// `HEADER_EVENT_DESC`: each event's attr, name and ids.
    pub const EVENT_DESC: u32 = 12;
    /// `HEADER_CPU_TOPOLOGY`: core and socket sibling lists.
    pub const CPU_TOPOLOGY: u32 = 13;
    /// `HEADER_NUMA_TOPOLOGY`: NUMA nodes, their memory and cpus.
    pub const NUMA_TOPOLOGY: u32 = 14;
    /// `HEADER_BRANCH_STACK`: present (empty) when samples carry branch stacks.
    pub const BRANCH_STACK: u32 = 15;
    /// `HEADER_PMU_MAPPINGS`: PMU type numbers and names.
    pub const PMU_MAPPINGS: u32 = 16;
    /// `HEADER_GROUP_DESC`: event groups (leader and member count).
    pub const GROUP_DESC: u32 = 17;
    /// `HEADER_AUXTRACE`: the index of AUX area trace data.
    pub const AUXTRACE: u32 = 18;
    /// `HEADER_STAT`: present in files written by `perf stat record`.
    pub const STAT: u32 = 19;
    /// `HEADER_CACHE`: the cpu caches (level, size, line size, sharing).
    pub const CACHE: u32 = 20;
    /// `HEADER_SAMPLE_TIME`: the first and last sample times.
    pub const SAMPLE_TIME: u32 = 21;
    /// `HEADER_MEM_TOPOLOGY`: the memory blocks of each NUMA node.
    pub const MEM_TOPOLOGY: u32 = 22;
    /// `HEADER_CLOCKID`: the resolution (ns) of the clock `attr.clockid` names.
    pub const CLOCKID: u32 = 23;
    /// `HEADER_DIR_FORMAT`: the file is the `data` of a `--threads` directory.
    pub const DIR_FORMAT: u32 = 24;
    /// `HEADER_BPF_PROG_INFO`: loaded BPF programs (perfz writes none).
    pub const BPF_PROG_INFO: u32 = 25;
    /// `HEADER_BPF_BTF`: BTF of loaded BPF programs (perfz writes none).
    pub const BPF_BTF: u32 = 26;
    /// `HEADER_COMPRESSED`: the codec of COMPRESSED records ([`CompressedInfo`](super::CompressedInfo)).
    pub const COMPRESSED: u32 = 27;
    /// `HEADER_CPU_PMU_CAPS`: the capabilities of the core PMU.
    pub const CPU_PMU_CAPS: u32 = 28;
    /// `HEADER_CLOCK_DATA`: one moment in both the event clock and wall-clock time.
    pub const CLOCK_DATA: u32 = 29;
    /// `HEADER_HYBRID_TOPOLOGY`: the cpus of each core PMU on hybrid machines.
    pub const HYBRID_TOPOLOGY: u32 = 30;
    /// `HEADER_PMU_CAPS`: the capabilities of the other PMUs that have some.
    pub const PMU_CAPS: u32 = 31;
    /// Not a feature: the end marker of pipe-mode feature records.
    pub const LAST_FEATURE: u32 = 32;

    /// Whether perf sends the feature as a HEADER_FEATURE record in pipe mode.
    pub fn pipe_capable(bit: u32) -> bool {
        !matches!(
            bit,
            TRACING_DATA
                | BUILD_ID
                | BRANCH_STACK
                | AUXTRACE
                | STAT
                | CACHE
                | DIR_FORMAT
                | HYBRID_TOPOLOGY
        ) && bit < LAST_FEATURE
    }

    /// The `HEADER_*` name of a feature bit, without the prefix (`UNKNOWN` past 31).
    pub fn name(bit: u32) -> &'static str {
        const NAMES: [&str; 32] = [
            "RESERVED",
            "TRACING_DATA",
            "BUILD_ID",
            "HOSTNAME",
            "OSRELEASE",
            "VERSION",
            "ARCH",
            "NRCPUS",
            "CPUDESC",
            "CPUID",
            "TOTAL_MEM",
            "CMDLINE",
            "EVENT_DESC",
            "CPU_TOPOLOGY",
            "NUMA_TOPOLOGY",
            "BRANCH_STACK",
            "PMU_MAPPINGS",
            "GROUP_DESC",
            "AUXTRACE",
            "STAT",
            "CACHE",
            "SAMPLE_TIME",
            "MEM_TOPOLOGY",
            "CLOCKID",
            "DIR_FORMAT",
            "BPF_PROG_INFO",
            "BPF_BTF",
            "COMPRESSED",
            "CPU_PMU_CAPS",
            "CLOCK_DATA",
            "HYBRID_TOPOLOGY",
            "PMU_CAPS",
        ];
        NAMES.get(bit as usize).copied().unwrap_or("UNKNOWN")
    }
}

/// `HEADER_COMPRESSED`: `u32 version, type, level, ratio, mmap_len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CompressedInfo {
    /// Version of the section's layout (perfz writes 0).
    pub version: u32,
    /// The codec ([`CodecId`]): 1 is zstd, as in perf; perfz's own ids are far above.
    pub codec: u32,
    /// The codec's level (0 for codecs without one).
    pub level: u32,
    /// Ring bytes per compressed byte, rounded (0 when not known).
    pub ratio: u32,
    /// The most bytes one COMPRESSED record decodes to: readers size their
    /// decompression buffer from it.
    pub mmap_len: u32,
}

impl CompressedInfo {
    /// `codec` as a [`CodecId`].
    pub fn codec_id(&self) -> CodecId {
        CodecId(self.codec)
    }

    /// The section's 20 bytes as perf writes them (five u32, little endian).
    pub fn to_le(self) -> Vec<u8> {
        [
            self.version,
            self.codec,
            self.level,
            self.ratio,
            self.mmap_len,
        ]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect()
    }
}

/// The feature sections of a file, by bit, as raw payloads in the file's byte
/// order (little endian for everything perfz writes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FeatureSet {
    /// Payload of each feature present, keyed by `HEADER_*` bit.
    pub sections: BTreeMap<u32, Vec<u8>>,
    /// Byte order of the payloads (`None`: little endian, as perfz writes).
    pub endian: Option<Endian>,
}

impl FeatureSet {
    fn e(&self) -> Endian {
        self.endian.unwrap_or(Endian::Little)
    }

    /// The raw payload of feature `bit`, if present.
    pub fn get(&self, bit: u32) -> Option<&[u8]> {
        self.sections.get(&bit).map(Vec::as_slice)
    }

    /// Stores `payload` (in the set's byte order) as feature `bit`, replacing any.
    pub fn set(&mut self, bit: u32, payload: Vec<u8>) {
        self.sections.insert(bit, payload);
    }

    /// Drops feature `bit`, if present.
    pub fn remove(&mut self, bit: u32) {
        self.sections.remove(&bit);
    }

    /// Feature `bit` read as one header string (HOSTNAME, OSRELEASE, ARCH, ...).
    pub fn string(&self, bit: u32) -> Option<String> {
        let mut c = Cursor::new(self.get(bit)?, self.e(), 0);
        read_string(&mut c).ok()
    }

    /// Stores `s` as feature `bit`, as a header string padded as perf pads it.
    pub fn set_string(&mut self, bit: u32, s: &str) {
        let mut out = Vec::new();
        write_string(&mut out, s);
        self.set(bit, out);
    }

    /// The parsed `HEADER_COMPRESSED`; `Ok(None)` if the file has none.
    pub fn compressed(&self) -> Result<Option<CompressedInfo>, FormatError> {
        let Some(b) = self.get(feat::COMPRESSED) else {
            return Ok(None);
        };
        let mut c = Cursor::new(b, self.e(), 0);
        let mut v = [0u32; 5];
        for x in &mut v {
            *x = c.u32("HEADER_COMPRESSED")?;
        }
        Ok(Some(CompressedInfo {
            version: v[0],
            codec: v[1],
            level: v[2],
            ratio: v[3],
            mmap_len: v[4],
        }))
    }

    /// These features, with `info` (where given) as `HEADER_COMPRESSED`.
    pub fn with_compressed(&self, info: Option<CompressedInfo>) -> FeatureSet {
        let mut f = self.clone();
        if let Some(info) = info {
            f.set_compressed(info);
        }
        f
    }

    /// Only the features a reader cannot do without (HEADER_COMPRESSED, the
    /// codec of COMPRESSED records; HEADER_DIR_FORMAT, without which a
    /// `--threads` directory's `data` reads as a file of its own and its
    /// data.N are never read): what a finish writes where nothing more
    /// fits after the records.
    pub fn needed_to_read(&self) -> FeatureSet {
        let mut f = FeatureSet {
            endian: self.endian,
            ..FeatureSet::default()
        };
        for id in [feat::COMPRESSED, feat::DIR_FORMAT] {
            if let Some(b) = self.get(id) {
                f.set(id, b.to_vec());
            }
        }
        f
    }

    /// Stores `info` as `HEADER_COMPRESSED`.
    pub fn set_compressed(&mut self, info: CompressedInfo) {
        self.set(feat::COMPRESSED, info.to_le());
    }

    /// `(available, online)`.
    pub fn nr_cpus(&self) -> Option<(u32, u32)> {
        let mut c = Cursor::new(self.get(feat::NRCPUS)?, self.e(), 0);
        Some((c.u32("").ok()?, c.u32("").ok()?))
    }

    /// MemTotal in kB.
    pub fn total_mem_kb(&self) -> Option<u64> {
        Cursor::new(self.get(feat::TOTAL_MEM)?, self.e(), 0)
            .u64("")
            .ok()
    }

    /// `HEADER_CMDLINE`'s arguments, in order.
    pub fn cmdline(&self) -> Option<Vec<String>> {
        let mut c = Cursor::new(self.get(feat::CMDLINE)?, self.e(), 0);
        let n = c.u32("").ok()?;
        (0..n.min(4096)).map(|_| read_string(&mut c).ok()).collect()
    }

    /// `(name, ids)` per event.
    pub fn event_desc(&self) -> Option<Vec<(String, Vec<u64>)>> {
        let mut c = Cursor::new(self.get(feat::EVENT_DESC)?, self.e(), 0);
        let nr = c.u32("").ok()?;
        let attr_size = c.u32("").ok()? as usize;
        let mut out = Vec::new();
        for _ in 0..nr.min(65536) {
            c.skip(attr_size, "").ok()?;
            let nr_ids = c.u32("").ok()?;
            let name = read_string(&mut c).ok()?;
            if nr_ids as usize > c.remaining() / 8 {
                return None;
            }
            let ids = (0..nr_ids)
                .map(|_| c.u64(""))
                .collect::<Result<_, _>>()
                .ok()?;
            out.push((name, ids));
        }
        Some(out)
    }

    /// `(misc, pid, filename)` of each BUILD_ID entry.
    pub fn build_ids(&self) -> Option<Vec<(u16, i32, String)>> {
        Some(
            self.build_id_table()?
                .into_iter()
                .map(|(misc, pid, _, name)| (misc, pid, name))
                .collect(),
        )
    }

    /// `(misc, pid, build id, filename)` of each BUILD_ID entry: the id is
    /// `size` bytes where misc says so (PERF_RECORD_MISC_BUILD_ID_SIZE),
    /// else 20.
    #[allow(clippy::type_complexity)]
    pub fn build_id_table(&self) -> Option<Vec<(u16, i32, Vec<u8>, String)>> {
        let mut c = Cursor::new(self.get(feat::BUILD_ID)?, self.e(), 0);
        let mut out = Vec::new();
        while c.remaining() >= 8 {
            let start = c.pos;
            c.u32("").ok()?;
            let misc = c.u16("").ok()?;
            let size = c.u16("").ok()? as usize;
            if size < 36 || start + size > c.buf.len() {
                return None;
            }
            let pid = c.u32("").ok()? as i32;
            let id = &c.buf[start + 12..start + 32];
            let len = if misc & (1 << 15) != 0 {
                usize::from(c.buf[start + 32]).min(20)
            } else {
                20
            };
            let name = &c.buf[start + 36..start + size];
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            out.push((
                misc,
                pid,
                id[..len].to_vec(),
                String::from_utf8_lossy(&name[..end]).into_owned(),
            ));
            c.pos = start + size;
        }
        Some(out)
    }
}

/// A "header string": `u32 len` (NUL and padding to 64 included), then the bytes.
pub fn read_string(c: &mut Cursor<'_>) -> Result<String, FormatError> {
    let len = c.u32("string length")? as usize;
    let b = c.bytes(len, "string")?;
    let end = b.iter().position(|&x| x == 0).unwrap_or(b.len());
    Ok(String::from_utf8_lossy(&b[..end]).into_owned())
}

/// Writes a header string as perf does: padded to a multiple of 64 with NULs.
pub fn write_string<S: AsRef<[u8]> + ?Sized>(out: &mut Vec<u8>, s: &S) {
    let s = s.as_ref();
    let len = (s.len() + 1).div_ceil(64) * 64;
    out.extend_from_slice(&(len as u32).to_le_bytes());
    out.extend_from_slice(s);
    out.resize(out.len() + len - s.len(), 0);
}

/// A string list: `u32 nr` then `nr` header strings.
pub fn write_string_list<S: AsRef<[u8]>>(out: &mut Vec<u8>, items: &[S]) {
    out.extend_from_slice(&(items.len() as u32).to_le_bytes());
    for s in items {
        write_string(out, s);
    }
}
