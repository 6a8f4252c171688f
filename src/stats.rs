//! What `perfz stat` reports: header facts, compression, per-type record counts
//! like `perf report --stats`, lost totals and sizes.
//!
//! It sits above `push` in the layers: it reads a file's dwarf stack use
//! (`transform::stack_use`) and gives the loss advice (`advice`) as the record
//! summary does.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::format::feature::feat;
use crate::format::reader::{Mode, PerfReader};
use crate::format::FormatError;
use walk::RecordWalk;

mod walk;

/// One event of the file: its attr's identity and how many samples it took.
#[derive(Debug, Serialize)]
pub struct EventInfo {
    /// The event's name, from EVENT_DESC (or HEADER_EVENT_UPDATE), if known.
    pub name: Option<String>,
    /// `perf_event_attr.type` (`PERF_TYPE_*`).
    pub type_: u32,
    /// `perf_event_attr.config`.
    pub config: u64,
    /// `perf_event_attr.sample_type` (`PERF_SAMPLE_*` bits).
    pub sample_type: u64,
    /// How many ids (event fds, one per cpu or thread) the attr lists.
    pub ids: usize,
    /// SAMPLE records of the event in the file.
    pub samples: u64,
}

/// What `HEADER_COMPRESSED` declares and what the COMPRESSED records hold.
#[derive(Debug, Serialize)]
pub struct Compression {
    /// The codec's name (`zstd`, `lz4`, ...; `unknown` for an id perfz does not know).
    pub codec: String,
    /// `HEADER_COMPRESSED.type`: the codec's id.
    pub codec_id: u32,
    /// `HEADER_COMPRESSED.level`.
    pub level: u32,
    /// `HEADER_COMPRESSED.ratio`, as the writer declared it (0: none).
    pub declared_ratio: u32,
    /// `HEADER_COMPRESSED.mmap_len`: the most one record may decode to, in bytes.
    pub mmap_len: u32,
    /// Bytes of COMPRESSED records, headers included (perf's "compressed").
    pub compressed_bytes: u64,
    /// Bytes decoded from them (perf's "original").
    pub decompressed_bytes: u64,
}

/// Everything `perfz stat` reports about one recording.
#[derive(Debug, Serialize)]
pub struct Stats {
    /// The file (or `--threads` directory) read.
    pub path: String,
    /// File, pipe or directory layout.
    pub mode: Mode,
    /// Bytes on disk (of all files, for a directory).
    pub file_size: u64,
    /// Bytes of the records as stored (COMPRESSED ones whole, not decoded).
    pub data_size: u64,
    /// HEADER_HOSTNAME.
    pub hostname: Option<String>,
    /// HEADER_OSRELEASE: the recording machine's kernel release.
    pub os_release: Option<String>,
    /// HEADER_VERSION: the version of the tool that recorded.
    pub perf_version: Option<String>,
    /// HEADER_ARCH (`x86_64`, ...).
    pub arch: Option<String>,
    /// HEADER_NRCPUS: cpus online.
    pub nr_cpus_online: Option<u32>,
    /// HEADER_NRCPUS: cpus available.
    pub nr_cpus_available: Option<u32>,
    /// HEADER_CPUDESC: the cpu model name.
    pub cpu_desc: Option<String>,
    /// HEADER_CPUID: vendor, family, model and stepping.
    pub cpuid: Option<String>,
    /// HEADER_TOTAL_MEM: MemTotal, in kB.
    pub total_mem_kb: Option<u64>,
    /// HEADER_CMDLINE: the recording command line.
    pub cmdline: Option<Vec<String>>,
    /// The names of the feature sections present, in bit order.
    pub features: Vec<&'static str>,
    /// Entries in HEADER_BUILD_ID.
    pub build_ids: usize,
    /// Every event (attr) of the file, in file order.
    pub events: Vec<EventInfo>,
    /// HEADER_COMPRESSED and the COMPRESSED records' sizes, if compressed.
    pub compression: Option<Compression>,
    /// Records per type name, outer and decoded alike (as `perf report --stats`).
    pub counts: BTreeMap<u32, (String, u64)>,
    /// Records of every type, outer and decoded alike.
    pub total_records: u64,
    /// Sum of LOST records' `lost` fields.
    pub lost_events: u64,
    /// Sum of LOST_SAMPLES records' `lost` fields (but a BPF filter's).
    pub lost_samples: u64,
    /// Samples a BPF sample filter dropped (LOST_SAMPLES marked
    /// PERF_RECORD_MISC_LOST_SAMPLES_BPF).
    pub dropped_samples: u64,
    /// The largest `lost` of one LOST record: the worst overflow.
    pub largest_loss: u64,
    /// How much of their stack dumps dwarf samples used.
    pub stack_use: crate::transform::stack_use::StackUse,
    /// When samples were lost: what would have held the stream.
    pub advice: Option<crate::advice::Advice>,
    /// Decompressed bytes of a last record cut off where the recorder
    /// stopped before flushing its codec (dropped, as perf drops them).
    pub cut_off: usize,
    /// What ended a pipe before all its bytes were records (bytes appended,
    /// a record of size 0 or cut off): read up to there, as perf reads it.
    pub damage: Option<String>,
}

/// Reads the whole file and gathers its [`Stats`].
pub fn collect(mut r: PerfReader) -> Result<Stats, FormatError> {
    let mut w = RecordWalk::default();
    while let Some((rec, meta)) = r.next_record()? {
        w.add(&rec, meta);
    }
    let f = &r.features;
    let compression = w.compression(f)?;
    let advice = w.advice();
    let events = events_of(&r.attrs, &w.samples);
    let RecordWalk {
        counts,
        total,
        lost,
        lost_samples,
        dropped_samples,
        largest_loss,
        data_size,
        stack_use,
        ..
    } = w;
    let file_size = crate::format::size_on_disk(&r.path);
    Ok(Stats {
        path: r.path.display().to_string(),
        mode: r.mode,
        file_size,
        data_size,
        hostname: f.string(feat::HOSTNAME),
        os_release: f.string(feat::OSRELEASE),
        perf_version: f.string(feat::VERSION),
        arch: f.string(feat::ARCH),
        nr_cpus_available: f.nr_cpus().map(|c| c.0),
        nr_cpus_online: f.nr_cpus().map(|c| c.1),
        cpu_desc: f.string(feat::CPUDESC),
        cpuid: f.string(feat::CPUID),
        total_mem_kb: f.total_mem_kb(),
        cmdline: f.cmdline(),
        features: f.sections.keys().map(|&b| feat::name(b)).collect(),
        build_ids: f.build_ids().map_or(0, |v| v.len()),
        events,
        compression,
        counts,
        total_records: total,
        lost_events: lost,
        lost_samples,
        dropped_samples,
        largest_loss,
        stack_use,
        cut_off: r.cut_off(),
        damage: r.damage().map(|d| d.to_string()),
        advice,
    })
}

/// Each event of `attrs` with the samples read of it (`samples`, per attr
/// index).
fn events_of(attrs: &[crate::format::AttrEntry], samples: &BTreeMap<usize, u64>) -> Vec<EventInfo> {
    attrs
        .iter()
        .enumerate()
        .map(|(i, a)| EventInfo {
            name: a.name.clone(),
            type_: a.attr.type_(),
            config: a.attr.config(),
            sample_type: a.attr.sample_type(),
            ids: a.ids.len(),
            samples: samples.get(&i).copied().unwrap_or(0),
        })
        .collect()
}

impl Stats {
    /// The lost and dropped lines.
    fn render_losses(&self, s: &mut String) {
        use std::fmt::Write;
        let _ = writeln!(
            s,
            "lost        : {} events (LOST), {} samples (LOST_SAMPLES)",
            self.lost_events, self.lost_samples
        );
        if self.dropped_samples > 0 {
            let _ = writeln!(
                s,
                "dropped     : {} samples by a BPF sample filter (LOST_SAMPLES, misc BPF)",
                self.dropped_samples
            );
        }
    }

    /// The lines about the file, the machine and the recording command.
    fn about_the_file(&self, s: &mut String) {
        use std::fmt::Write;
        let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        let _ = writeln!(
            s,
            "file        : {} ({:?} mode, {} bytes, data {} bytes)",
            self.path, self.mode, self.file_size, self.data_size
        );
        let _ = writeln!(s, "hostname    : {}", opt(&self.hostname));
        let _ = writeln!(s, "os release  : {}", opt(&self.os_release));
        let _ = writeln!(s, "perf version: {}", opt(&self.perf_version));
        let _ = writeln!(s, "arch        : {}", opt(&self.arch));
        if let (Some(a), Some(o)) = (self.nr_cpus_available, self.nr_cpus_online) {
            let _ = writeln!(s, "nr cpus     : {o} online, {a} available");
        }
        if let Some(d) = &self.cpu_desc {
            let _ = writeln!(s, "cpu         : {d} ({})", opt(&self.cpuid));
        }
        if let Some(m) = self.total_mem_kb {
            let _ = writeln!(s, "total memory: {m} kB");
        }
        if let Some(c) = &self.cmdline {
            let _ = writeln!(s, "cmdline     : {}", c.join(" "));
        }
        let _ = writeln!(s, "features    : {}", self.features.join(" "));
        if self.cut_off > 0 {
            let _ = writeln!(
                s,
                "cut off     : the last {} decompressed bytes start a record the recording's end cut off (it stopped before flushing its codec); left out, as perf does",
                self.cut_off
            );
        }
        if let Some(d) = &self.damage {
            let _ = writeln!(
                s,
                "damaged     : read up to the damage, as perf reads it: {d}"
            );
        }
    }

    /// The text `perfz stat` prints.
    pub fn render(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        self.about_the_file(&mut s);
        for ev in &self.events {
            let _ = writeln!(
                s,
                "event       : {} (type {}, config {}, sample_type {:#x}, {} ids): {} samples",
                ev.name.as_deref().unwrap_or("?"),
                ev.type_,
                ev.config,
                ev.sample_type,
                ev.ids,
                ev.samples
            );
        }
        match &self.compression {
            Some(c) => {
                let actual = if c.compressed_bytes > 0 {
                    c.decompressed_bytes as f64 / c.compressed_bytes as f64
                } else {
                    0.0
                };
                let _ = writeln!(
                    s,
                    "compressed  : {}, level {}, ratio {} (measured {actual:.3}: {} -> {} bytes), mmap_len {}",
                    c.codec, c.level as i32, c.declared_ratio, c.decompressed_bytes, c.compressed_bytes, c.mmap_len
                );
            }
            None => {
                let _ = writeln!(s, "compressed  : no");
            }
        }
        self.render_losses(&mut s);
        if self.stack_use.samples > 0 {
            let u = &self.stack_use;
            let _ = writeln!(
                s,
                "user stacks : {} samples used at most {} of {} bytes (99 % at most {})",
                u.samples,
                u.max,
                u.dump,
                u.quantile(0.99)
            );
        }
        if let Some(a) = self.advice.as_ref().filter(|a| !a.text.is_empty()) {
            let _ = writeln!(s, "to hold it  : {}", a.text);
        }
        let _ = writeln!(s, "\nAggregated stats:");
        let _ = writeln!(s, "{:>20} events: {:>10}", "TOTAL", self.total_records);
        for (name, n) in self.counts.values() {
            let pct = 100.0 * *n as f64 / self.total_records.max(1) as f64;
            let _ = writeln!(s, "{:>20} events: {:>10}  ({pct:4.1}%)", name, n);
        }
        s
    }
}
