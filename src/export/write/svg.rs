//! `--format svg`: the folded lines drawn as a flame graph by inferno (as
//! flamegraph.pl draws them); with `--diff`, the differential one.

use std::io::Write;

use crate::export::name::frames::Named;
use crate::export::write::diff::diff_folded;
use crate::export::write::fold::FoldOptions;
use crate::export::write::folded::Folded;
use crate::export::write::format::{Diff, Ending, Exports, Format};
use crate::export::write::sampled::Sampled;
use crate::export::ExportOptions;
use crate::format::FormatError;

/// A flame graph being gathered: its folded lines, and how it is drawn.
pub(crate) struct Svg {
    folded: Folded,
    flame: FlameOptions,
}

impl Format for Svg {
    const NAME: &'static str = "svg";
    const HELP: &'static str =
        "A flame graph (SVG, drawn by the inferno crate as flamegraph.pl does)";

    fn new(o: &ExportOptions) -> Svg {
        let folded = Folded::default();
        let flame = o.flame.clone();
        Svg { folded, flame }
    }

    fn add_sample(&mut self, fold: &FoldOptions, _: &[Named<'_>], s: &Sampled<'_>) {
        self.folded.add(fold, s);
    }

    fn write_to(self, end: &Ending<'_>, out: &mut dyn Write) -> Result<usize, FormatError> {
        let lines = self.folded.lines(&end.o.fold, end.named);
        draw_svg(&lines, &end.title(), end.unit, &self.flame, out)?;
        Ok(lines.len())
    }

    /// The differential flame graph inferno draws from the two-count
    /// folded lines (the new's widths; red grew, blue shrank).
    fn diff(d: &mut Diff<'_, impl Exports>, out: &mut dyn Write) -> Result<usize, FormatError> {
        let (b, n) = d.each::<Folded>()?;
        let lines = diff_folded(&b, &n, d.normalize)?;
        draw_svg(&lines, &d.title(), d.unit(), &d.o.flame, out)?;
        Ok(lines.len())
    }
}

/// How a flame graph is drawn: inferno-flamegraph's options of the same
/// names, passed to inferno.
#[derive(Debug, Clone, Default)]
pub struct FlameOptions {
    /// `--title` (default: `perfz: FILE`).
    pub title: Option<String>,
    /// `--inverted`: an icicle graph, the roots at the top.
    pub inverted: bool,
    /// `--width` in pixels (inferno's default: 1200).
    pub width: Option<usize>,
    /// `--count-name`: what the weights count (default: `samples`, or
    /// `ns` where they are nanoseconds).
    pub count_name: Option<String>,
}

/// The flame graph of folded `lines` (differential where they hold two
/// counts: red grew, blue shrank), drawn by inferno: titled `title` and
/// counted in `unit` unless `flame` says otherwise.
fn draw_svg(
    lines: &[String],
    title: &str,
    unit: &str,
    flame: &FlameOptions,
    out: &mut dyn Write,
) -> Result<(), FormatError> {
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = flame.title.clone().unwrap_or_else(|| title.to_string());
    opts.count_name = flame.count_name.clone().unwrap_or_else(|| {
        match unit {
            "nanoseconds" => "ns",
            _ => "samples",
        }
        .into()
    });
    if flame.inverted {
        opts.direction = inferno::flamegraph::Direction::Inverted;
    }
    opts.image_width = flame.width;
    inferno::flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), out).map_err(|e| {
        match e.downcast::<std::io::Error>() {
            Ok(io) => FormatError::Io(io),
            Err(other) => FormatError::Unsupported(format!("drawing the flame graph: {other}")),
        }
    })
}
