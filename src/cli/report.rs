//! `perfz report`: what a recording spent its samples on. `perf report`
//! where perf is installed and reads the file; otherwise perfz's own table.

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

use anyhow::Context;

use crate::export::{ExportFormat, ExportOptions};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The recording (a file, a pipe's file or a `--threads` directory).
    #[arg(default_value = "perf.data")]
    input: PathBuf,
    /// perfz's own table even where perf is installed.
    #[arg(long)]
    own: bool,
    /// Rows of perfz's table.
    #[arg(long, default_value_t = 25)]
    rows: usize,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    if !a.own {
        match Command::new("perf")
            .arg("report")
            .arg("-i")
            .arg(&a.input)
            .status()
        {
            Ok(st) if st.success() => return Ok(()),
            Ok(st) => {
                say!("perfz report: perf report ended with {st}; perfz's own table instead:")
            }
            Err(_) => say!(
                "perfz report: perf is not installed (Debian, Ubuntu: apt-get install linux-perf); \
                 perfz's own table:"
            ),
        }
    }
    let mut folded = Vec::new();
    let done = crate::export::export(
        std::slice::from_ref(&a.input),
        ExportFormat::Folded,
        &ExportOptions::default(),
        &mut folded,
    )
    .with_context(|| format!("reading {}", a.input.display()))?;
    let lines: Vec<String> = String::from_utf8_lossy(&folded)
        .lines()
        .map(String::from)
        .collect();
    let (rows, total) = crate::export::report::table(&lines);
    let mut out = std::io::stdout().lock();
    let pct = |n: u64| 100.0 * n as f64 / total.max(1) as f64;
    let comm_w = rows
        .iter()
        .take(a.rows)
        .map(|r| r.comm.len())
        .max()
        .unwrap_or(7)
        .max(7);
    writeln!(
        out,
        "# {}: {} samples{}\n#\n# Children      Self  {:comm_w$}  Symbol",
        a.input.display(),
        done.samples,
        done.event.map(|e| format!(" of {e}")).unwrap_or_default(),
        "Command"
    )?;
    for r in rows.iter().take(a.rows) {
        writeln!(
            out,
            "{:>9.2}%  {:>7.2}%  {:comm_w$}  {}",
            pct(r.children),
            pct(r.self_),
            r.comm,
            r.func
        )?;
    }
    if rows.len() > a.rows {
        writeln!(out, "# ... {} more rows (--rows N)", rows.len() - a.rows)?;
    }
    Ok(())
}
