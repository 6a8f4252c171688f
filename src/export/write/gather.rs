//! What an export gathers its samples into, by the format it writes: the
//! folded lines (and their flame graph), a pprof profile, or a speedscope
//! file; and the writing of each.

use crate::export::name::frames::Named;
use crate::export::write::folded::{FoldOptions, Folded};
use crate::export::write::otlp::Otlp;
use crate::export::write::pprof::{About, ProfileBuilder};
use crate::export::write::sampled::Sampled;
use crate::export::write::speedscope::{Heading, Speedscope};
use crate::export::ExportFormat;
use crate::format::FormatError;

/// The samples gathered so far, for one format.
pub(crate) enum Gather {
    /// Folded lines (`svg`: drawn as a flame graph).
    Folded {
        /// The lines' counts.
        folded: Folded,
        /// Drawn as a flame graph, so.
        svg: Option<FlameOptions>,
    },
    /// A pprof profile.
    Pprof(Box<ProfileBuilder>),
    /// A speedscope file.
    Speedscope(Speedscope),
    /// OpenTelemetry profiles (written by the second pass, which knows
    /// what their resource says: [`crate::export::write::otlp`]).
    Otlp(Box<Otlp>),
}

impl Gather {
    /// An empty sink for `format` (a flame graph drawn as `flame` says).
    pub(crate) fn new(format: ExportFormat, flame: &FlameOptions) -> Gather {
        match format {
            ExportFormat::Folded | ExportFormat::Svg => Gather::Folded {
                folded: Folded::default(),
                svg: (format == ExportFormat::Svg).then(|| flame.clone()),
            },
            ExportFormat::Pprof => Gather::Pprof(Box::new(ProfileBuilder::new())),
            ExportFormat::Speedscope => Gather::Speedscope(Speedscope::default()),
            ExportFormat::Otlp | ExportFormat::OtlpJson => Gather::Otlp(Box::default()),
        }
    }

    /// Whether each sample's frames must be named before it is added
    /// (the others name them once, at the end).
    pub(crate) fn names_as_it_goes(&self) -> bool {
        matches!(self, Gather::Pprof(_))
    }

    /// Adds sample `s`, whose stack's frame ids are of `named`.
    pub(crate) fn add(&mut self, fold: &FoldOptions, named: &[Named<'_>], s: &Sampled<'_>) {
        match self {
            Gather::Folded { folded, .. } => folded.add(fold, s),
            Gather::Pprof(p) => p.add(named, s),
            Gather::Speedscope(sp) => sp.add(fold, s),
            Gather::Otlp(o) => o.add(fold, s),
        }
    }

    /// Whether a sample's process name is asked for (else its thread's
    /// stands in).
    pub(crate) fn wants_process(&self) -> bool {
        matches!(self, Gather::Otlp(_))
    }

    /// The OTLP profiles' samples, taken, where this gathers them.
    pub(crate) fn take_otlp(&mut self) -> Option<Otlp> {
        match self {
            Gather::Otlp(o) => Some(std::mem::take(o)),
            _ => None,
        }
    }

    /// The folded stacks gathered, where this gathers them.
    pub(crate) fn folded(&self) -> Option<&Folded> {
        match self {
            Gather::Folded { folded, .. } => Some(folded),
            _ => None,
        }
    }

    /// Writes what was gathered, the frames named `named`: the folded
    /// lines, their flame graph or the speedscope file (headed `heading`),
    /// or the profile with what it says of itself (`about`). Returns how
    /// many stacks it holds.
    pub(crate) fn write(
        self,
        named: &[Named<'_>],
        fold: &FoldOptions,
        heading: &Heading<'_>,
        about: impl FnOnce() -> About,
        out: &mut dyn std::io::Write,
    ) -> Result<usize, FormatError> {
        Ok(match self {
            Gather::Folded { folded, svg: None } => folded.write(fold, named, out)?,
            Gather::Folded {
                folded,
                svg: Some(flame),
            } => {
                let lines = folded.lines(fold, named);
                draw_svg(&lines, heading, &flame, out)?;
                lines.len()
            }
            Gather::Pprof(profile) => {
                let p = profile.finish(about());
                crate::export::write::pprof::write(&p, out)?;
                p.sample.len()
            }
            Gather::Speedscope(s) => s.write(fold, named, heading, out)?,
            Gather::Otlp(_) => {
                return Err(FormatError::Unsupported(
                    "OTLP profiles are written by the export's second pass".into(),
                ))
            }
        })
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
/// counts: red grew, blue shrank), drawn by inferno: titled and counted
/// as `heading` says unless `flame` says otherwise.
pub(crate) fn draw_svg(
    lines: &[String],
    heading: &Heading<'_>,
    flame: &FlameOptions,
    out: &mut dyn std::io::Write,
) -> Result<(), FormatError> {
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = flame
        .title
        .clone()
        .unwrap_or_else(|| heading.name.to_string());
    opts.count_name = flame.count_name.clone().unwrap_or_else(|| {
        match heading.unit {
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
