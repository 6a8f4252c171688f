//! `perfz export`: recordings to the formats people look at profiles in.
//! Two streaming passes over every input (perfz's and perf's files in every
//! codec, pipes, `--threads` directories, several `--switch-output`
//! outputs merged): the first follows the side band (the processes' names
//! and maps through time), the second names each sample's callchain as it
//! was at the sample's time and collapses it. Memory grows with the side
//! band, the symbol tables and the distinct stacks, not with the samples
//! (but for speedscope's, which keeps each sample's time, weight and stack
//! id to sort them by time).
//!
//! ```text
//! pass 1: PerfReader ─ side band (by time) ─▶ Timeline (names per thread, maps per process)
//! pass 2: PerfReader ─ SAMPLE ─▶ callchain (kernel / user contexts) at its time
//!         (dwarf: kernel part + user frames unwound from regs and stack, unwind/)
//!         ─▶ Symbols ─▶ gather::Gather: Folded (folded lines, svg) | pprof::ProfileBuilder (pprof)
//!                       | speedscope::Speedscope (speedscope)
//! ```
//!
//! Its rooms, each opened by its own `mod.rs`:
//!
//! - `recording/`: what the recording says: its events, the side band
//!   through time (the first pass, `survey`), each process's maps;
//! - `files/`: the files it maps: found (`--symfs`, the build-id cache,
//!   debuginfod), opened, their load maps;
//! - `name/`: each distinct frame named as `perf script` names it (symbol
//!   tables, inline frames, kallsyms, JIT maps and dumps, demangling);
//! - `unwind/`: dwarf recordings' user stacks, unwound;
//! - `otlp_push.rs`: OTLP requests sent to a collector (OTLP/HTTP);
//! - `write/`: what is written: folded lines and svg, pprof, speedscope,
//!   two recordings' difference ([`diff`]), `perfz report`'s table.
//!
//! The front door is [`export`] and [`diff`] with their options and
//! results; [`Elf`], [`Inline`] and [`unwind_one`] are open to the fuzz
//! targets.

pub(crate) mod files;
pub(crate) mod name;
pub mod otlp_push;
mod passes;
pub(crate) mod recording;
pub(crate) mod unwind;
pub(crate) mod write;

use std::path::PathBuf;

use crate::format::FormatError;
use name::kallsyms::Kallsyms;
use passes::SecondPass;
use recording::survey;

pub use files::locate::Symfs;
pub use name::demangle::demangle;
pub use name::inline::Inline;
pub use name::symbols::Elf;
pub use name::unnamed::UnnamedFile;
pub use recording::events::Time;
pub use unwind::dwarf::unwind_one;
pub use write::diff::diff;
pub use write::folded::FoldOptions;
pub use write::gather::FlameOptions;

/// What an export read.
#[derive(Debug, Default, serde::Serialize)]
pub struct Exported {
    /// Samples exported.
    pub samples: u64,
    /// Distinct stacks written (folded lines, or pprof samples).
    pub stacks: usize,
    /// Frames without a function name.
    pub unknown_frames: u64,
    /// Frames over all samples, each inlined function counted as a frame of its own.
    pub frames: u64,
    /// Whether kernel frames were named (the recording is from this kernel).
    pub kernel_symbols: bool,
    /// Samples whose user stack was unwound from their stack copy (dwarf).
    pub unwound: u64,
    /// Why dwarf stacks were not unwound, where they were not.
    pub not_unwound: Option<String>,
    /// The event exported (`a + b`: on- and off-CPU time, in nanoseconds).
    pub event: Option<String>,
    /// The recording's other events, left out (`-e` chooses).
    pub other_events: Vec<String>,
    /// Inputs cut short or damaged, read up to the damage.
    pub cut_short: Vec<String>,
    /// What went wrong asking debuginfod servers, once each.
    pub debuginfod: Vec<String>,
    /// The weights' unit: `nanoseconds` or `none` (counts).
    pub unit: &'static str,
    /// The files whose frames stayed without a name, most first.
    pub unnamed: Vec<UnnamedFile>,
}

/// What `perfz export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// stackcollapse-perf's lines.
    Folded,
    /// A flame graph (inferno's, as flamegraph.pl draws them).
    Svg,
    /// A gzipped pprof profile.
    Pprof,
    /// speedscope's JSON: a time-ordered profile per thread.
    Speedscope,
    /// OpenTelemetry profiles: an ExportProfilesServiceRequest (protobuf).
    Otlp,
    /// The same in the OTLP JSON mapping.
    OtlpJson,
}

impl ExportFormat {
    /// One of the OpenTelemetry formats.
    pub fn is_otlp(self) -> bool {
        matches!(self, ExportFormat::Otlp | ExportFormat::OtlpJson)
    }
}

/// What an OTLP export says of where it is from.
#[derive(Debug, Clone, Default)]
pub struct OtlpOptions {
    /// The resource's `service.name` (None: the recorded command's name,
    /// else the process that weighs most).
    pub service_name: Option<String>,
    /// The recorded command's name from the recorder's command line
    /// (HEADER_CMDLINE), read as `perfz record` reads its own.
    pub command_name: Option<CommandName>,
}

/// What reads the recorded command's name out of a recorder's command line.
pub type CommandName = fn(&[String]) -> Option<String>;

/// How to export.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// How stacks are folded into lines (folded and svg output).
    pub fold: FoldOptions,
    /// Only the samples of this event (its name as perf prints it).
    pub event: Option<String>,
    /// With off-CPU samples: wall-clock time, or on- or off-CPU alone.
    pub time: Time,
    /// Inline frames where DWARF says so, as perf script shows them.
    pub inline: bool,
    /// `--symfs`: the recorded paths are looked up under this root.
    pub symfs: Option<Symfs>,
    /// `--kallsyms`: the kernel's symbols from this file, whichever
    /// kernel the recording is from.
    pub kallsyms: Option<PathBuf>,
    /// The debuginfod servers (space-separated URLs) to fetch missing
    /// symbols from; None or empty: none.
    pub debuginfod: Option<String>,
    /// How an svg flame graph is drawn.
    pub flame: FlameOptions,
    /// A latency profile: each sample weighs its period divided by how many
    /// of the program's threads ran then (`perf report --latency`).
    pub latency: bool,
    /// OTLP: the resource's names.
    pub otlp: OtlpOptions,
}

/// Exports every sample of `inputs` (read in order, as one recording) to
/// `out` as `format`: a first pass follows the side band, a second names
/// each sample's frames as they were at its time.
pub fn export(
    inputs: &[PathBuf],
    format: ExportFormat,
    o: &ExportOptions,
    out: &mut dyn std::io::Write,
) -> Result<Exported, FormatError> {
    // Read beside the first pass; left unread where the recording turns
    // out to be from another kernel.
    let kallsyms = Kallsyms::read(passes::kallsyms_file(o));
    let survey = survey::survey(inputs)?;
    let mut pass = SecondPass::new(&survey, format, o, kallsyms)?;
    for input in inputs {
        pass.read(input)?;
    }
    pass.finish(inputs, out)
}

/// The OTLP profiles of `inputs` (read as [`export`] reads them) as
/// encoded `ExportProfilesServiceRequest`s to send, each at most `limit`
/// bytes where a single sample allows (split by profile, then by
/// samples); and what the export did. A recording without samples is an
/// error: nothing is made to send.
pub fn otlp_requests(
    inputs: &[PathBuf],
    o: &ExportOptions,
    limit: usize,
) -> Result<(Vec<Vec<u8>>, Exported), FormatError> {
    let kallsyms = Kallsyms::read(passes::kallsyms_file(o));
    let survey = survey::survey(inputs)?;
    let mut pass = SecondPass::new(&survey, ExportFormat::Otlp, o, kallsyms)?;
    for input in inputs {
        pass.read(input)?;
    }
    pass.finish_requests(inputs, limit)
}

/// `perfz report`'s own table of `inputs` (read as [`export`] reads
/// them, their stacks folded as `o` says) by `keys`, the rows with the
/// most self first with `by_self`; and what the export did. Counted from
/// the samples' stacks, not from folded text, which a name with a
/// newline would forge.
pub(crate) fn report_table(
    inputs: &[PathBuf],
    o: &ExportOptions,
    keys: &[write::report::SortKey],
    by_self: bool,
) -> Result<(write::report::ReportTable, Exported), FormatError> {
    let kallsyms = Kallsyms::read(passes::kallsyms_file(o));
    let survey = survey::survey(inputs)?;
    let mut pass = SecondPass::new(&survey, ExportFormat::Folded, o, kallsyms)?;
    for input in inputs {
        pass.read(input)?;
    }
    pass.finish_table(keys, by_self)
}
