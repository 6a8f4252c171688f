//! `perfz export --diff BASE NEW`: two recordings' difference. Each is
//! exported as every export is (the same options), then:
//!
//! - folded: `stack count_base count_new` lines, as `inferno-diff-folded`
//!   and `difffolded.pl` write them (inferno's own code: `--normalize`
//!   scales the base's counts to the new's total as it does), sorted by
//!   stack (the tools' order is their hash table's);
//! - svg: the differential flame graph inferno draws from those lines
//!   (the new's widths; red grew, blue shrank);
//! - pprof: the new profile with the base's samples negated, as `go tool
//!   pprof -diff_base` merges them ([`crate::export::write::pprof_diff`]).

use std::io::Write;
use std::path::PathBuf;

use crate::export::write::gather::draw_svg;
use crate::export::write::pprof_diff;
use crate::export::{export, ExportFormat, ExportOptions, Exported};
use crate::format::FormatError;

/// What a diff read and wrote.
#[derive(Debug, Default)]
pub struct Diffed {
    /// The base's export.
    pub base: Exported,
    /// The new's export.
    pub new: Exported,
    /// Stacks written (lines, or pprof samples).
    pub stacks: usize,
}

/// Writes to `out` as `format` how the recording `new` differs from the
/// recording `base` (each a list of inputs read as one).
pub fn diff(
    base: &[PathBuf],
    new: &[PathBuf],
    format: ExportFormat,
    o: &ExportOptions,
    normalize: bool,
    out: &mut dyn std::io::Write,
) -> Result<Diffed, FormatError> {
    let each =
        match format {
            ExportFormat::Folded | ExportFormat::Svg => ExportFormat::Folded,
            ExportFormat::Pprof => ExportFormat::Pprof,
            ExportFormat::Speedscope => return Err(FormatError::Unsupported(
                "--diff writes folded lines, svg or pprof, not speedscope (speedscope compares \
                 two files side by side: export each)"
                    .into(),
            )),
            ExportFormat::Otlp | ExportFormat::OtlpJson => {
                return Err(FormatError::Unsupported(
                    "--diff writes folded lines, svg or pprof, not OTLP (a backend compares \
                     two profiles itself: send each)"
                        .into(),
                ))
            }
        };
    let mut d = Diffed::default();
    let (mut b, mut n) = (Vec::new(), Vec::new());
    d.base = export(base, each, o, &mut b)?;
    d.new = export(new, each, o, &mut n)?;
    d.stacks = match format {
        ExportFormat::Pprof => {
            let p = pprof_diff::merge(pprof_diff::decode(&n)?, pprof_diff::decode(&b)?, normalize)?;
            crate::export::write::pprof::write(&p, out)?;
            p.sample.len()
        }
        _ => {
            let lines = diff_folded(&b, &n, normalize)?;
            if format == ExportFormat::Svg {
                let title = format!("perfz diff: {} → {}", base[0].display(), new[0].display());
                let unit = if d.base.unit == d.new.unit {
                    d.new.unit
                } else {
                    "none"
                };
                let heading = crate::export::write::speedscope::Heading { name: &title, unit };
                draw_svg(&lines, &heading, &o.flame, out)?;
            } else {
                let mut w = std::io::BufWriter::new(out);
                lines.iter().try_for_each(|l| writeln!(w, "{l}"))?;
                w.flush()?;
            }
            lines.len()
        }
    };
    Ok(d)
}

/// The two-count lines of folded `base` and `new`, as
/// `inferno-diff-folded [--normalize] BASE NEW` writes them, sorted by
/// stack.
pub(crate) fn diff_folded(
    base: &[u8],
    new: &[u8],
    normalize: bool,
) -> std::io::Result<Vec<String>> {
    let opt = inferno::differential::Options {
        normalize,
        strip_hex: false,
    };
    let mut text = Vec::new();
    inferno::differential::from_readers(opt, base, new, &mut text)?;
    let mut lines: Vec<String> = String::from_utf8_lossy(&text)
        .lines()
        .map(String::from)
        .collect();
    let stack = |l: &String| l.rsplitn(3, ' ').nth(2).unwrap_or_default().to_string();
    lines.sort_by_cached_key(stack);
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_of_either_get_both_counts_the_base_scaled_with_normalize() {
        let base = b"a;b 3\na;c 1\n";
        let new = b"a;b 2\na;d 6\n";
        let d = diff_folded(base, new, false).unwrap();
        assert_eq!(d, ["a;b 3 2", "a;c 1 0", "a;d 0 6"]);
        // Base total 4, new 8: each base count doubled (truncated).
        let d = diff_folded(base, new, true).unwrap();
        assert_eq!(d, ["a;b 6 2", "a;c 2 0", "a;d 0 6"]);
    }
}
