//! The seam every export format is written through: what a format says of
//! itself, gathers sample by sample, and writes at the end ([`Format`]);
//! what it is handed at the end ([`Ending`]); and how it writes two
//! recordings' difference, where it does ([`Diff`]).
//!
//! A new format is one file under `write/` that implements [`Format`] and
//! one line in the list of formats (`crate::export::formats::FORMATS`):
//! the command line's `--format`, its help and the export's dispatch all
//! read that list. The second pass is generic over the format, so each
//! sample goes to the format's own [`Format::add_sample`], chosen once.

use std::io::Write;
use std::path::PathBuf;

use crate::export::name::frames::Named;
use crate::export::recording::events::{EventSamples, Several};
use crate::export::write::diff::Diffed;
use crate::export::write::fold::FoldOptions;
use crate::export::write::sampled::Sampled;
use crate::export::{ExportOptions, Exported};
use crate::format::FormatError;

/// An export format: its name, what it asks of the second pass, what it
/// gathers of each sample and what it writes of them.
pub(crate) trait Format: Sized {
    /// Its name on the command line (`--format NAME`).
    const NAME: &'static str;
    /// What it is, one line of `--help`.
    const HELP: &'static str;
    /// A binary format is refused to a terminal with this advice.
    const BINARY: Option<&'static str> = None;
    /// What it makes of a recording with samples of several events (none
    /// chosen with `-e`).
    const SEVERAL_EVENTS: Several = Several::First;
    /// Each sample's frames named before it is added (else all are named
    /// once, at the end).
    const NAMES_AS_IT_GOES: bool = false;
    /// A sample's process name asked for (else its thread's stands in).
    const WANTS_PROCESS: bool = false;

    /// Nothing gathered yet, for an export as `o` says.
    fn new(o: &ExportOptions) -> Self;

    /// Gathers sample `s`, whose stack's frame ids are of `named`, folded
    /// as `fold` says.
    fn add_sample(&mut self, fold: &FoldOptions, named: &[Named<'_>], s: &Sampled<'_>);

    /// Writes what was gathered to `out`; how many stacks it holds.
    fn write_to(self, end: &Ending<'_>, out: &mut dyn Write) -> Result<usize, FormatError>;

    /// `--diff`: how the recording `d.new` differs from `d.base`, written
    /// to `out`; how many stacks. Refused unless the format says how.
    fn diff(d: &mut Diff<'_, impl Exports>, out: &mut dyn Write) -> Result<usize, FormatError> {
        let _ = (d, out);
        Err(FormatError::Unsupported(format!(
            "--diff is not written as {}: export each recording",
            Self::NAME
        )))
    }
}

/// What a format is handed at the end of the second pass: the frames
/// named, the options, and what the recording says of itself.
pub(crate) struct Ending<'a> {
    /// The export's frame table, each distinct frame named.
    pub(crate) named: &'a [Named<'a>],
    /// The export's options.
    pub(crate) o: &'a ExportOptions,
    /// The recording's inputs, read as one.
    pub(crate) inputs: &'a [PathBuf],
    /// The events exported.
    pub(crate) chosen: &'a [&'a EventSamples],
    /// The earliest and latest sample times.
    pub(crate) span: (u64, u64),
    /// The weights' unit: `nanoseconds` or `none`.
    pub(crate) unit: &'static str,
    /// The recording machine's host name, where the recording says.
    pub(crate) host: Option<&'a str>,
    /// The recorder's command line, where the recording says.
    pub(crate) cmdline: Option<&'a [String]>,
}

impl Ending<'_> {
    /// The export's title (a flame graph's, a speedscope file's name).
    pub(crate) fn title(&self) -> String {
        format!("perfz: {}", self.inputs[0].display())
    }
}

/// What exports a recording as a format (the export's own passes), for a
/// diff to export each of its two.
pub(crate) trait Exports {
    /// Exports `inputs` as `F` to `out`.
    fn export<F: Format>(
        &self,
        inputs: &[PathBuf],
        out: &mut dyn Write,
    ) -> Result<Exported, FormatError>;
}

/// Two recordings being diffed: the base and the new, each exported by
/// `exports`, and what each export did.
pub(crate) struct Diff<'a, E> {
    /// The base recording's inputs, then the new's.
    pub(crate) base: &'a [PathBuf],
    pub(crate) new: &'a [PathBuf],
    /// The export's options.
    pub(crate) o: &'a ExportOptions,
    /// `--normalize`: the base's counts scaled to the new's total.
    pub(crate) normalize: bool,
    /// What exports each.
    pub(crate) exports: E,
    /// What each export did.
    pub(crate) done: Diffed,
}

impl<E: Exports> Diff<'_, E> {
    /// The base and the new, each exported as `F`.
    pub(crate) fn each<F: Format>(&mut self) -> Result<(Vec<u8>, Vec<u8>), FormatError> {
        let (mut b, mut n) = (Vec::new(), Vec::new());
        self.done.base = self.exports.export::<F>(self.base, &mut b)?;
        self.done.new = self.exports.export::<F>(self.new, &mut n)?;
        Ok((b, n))
    }

    /// The diff's title (a differential flame graph's).
    pub(crate) fn title(&self) -> String {
        let (b, n) = (self.base[0].display(), self.new[0].display());
        format!("perfz diff: {b} → {n}")
    }

    /// The weights' unit: the two's, where they agree, else `none`.
    pub(crate) fn unit(&self) -> &'static str {
        match self.done.base.unit == self.done.new.unit {
            true => self.done.new.unit,
            false => "none",
        }
    }
}
