//! `perfz stat`: header facts, compression and record counts of a perf.data.

use std::path::PathBuf;

use anyhow::Context;

use crate::format::PerfReader;
use crate::stats;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The perf.data file (or perf's --threads directory; `-` for a pipe on stdin).
    #[arg(default_value = "perf.data")]
    input: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let name = args.input.display().to_string();
    let reader = PerfReader::open(&args.input).with_context(|| name.clone())?;
    let stats = stats::collect(reader).with_context(|| name.clone())?;
    if args.json {
        super::write_stdout(&(serde_json::to_string_pretty(&stats)? + "\n"))
    } else {
        super::write_stdout(&stats.render())
    }
}
