//! The end-of-session summary, printed like perf's and written as JSON
//! (`--stats-json`): what the recording did and, with `--threads`, every
//! drain thread's line ([`ThreadSummary`]).

use serde::Serialize;

/// What a recording did: the numbers of perf's closing lines, and perfz's own.
#[derive(Debug, Serialize)]
pub struct Summary {
    /// The recording's path as given (`-` for a pipe); after
    /// `--switch-output` the last output's (`"output"` in `--stats-json`).
    #[serde(rename = "output")]
    pub path: String,
    /// The codec spec in `--codec` syntax, level included (`zstd:3`).
    pub codec: String,
    /// Times poll woke the drain with an fd ready (perf's "Woken up N times").
    pub wakeups: u64,
    /// SAMPLE records read out of the rings, less those a `--filter` left
    /// out (the samples written, as perf counts them).
    pub samples: u64,
    /// Records read out of the rings.
    pub records: u64,
    /// Events the kernel dropped because a ring was full (LOST records).
    pub lost_events: u64,
    /// Samples the kernel could not write (PERF_FORMAT_LOST counts).
    pub lost_samples: u64,
    /// Bytes drained from the rings.
    pub ring_bytes: u64,
    /// Bytes of synthesized records before the ring data.
    pub side_band_bytes: u64,
    /// Bytes of records written (data section).
    pub bytes_written: u64,
    /// Bytes of COMPRESSED records (0 with codec none).
    pub compressed_bytes: u64,
    /// Data pages per ring.
    pub pages: usize,
    /// Ring buffers drained.
    pub rings: usize,
    /// Wall-clock seconds from the session's start to the summary.
    pub seconds: f64,
    /// The signal that stopped the recording (SIGINT, SIGTERM, SIGHUP), if one did.
    pub stop_signal: Option<i32>,
    /// The workload's (or timing command's) exit code, 128 + the signal
    /// where one killed it; `None` where none ended (no workload, still
    /// running when the recording ended).
    pub workload_exit: Option<i32>,
    /// How the data was written: serial, or async and by which backend
    /// (`"sink"` in `--stats-json`: what its sink said of itself).
    #[serde(rename = "sink")]
    pub writes: String,
    /// Checkpoints taken (the file was perf-readable after each), their bytes
    /// (skip records in the data section) and the time they took.
    pub checkpoints: u64,
    /// Bytes the checkpoints wrote, all of them together.
    pub checkpoint_bytes: u64,
    /// Seconds the checkpoints took, all of them together.
    pub checkpoint_seconds: f64,
    /// Bytes moved on the push path, when the copy meter was on.
    pub copies: Option<crate::push::Copies>,
    /// Whether the codec copies its input into a buffer of its own (zstd's
    /// streaming window): one more copy of every compressed byte, by libzstd.
    pub codec_copies_input: bool,
    /// Bytes held by the codec's state (contexts, windows, tables).
    pub codec_state_bytes: usize,
    /// Dwarf stack bytes the kernel left unwritten, left out of the file.
    pub stack_bytes_cleared: u64,
    /// Samples with a stack written whole: they did not parse as their
    /// event's layout, or their id was unknown.
    pub stack_samples_uncut: u64,
    /// The fullest any ring was when the drain came to it (0..1), and how
    /// many pushes found a ring at least 7/8 full.
    pub max_ring_fill: f64,
    /// Pushes that found their ring at least 7/8 full.
    pub near_full_pushes: u64,
    /// How much of their stack dumps the samples used (dwarf, cut).
    pub stack_use: crate::transform::stack_use::StackUse,
    /// The most events one LOST record counted: the worst overflow.
    pub largest_loss: u64,
    /// When samples were lost: what would have held the stream.
    pub advice: Option<crate::advice::Advice>,
    /// `--off-cpu`: switch-outs of the target's threads seen, off-CPU
    /// samples written, and records of other recorders' ids left out.
    pub off_cpu: Option<crate::transform::off_cpu::OffCpuCounts>,
    /// `--filter` on non-tracepoint events: where it filtered and the
    /// samples it left out.
    pub sample_filter: Option<SampleFilterSummary>,
    /// `--threads`: what each drain thread did (empty otherwise).
    pub threads: Vec<ThreadSummary>,
    /// `--switch-output`: the path of every output written, oldest first.
    pub outputs: Vec<String>,
    /// Things the user should hear, printed as `perfz: note:` lines before the summary.
    pub notes: Vec<String>,
}

/// What a sample filter (`--filter` on a non-tracepoint event) did.
#[derive(Debug, Serialize)]
pub struct SampleFilterSummary {
    /// Where it filtered: "kernel" (perfz's BPF program) or "push path".
    #[serde(rename = "where")]
    pub filtered: &'static str,
    /// Samples it left out (in the kernel and the push path).
    pub samples_dropped: u64,
    /// Why it ran in the push path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

impl Summary {
    /// `, compressed (original X MB, ratio is R)`, perf -z's words, or
    /// nothing where the output is not compressed.
    fn compression(&self) -> String {
        if self.compressed_bytes == 0 {
            return String::new();
        }
        format!(
            ", compressed (original {:.3} MB, ratio is {:.3})",
            self.ring_bytes as f64 / 1024.0 / 1024.0,
            self.ring_bytes as f64 / self.compressed_bytes as f64
        )
    }

    /// perf's "Captured and wrote" line, verbatim: no samples counted into
    /// a pipe's; with `asked` (-z, --codec) compression said as perf -z
    /// says it, else the line perf writes without -z (which perf's own
    /// tests match).
    fn captured_line(&self, asked: bool) -> String {
        let mib = |b: u64| b as f64 / 1024.0 / 1024.0;
        let samples = if self.samples > 0 && self.path != "-" {
            format!(" ({} samples)", self.samples)
        } else {
            String::new()
        };
        let compressed = if asked {
            self.compression()
        } else {
            String::new()
        };
        format!(
            "[ perf record: Captured and wrote {:.3} MB {}{samples}{compressed} ]\n",
            mib(self.bytes_written),
            self.path,
        )
    }

    /// Lines for stderr, in perf's style; `asked`: -z or --codec chose
    /// the compression (perfz's default otherwise).
    pub fn render(&self, asked: bool) -> String {
        // perfz's default compression first (a script that feeds a tool
        // reading no compressed records learns it here); then perf's own
        // two lines, verbatim (MB = MiB, as perf counts them); then
        // perfz's facts on lines of their own.
        let mut s = String::new();
        if self.compressed_bytes > 0 && !asked {
            s += &format!(
                "[ perfz record: compressed with {} by default{}: --no-compression-level writes plain perf.data (for perf inject --aslr, --convert-callchain) ]\n",
                self.codec,
                self.compression().trim_start_matches(", compressed")
            );
        }
        s += &format!(
            "[ perf record: Woken up {} times to write data ]\n",
            self.wakeups
        );
        s += &self.captured_line(asked);
        if self.compressed_bytes > 0 && asked {
            s += &format!("[ perfz record: compressed with {} ]\n", self.codec);
        }
        for f in &self.outputs {
            s += &format!("[ perf record: Dump {f} ]\n");
        }
        if self.copies.is_none() && self.writes != "serial" {
            s += &format!("[ perfz record: {} writes ]\n", self.writes);
        }
        if let Some(c) = &self.copies {
            s += &self.copies_line(c);
        }
        // -v: one line per drain thread.
        for t in self.threads.iter().filter(|_| self.copies.is_some()) {
            s += &thread_line(t);
        }
        s += &self.stream_lines();
        s
    }
    /// perfz's lines on what the stream held: off-CPU samples, records
    /// left out, stacks kept whole, losses and what would have held them.
    fn stream_lines(&self) -> String {
        let mut s = String::new();
        if let Some(c) = self.off_cpu {
            s += &format!(
                "[ perfz record: off-CPU: {} switches seen, {} waits written as offcpu-time samples ]\n",
                c.seen, c.written
            );
        }
        if let Some(n) = self.off_cpu.map(|c| c.foreign).filter(|&n| n > 0) {
            s += &format!(
                "[ perfz record: {n} records stamped with ids of another recorder's events left out \
                 (the kernel writes one context switch's samples of several software context-switches \
                 events with one id): perf would stop reading at the first ]\n"
            );
        }
        if let Some(f) = &self.sample_filter {
            let (place, why) = match &f.why {
                Some(why) => ("in the push path", format!(" ({why})")),
                None => ("in the kernel", String::new()),
            };
            s += &format!(
                "[ perfz record: the sample filter ran {place}{why}: {} samples left out ]\n",
                f.samples_dropped
            );
        }
        if self.stack_samples_uncut > 0 {
            s += &format!(
                "[ perfz record: {} samples kept their whole stack dump (their fields did not parse as their event's layout) ]\n",
                self.stack_samples_uncut
            );
        }
        if self.lost_events > 0 || self.lost_samples > 0 {
            s += &format!(
                "[ perfz record: lost {} events and {} samples: the rings filled while the drain was away \
                 (the fullest a ring was when drained: {:.0} %, {} pushes at ≥ 7/8); \
                 try a bigger -m (now {} pages), -r 10 (the drain at realtime priority), a lower -F, \
                 or a faster codec ]\n",
                self.lost_events,
                self.lost_samples,
                self.max_ring_fill * 100.0,
                self.near_full_pushes,
                self.pages
            );
            if let Some(a) = self.advice.as_ref().filter(|a| !a.text.is_empty()) {
                s += &format!("[ perfz record: to hold this stream: {} ]\n", a.text);
            }
        }
        s
    }
}

impl Summary {
    /// The `-v` line of who copied what.
    fn copies_line(&self, c: &crate::push::Copies) -> String {
        let codec_copy = if self.codec_copies_input {
            format!(
                "; the codec ({}) copies its input into its window and its output out of its staging buffer: +{} B by libzstd",
                self.codec,
                c.codec_in_bytes + self.compressed_bytes
            )
        } else if c.codec_in_bytes > 0 {
            format!(
                "; the codec ({}) reads the ring directly: its output is the only copy",
                self.codec
            )
        } else {
            String::new()
        };
        format!(
            "[ perfz record: {} writes; ring {} B, copied by perfz {} B ({:.2} copies/byte: {}){codec_copy}; codec in {} B, written {} B; codec state {} B ]\n",
            self.writes,
            c.ring_bytes,
            c.memcpy_bytes,
            c.copies_per_byte(),
            copy_who(&self.writes, c.codec_in_bytes > 0),
            c.codec_in_bytes,
            c.written_bytes,
            self.codec_state_bytes
        )
    }
}

/// The `-v` line of one drain thread.
fn thread_line(t: &ThreadSummary) -> String {
    let mb = |b: u64| b as f64 / 1e6;
    format!(
        "[ perfz record: {} ({} rings{}{}): {} samples, ring {:.3} MB -> {:.3} MB, {} wakeups, {:.3} s CPU, fullest ring {:.0} %{} ]\n",
        t.file,
        t.rings,
        if t.cpus.is_empty() { String::new() } else { format!(" of CPU {}", crate::event::cpus::format_list(&t.cpus)) },
        if t.affinity.is_empty() { String::new() } else { format!(", on CPU {}", crate::event::cpus::format_list(&t.affinity)) },
        t.samples,
        mb(t.ring_bytes),
        mb(t.bytes_written),
        t.wakeups,
        t.cpu_seconds,
        t.max_ring_fill * 100.0,
        t.error.as_ref().map(|e| format!(", failed: {e}")).unwrap_or_default(),
    )
}

/// Who copies ring bytes on this path, for the `-v` line.
fn copy_who(writes: &str, compressed: bool) -> &'static str {
    match (writes.starts_with("async"), compressed) {
        (false, false) => "raw records written from the ring with writev",
        (true, false) => "raw records copied once into the async buffer",
        (_, true) => "compressed straight from the ring into the write buffer",
    }
}

/// What one drain thread did, for the summary and `--stats-json`.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadSummary {
    /// Its data file, `data.N`.
    pub file: String,
    /// The CPUs whose rings it drained (empty for per-thread rings).
    pub cpus: Vec<u32>,
    pub rings: usize,
    /// The CPUs it was pinned to (empty: not pinned).
    pub affinity: Vec<u32>,
    pub wakeups: u64,
    pub samples: u64,
    pub records: u64,
    pub lost_events: u64,
    pub ring_bytes: u64,
    pub bytes_written: u64,
    pub compressed_bytes: u64,
    /// CPU time the thread used (user + system).
    pub cpu_seconds: f64,
    pub max_ring_fill: f64,
    pub near_full_pushes: u64,
    pub checkpoints: u64,
    /// Its write error, if it had one, and what it kept.
    pub error: Option<String>,
}
