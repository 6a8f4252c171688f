//! `perfz eval`: compare codecs on a recording.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;

use crate::eval::{self, Options};
use crate::event::ring::{default_pages, page_size};
use crate::quantity::parse_size;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum EvalFormat {
    Table,
    Csv,
    Json,
    Markdown,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The perf.data to evaluate (any codec; file, pipe or --threads directory).
    #[arg(required_unless_present = "record")]
    input: Option<PathBuf>,
    /// Record COMMAND first (codec none, into a temporary file), then evaluate.
    #[arg(long, requires = "command")]
    record: bool,
    /// With --record: call chains by frame pointer.
    #[arg(short = 'g')]
    g: bool,
    /// With --record: fp, or dwarf[,SIZE].
    #[arg(long = "call-graph", value_name = "MODE")]
    call_graph: Option<String>,
    /// Codec specs to compare, comma separated (options like wlog=23 join the spec before them).
    #[arg(long, default_value = eval::DEFAULT_SPECS)]
    codecs: String,
    /// Bytes per push (one ring drain); default: the recorder's default ring size.
    #[arg(long = "push-size", value_name = "SIZE")]
    push_size: Option<String>,
    /// perf's --mmap-flush: no push is smaller than this.
    #[arg(long = "mmap-flush", value_name = "SIZE", default_value = "1")]
    mmap_flush: String,
    /// Keep timing each codec for at least this many seconds (3 runs at least).
    #[arg(long = "min-time", value_name = "SECONDS", default_value = "1.0")]
    min_time: f64,
    #[arg(long, value_enum, default_value = "table")]
    format: EvalFormat,
    /// Also draw ratio against compress speed, with the Pareto front, as SVG.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// With --record: the command to record (after --).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<std::ffi::OsString>,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let specs = eval::parse_spec_list(&a.codecs)?;
    anyhow::ensure!(!specs.is_empty(), "--codecs names no codec");
    let push_size = match &a.push_size {
        Some(s) => parse_size(s)? as usize,
        None => default_pages() * page_size(),
    };
    let mmap_flush = parse_size(&a.mmap_flush)? as usize;
    anyhow::ensure!(
        a.min_time >= 0.0 && a.min_time < 3600.0,
        "--min-time takes seconds (0..3600)"
    );
    // A private directory (mode 0700, unpredictable name) holds the
    // recording; it is removed however eval ends.
    let tmp;
    let input = match (&a.input, a.record) {
        (_, true) => {
            tmp = tempfile::Builder::new()
                .prefix("perfz-eval-")
                .tempdir()
                .context("creating a temporary directory for the recording")?;
            let file = tmp.path().join("perf.data");
            record_first(&a, &file)?;
            file
        }
        (Some(p), false) => p.clone(),
        (None, false) => anyhow::bail!("name a perf.data to evaluate, or use --record -- COMMAND"),
    };
    let name = input.display().to_string();
    let eval::Loaded {
        stream,
        rate,
        stack_cut,
        stack_note,
        attrs,
    } = eval::load(&input).with_context(|| name.clone())?;
    if let Some(n) = stack_note {
        say!("perfz eval: {n}");
    }
    let o = Options {
        specs,
        push_size,
        mmap_flush,
        min_time: Duration::from_secs_f64(a.min_time),
        stack_cut,
        attrs,
    };
    let e = evaluate_with_bar(&name, &stream, rate, &o)?;
    if let Some(p) = &a.plot {
        std::fs::write(p, eval::render_svg(&e))
            .with_context(|| format!("writing {}", p.display()))?;
    }
    super::write_stdout(&rendered(&e, a.format)?)?;
    Ok(())
}

/// Evaluates every codec of `o` on `stream` (of the recording `name`,
/// traced at `rate` MB/s), with a progress bar cleared at the end.
fn evaluate_with_bar(
    name: &str,
    stream: &[u8],
    rate: Option<f64>,
    o: &Options,
) -> Result<eval::Evaluation, eval::EvalError> {
    // indicatif draws only on a terminal (hidden otherwise).
    let bar = indicatif::ProgressBar::new(o.specs.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("[{bar:30}] {pos}/{len} {msg}")
            .expect("a valid template")
            .progress_chars("#>-"),
    );
    let e = eval::evaluate(name, stream, rate, o, |done, _total, spec| {
        bar.set_position(done as u64);
        bar.set_message(spec.to_string());
    });
    bar.finish_and_clear();
    e
}

/// The evaluation `e` in `format`.
fn rendered(e: &eval::Evaluation, format: EvalFormat) -> anyhow::Result<String> {
    Ok(match format {
        EvalFormat::Table => eval::render_table(e),
        EvalFormat::Csv => eval::render_csv(e),
        EvalFormat::Markdown => eval::render_markdown(e),
        EvalFormat::Json => serde_json::to_string_pretty(e)? + "\n",
    })
}

fn record_first(a: &Args, out: &std::path::Path) -> anyhow::Result<()> {
    use crate::event::events::{CallGraph, EventSpec, Sampling};
    use crate::session::{record, RecordOptions, DEFAULT_FREQUENCY};
    let call_graph = match (&a.call_graph, a.g) {
        (Some(m), _) => CallGraph::parse(m)?,
        (None, true) => CallGraph::FramePointer,
        (None, false) => CallGraph::None,
    };
    let opts = RecordOptions {
        events: vec![EventSpec::parse("cpu-clock").expect("known")],
        sampling: Sampling::Frequency(DEFAULT_FREQUENCY),
        sampling_explicit: true,
        call_graph,
        target: crate::event::Target::Workload(a.command.clone()),
        path: out.to_path_buf(),
        // eval compresses the ring bytes itself: record them as they are.
        codec: perfz_codecs::CodecSpec::None,
        argv: std::env::args_os().collect(),
        build_ids: crate::session::BuildIdOptions {
            table: false,
            all: false,
            cache: false,
            in_mmaps: false,
        },
        ..RecordOptions::default()
    };
    let s = record::run(&opts)?;
    say!(
        "perfz eval: recorded {} samples ({} bytes of ring data)",
        s.samples,
        s.ring_bytes
    );
    Ok(())
}
