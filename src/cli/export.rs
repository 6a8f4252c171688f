//! `perfz export`: a recording's stacks for flame graphs: folded lines or
//! the flame graph itself.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;

use crate::export::FoldOptions;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// stackcollapse-perf's `comm;root;...;leaf count` lines (flamegraph.pl,
    /// inferno-flamegraph, speedscope read them).
    Folded,
    /// A flame graph (SVG, drawn by the inferno crate as flamegraph.pl does).
    Svg,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Recordings (files, pipes' files, `--threads` directories), read in
    /// order as one: give a set of `--switch-output` outputs to merge them.
    #[arg(default_value = "perf.data")]
    inputs: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "folded")]
    format: Format,
    /// Where to write (default: standard output).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Folded: the process id after its name (`comm-pid`), as stackcollapse-perf --pid.
    #[arg(long)]
    pid: bool,
    /// Folded: process and thread ids (`comm-pid/tid`), as stackcollapse-perf --tid.
    #[arg(long)]
    tid: bool,
    /// Folded: kernel functions end in `_[k]`, as stackcollapse-perf --kernel.
    #[arg(long)]
    kernel: bool,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let o = FoldOptions {
        pid: a.pid,
        tid: a.tid,
        annotate_kernel: a.kernel,
    };
    let format = match a.format {
        Format::Folded => crate::export::Output::Folded,
        Format::Svg => crate::export::Output::Svg,
    };
    let mut buf = Vec::new();
    let done = crate::export::export(&a.inputs, format, &o, &mut buf)
        .with_context(|| format!("reading {}", a.inputs[0].display()))?;
    match &a.output {
        Some(p) => {
            // Written whole under a temporary name, then renamed: a failure
            // never leaves half a profile under the name asked for.
            let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
            let mut tmp = tempfile::Builder::new()
                .prefix(".perfz-export-")
                .tempfile_in(dir.unwrap_or(std::path::Path::new(".")))?;
            tmp.write_all(&buf)?;
            tmp.persist(p)
                .with_context(|| format!("writing {}", p.display()))?;
        }
        None => std::io::stdout().lock().write_all(&buf)?,
    }
    eprintln!(
        "perfz export: {} samples, {} distinct stacks; {} of {} frames without a name{}",
        done.samples,
        done.stacks,
        done.unknown_frames,
        done.frames,
        if done.kernel_symbols {
            ""
        } else {
            " (the recording is from another kernel: its frames keep their addresses' module)"
        }
    );
    Ok(())
}
