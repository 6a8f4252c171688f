//! `perfz export`: a recording's stacks for flame graphs (folded lines or
//! the flame graph itself) and for the fleet's profilers (pprof).

use std::io::{BufWriter, IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Context;

use crate::export::write::otlp::Otlp;
use crate::export::write::svg::Svg;
use crate::export::{ExportFormat, ExportOptions, FoldOptions, Time, FORMATS};

/// `--format`'s values: every format export writes, as its list says.
impl clap::ValueEnum for ExportFormat {
    fn value_variants<'a>() -> &'a [ExportFormat] {
        FORMATS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()).help(self.help()))
    }
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Recordings (files, pipes' files, `--threads` directories), read in
    /// order as one: give a set of `--switch-output` outputs to merge them.
    #[arg(default_value = "perf.data")]
    inputs: Vec<PathBuf>,
    /// What to write (default: folded).
    #[arg(long, value_enum)]
    format: Option<ExportFormat>,
    /// Only the samples of this event (its name as perf prints it, e.g.
    /// cpu-clock); a pprof profile holds one.
    #[arg(short, long, value_name = "EVENT")]
    event: Vec<String>,
    /// A recording with off-CPU samples (record --off-cpu): only the on-CPU
    /// event (by default both, in wall-clock nanoseconds).
    #[arg(long, conflicts_with = "off_cpu_only")]
    on_cpu_only: bool,
    /// A recording with off-CPU samples: only the offcpu-time samples
    /// (where threads waited, by stack, in nanoseconds).
    #[arg(long)]
    off_cpu_only: bool,
    /// Where to write (default: standard output).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Inline frames where DWARF says so (addr2line), as perf script shows
    /// them: each inlined function a frame above the one it is in.
    #[arg(long)]
    inline: bool,
    /// Folded: the process id after its name (`comm-pid`), as stackcollapse-perf --pid.
    #[arg(long)]
    pid: bool,
    /// Folded: process and thread ids (`comm-pid/tid`), as stackcollapse-perf --tid.
    #[arg(long)]
    tid: bool,
    /// Folded: kernel functions end in `_[k]`, as stackcollapse-perf --kernel.
    #[arg(long)]
    kernel: bool,
    /// Look for the recorded files under DIR, as perf's --symfs: DIR +
    /// each recorded path (`DIR,flat`: DIR + its base name), the build-id
    /// cache DIR/.debug, the debug files under DIR/usr/lib/debug.
    #[arg(long, value_name = "DIR[,flat]")]
    symfs: Option<String>,
    /// The kernel's symbols from FILE instead of /proc/kallsyms, as perf's
    /// --kallsyms: with a copy of the recording machine's, its kernel
    /// frames are named whatever kernel runs here.
    #[arg(long, value_name = "FILE")]
    kallsyms: Option<PathBuf>,
    /// Fetch the symbols of stripped files (and files missing here) by
    /// build id from debuginfod servers: URLS (space-separated), or
    /// without it $DEBUGINFOD_URLS, which is used by default too.
    #[arg(long, value_name = "URLS", num_args = 0..=1, require_equals = true,
          default_missing_value = "system", conflicts_with = "no_debuginfod")]
    debuginfod: Option<String>,
    /// Ask no debuginfod server, whatever $DEBUGINFOD_URLS says.
    #[arg(long)]
    no_debuginfod: bool,
    /// Folded, svg and speedscope: each sample counts 1 (by default it
    /// weighs its period, as `perf script | inferno-collapse-perf` weighs it).
    #[arg(long)]
    sample_counts: bool,
    /// A latency profile, as `perf report --latency`: each sample weighs its
    /// period divided by how many of the program's threads were running
    /// then, so the profile shows where wall-clock time went (record with
    /// `perfz record --latency`).
    #[arg(long)]
    latency: bool,
    /// Two recordings, BASE NEW: how NEW differs. Folded: `stack base new`
    /// lines (inferno-diff-folded's); svg: the differential flame graph
    /// (red grew, blue shrank); pprof: NEW with BASE's samples negated
    /// (as go tool pprof -diff_base).
    #[arg(long)]
    diff: bool,
    /// With --diff: the base's counts scaled to the new's total (as
    /// inferno-diff-folded --normalize).
    #[arg(long, requires = "diff")]
    normalize: bool,
    /// Svg: the flame graph's title (default: perfz: FILE), as
    /// inferno-flamegraph's --title.
    #[arg(long, value_name = "TEXT")]
    title: Option<String>,
    /// Svg: an icicle graph, the roots at the top (inferno-flamegraph's
    /// --inverted).
    #[arg(long)]
    inverted: bool,
    /// Svg: the image's width in pixels (inferno-flamegraph's --width;
    /// default 1200).
    #[arg(long, value_name = "PIXELS", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    width: Option<u32>,
    /// Svg: what the weights count, in the tooltips (inferno-flamegraph's
    /// --countname; default: samples, or ns where the weights are the
    /// clocks' nanoseconds).
    #[arg(long, alias = "countname", value_name = "NAME")]
    count_name: Option<String>,
    #[command(flatten)]
    otlp: super::export_otlp::OtlpArgs,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let o = options(&a)?;
    refuse(&a, &o)?;
    let format = a.format.unwrap_or(FORMATS[0]);
    // `-o -` is standard output, as for every command.
    let output = a.output.as_ref().filter(|p| p.as_os_str() != "-");
    let send_to = a.otlp.endpoint()?;
    let (inputs, _spools) = super::export_spool::spooled(&a.inputs)?;
    if let Some(to) = send_to {
        return super::export_otlp::send(&to, &inputs, &o);
    }
    let mut out = ExportOutput::open(output.map(|p| p.as_path()))?;
    if a.diff {
        return diff(&a, &inputs, format, &o, out);
    }
    let done = crate::export::export(&inputs, format, &o, out.writer())
        .with_context(|| format!("reading {}", a.inputs[0].display()))?;
    out.finish()?;
    say!("{}", super::export_said::said(&done));
    Ok(())
}

/// What is refused before anything is read (a stream spooled) or written:
/// contradicting options, a diff of other than two recordings, a pprof
/// profile to a terminal, an output over an input.
fn refuse(a: &Args, o: &ExportOptions) -> anyhow::Result<()> {
    if let Some(why) = crate::export::recording::events::contradiction(o.event.as_deref(), o.time) {
        anyhow::bail!(why);
    }
    if a.diff && a.inputs.len() != 2 {
        anyhow::bail!(
            "--diff takes two recordings, BASE NEW ({} given): perfz export --diff base.data new.data",
            a.inputs.len()
        );
    }
    let sends = a.otlp.otlp || a.otlp.otlp_endpoint.is_some();
    let other = a.format.is_some_and(|f| !f.is::<Otlp>());
    if sends && (a.diff || a.output.is_some() || other) {
        anyhow::bail!("--otlp-endpoint sends the profiles: leave out -o, --diff and --format other than otlp (export once more to keep a file)");
    }
    let to_stdout = a.output.as_ref().is_none_or(|p| p.as_os_str() == "-");
    if let Some(why) = a.format.and_then(ExportFormat::binary) {
        if to_stdout && std::io::stdout().is_terminal() {
            anyhow::bail!(why);
        }
    }
    let output = a.output.as_ref().filter(|p| p.as_os_str() != "-");
    if let Some(p) = output {
        if let Some(input) = a
            .inputs
            .iter()
            .find(|i| crate::convert::would_clobber(i, p))
        {
            anyhow::bail!(
                "the output {} would overwrite the input {} (or a file in it); choose another -o",
                p.display(),
                input.display()
            );
        }
    }
    Ok(())
}

/// `--diff`: how the second of `inputs` (spooled from `a`'s) differs from
/// the first, written to `out`.
fn diff(
    a: &Args,
    inputs: &[PathBuf],
    format: ExportFormat,
    o: &ExportOptions,
    mut out: ExportOutput,
) -> anyhow::Result<()> {
    let (base, new) = (&a.inputs[0], &a.inputs[1]);
    let d = crate::export::diff(
        &inputs[..1],
        &inputs[1..],
        format,
        o,
        a.normalize,
        out.writer(),
    )
    .with_context(|| format!("diffing {} and {}", base.display(), new.display()))?;
    out.finish()?;
    for (what, done) in [("base", &d.base), ("new", &d.new)] {
        say!("{} ({what})", super::export_said::said(done));
    }
    say!("perfz export --diff: {} stacks", d.stacks);
    Ok(())
}

/// The export's options from the command line's.
fn options(a: &Args) -> anyhow::Result<ExportOptions> {
    let drawn = a.title.is_some() || a.inverted || a.width.is_some() || a.count_name.is_some();
    if drawn && !a.format.is_some_and(|f| f.is::<Svg>()) {
        anyhow::bail!(
            "--title, --inverted, --width and --count-name draw a flame graph: add --format svg"
        );
    }
    Ok(ExportOptions {
        fold: FoldOptions {
            pid: a.pid,
            tid: a.tid,
            annotate_kernel: a.kernel,
            modules: false,
            sample_counts: a.sample_counts,
        },
        event: one_event(&a.event)?,
        time: match (a.on_cpu_only, a.off_cpu_only) {
            (true, _) => Time::OnCpu,
            (_, true) => Time::OffCpu,
            _ => Time::Wall,
        },
        inline: a.inline,
        symfs: a.symfs.as_deref().map(crate::export::Symfs::parse),
        kallsyms: a.kallsyms.clone(),
        debuginfod: debuginfod_urls(a.debuginfod.as_deref(), a.no_debuginfod),
        flame: crate::export::FlameOptions {
            title: a.title.clone(),
            inverted: a.inverted,
            width: a.width.map(|w| w as usize),
            count_name: a.count_name.clone(),
        },
        latency: a.latency,
        otlp: a.otlp.options(super::record_args::command_name),
    })
}

/// Where the export is written as it is made (nothing holds it whole: a
/// speedscope file grows with the samples).
enum ExportOutput {
    /// A file, under a temporary name beside it until renamed when whole:
    /// a failure never leaves half a profile under the name asked for.
    File(BufWriter<tempfile::NamedTempFile>, std::path::PathBuf),
    /// A device or FIFO (/dev/null, a pipe), written as it is: renaming a
    /// file over it would replace it.
    Device(BufWriter<std::fs::File>, std::path::PathBuf),
    /// Standard output.
    Stdout(BufWriter<std::io::Stdout>),
}

impl ExportOutput {
    /// The output for `-o` (None: standard output).
    fn open(output: Option<&std::path::Path>) -> anyhow::Result<ExportOutput> {
        Ok(match output {
            Some(p) if std::fs::metadata(p).is_ok_and(|m| !m.is_file() && !m.is_dir()) => {
                let f = std::fs::OpenOptions::new().write(true).open(p);
                let f = f.with_context(|| format!("writing {}", p.display()))?;
                ExportOutput::Device(BufWriter::with_capacity(1 << 16, f), p.to_path_buf())
            }
            Some(p) => {
                let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
                let tmp = tempfile::Builder::new()
                    .prefix(".perfz-export-")
                    .tempfile_in(dir.unwrap_or(std::path::Path::new(".")))
                    .with_context(|| format!("a temporary file beside {}", p.display()))?;
                ExportOutput::File(BufWriter::with_capacity(1 << 16, tmp), p.to_path_buf())
            }
            None => ExportOutput::Stdout(BufWriter::with_capacity(1 << 16, std::io::stdout())),
        })
    }

    fn writer(&mut self) -> &mut dyn Write {
        match self {
            ExportOutput::File(f, _) => f,
            ExportOutput::Device(f, _) => f,
            ExportOutput::Stdout(w) => w,
        }
    }

    /// The output made whole: the file renamed to its name, standard
    /// output flushed.
    fn finish(self) -> anyhow::Result<()> {
        match self {
            ExportOutput::File(w, p) => {
                let tmp = w.into_inner().map_err(|e| e.into_error());
                let tmp = tmp.with_context(|| format!("writing {}", p.display()))?;
                tmp.persist(&p)
                    .with_context(|| format!("writing {}", p.display()))?;
            }
            ExportOutput::Device(mut f, p) => f
                .flush()
                .with_context(|| format!("writing {}", p.display()))?,
            ExportOutput::Stdout(mut w) => w.flush().context("writing standard output")?,
        }
        Ok(())
    }
}

/// The debuginfod servers to ask: `--debuginfod=URLS`, else (`--debuginfod`
/// alone, `system` as perf's, or nothing) $DEBUGINFOD_URLS; none with
/// `--no-debuginfod`.
fn debuginfod_urls(option: Option<&str>, off: bool) -> Option<String> {
    match option {
        _ if off => None,
        Some(urls) if urls != "system" => Some(urls.to_string()),
        _ => std::env::var("DEBUGINFOD_URLS").ok(),
    }
}

/// At most one -e: a second would otherwise silently replace the first.
fn one_event(events: &[String]) -> anyhow::Result<Option<String>> {
    match events {
        [] => Ok(None),
        [one] => Ok(Some(one.clone())),
        more => anyhow::bail!(
            "-e given {} times ({}): export takes one event; run it once per event",
            more.len(),
            more.join(", ")
        ),
    }
}
