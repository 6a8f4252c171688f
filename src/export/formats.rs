//! The formats `perfz export` writes, one line each ([`FORMATS`]): the
//! command line's `--format` names, its help and the export's dispatch
//! are all read from this list. Each format is a file under `write/` that
//! implements [`Format`]; an [`ExportFormat`] runs the export's passes
//! generic over it, so each sample goes straight to the format's own code.

use std::io::Write;
use std::path::PathBuf;

use super::passes;
use super::write;
use super::write::diff::Diffed;
use super::write::format::{Diff, Exports, Format};
use super::{ExportOptions, Exported};
use crate::format::FormatError;

/// Every format `perfz export` writes, in `--help`'s order, the default
/// (folded) first: a line each.
pub const FORMATS: &[ExportFormat] = &[
    ExportFormat::of::<write::folded::Folded>(),
    ExportFormat::of::<write::svg::Svg>(),
    ExportFormat::of::<write::pprof::ProfileBuilder>(),
    ExportFormat::of::<write::speedscope::Speedscope>(),
    ExportFormat::of::<write::otlp::Otlp>(),
    ExportFormat::of::<write::otlp::format::OtlpJson>(),
];

/// What `perfz export` writes: one of [`FORMATS`].
#[derive(Clone, Copy)]
pub struct ExportFormat(&'static Listed);

/// A format as listed: what it says of itself, and how it is run.
struct Listed {
    name: &'static str,
    help: &'static str,
    binary: Option<&'static str>,
    export: fn(&[PathBuf], &ExportOptions, &mut dyn Write) -> Result<Exported, FormatError>,
    diff: DiffFn,
}

/// How a format writes two recordings' difference (base, new).
type DiffFn =
    fn(&[PathBuf], &[PathBuf], &ExportOptions, bool, &mut dyn Write) -> Result<Diffed, FormatError>;

/// The format `F` as listed.
struct Of<F>(std::marker::PhantomData<F>);

impl<F: Format> Of<F> {
    const LISTED: Listed = Listed {
        name: F::NAME,
        help: F::HELP,
        binary: F::BINARY,
        export: export_as::<F>,
        diff: diff_as::<F>,
    };
}

impl ExportFormat {
    /// The format `F` writes.
    const fn of<F: Format>() -> ExportFormat {
        ExportFormat(&Of::<F>::LISTED)
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// What it is, one line of `--help`.
    pub fn help(self) -> &'static str {
        self.0.help
    }

    /// Where it is binary: the advice given instead of writing it to a
    /// terminal.
    pub fn binary(self) -> Option<&'static str> {
        self.0.binary
    }

    /// The format named `name`, if any (the CLI parses through clap's
    /// list; the tests look names up here).
    #[cfg(test)]
    pub fn named(name: &str) -> Option<ExportFormat> {
        FORMATS.iter().copied().find(|f| f.0.name == name)
    }

    /// Whether this is the format `F` writes.
    pub(crate) fn is<F: Format>(self) -> bool {
        self.0.name == F::NAME
    }

    /// Exports every sample of `inputs` to `out` in this format.
    pub(crate) fn export(
        self,
        inputs: &[PathBuf],
        o: &ExportOptions,
        out: &mut dyn Write,
    ) -> Result<Exported, FormatError> {
        (self.0.export)(inputs, o, out)
    }

    /// Writes to `out` in this format how the recording `new` differs
    /// from `base`.
    pub(crate) fn diff(
        self,
        base: &[PathBuf],
        new: &[PathBuf],
        o: &ExportOptions,
        normalize: bool,
        out: &mut dyn Write,
    ) -> Result<Diffed, FormatError> {
        (self.0.diff)(base, new, o, normalize, out)
    }
}

impl PartialEq for ExportFormat {
    fn eq(&self, other: &ExportFormat) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for ExportFormat {}

impl std::fmt::Debug for ExportFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name)
    }
}

/// Exports every sample of `inputs` to `out` as `F`.
fn export_as<F: Format>(
    inputs: &[PathBuf],
    o: &ExportOptions,
    out: &mut dyn Write,
) -> Result<Exported, FormatError> {
    passes::over::<F, _>(inputs, o, |pass, gather| pass.finish(gather, inputs, out))
}

/// How `new` differs from `base`, written to `out` as `F` writes it.
fn diff_as<F: Format>(
    base: &[PathBuf],
    new: &[PathBuf],
    o: &ExportOptions,
    normalize: bool,
    out: &mut dyn Write,
) -> Result<Diffed, FormatError> {
    let exports = Exporter { o };
    let done = Diffed::default();
    let mut d = Diff {
        base,
        new,
        o,
        normalize,
        exports,
        done,
    };
    let stacks = F::diff(&mut d, out)?;
    Ok(Diffed { stacks, ..d.done })
}

/// What exports each of a diff's recordings: the export's own passes, as
/// `o` says.
struct Exporter<'o> {
    o: &'o ExportOptions,
}

impl Exports for Exporter<'_> {
    fn export<F: Format>(
        &self,
        inputs: &[PathBuf],
        out: &mut dyn Write,
    ) -> Result<Exported, FormatError> {
        export_as::<F>(inputs, self.o, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_is_found_by_its_own_name_and_names_differ() {
        for f in FORMATS {
            assert_eq!(ExportFormat::named(f.name()), Some(*f));
            assert!(!f.help().is_empty(), "{f:?} has no help");
        }
        let mut names: Vec<_> = FORMATS.iter().map(|f| f.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FORMATS.len(), "two formats share a name");
        assert_eq!(ExportFormat::named("nope"), None);
    }
}
