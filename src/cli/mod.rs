//! The command line: one module per subcommand. `anyhow` lives only here, at
//! the edge; the library below speaks `thiserror` enums.
//!
//! record_events.rs reads -e, --filter and -F as perf does; the rest of
//! `perfz record`'s command line is record.rs, record_args.rs,
//! record_perf.rs and perf_usage.rs; `perfz report`'s is report.rs and
//! report_args.rs (perf report's options, by perf_usage.rs), its own table
//! report_own.rs.

mod codecs;
mod convert;
mod eval;
mod export;
mod export_otlp;
mod export_said;
mod export_spool;
mod perf_usage;
mod record;
mod record_args;
mod record_cgroups;
mod record_events;
mod record_options;
mod record_perf;
mod record_uid;
mod recover;
mod report;
mod report_args;
mod report_own;
mod stat;
mod stdio;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// perfz records perf events into compressed perf.data files that `perf report`
/// reads.
#[derive(Debug, Parser)]
#[command(
    name = "perfz",
    version,
    about,
    propagate_version = true,
    args_override_self = true
)]
pub struct Cli {
    /// The subcommand to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands of `perfz`; [`main`] runs each through its module.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Record events into a compressed perf.data that perf report reads.
    Record(Box<record_options::Args>),
    /// List the codecs of this build, their ids and parameters.
    Codecs(codecs::Args),
    /// Make a crashed recording readable again (scan records, rebuild the header).
    Recover(recover::Args),
    /// Compare codecs on a recording through the real push path.
    Eval(Box<eval::Args>),
    /// Header facts, compression, per-record-type counts and lost totals of a perf.data.
    Stat(stat::Args),
    /// Rewrite a perf.data of any codec as plain (uncompressed) perf.data.
    Decompress(convert::DecompressArgs),
    /// Rewrite a perf.data with another codec (e.g. lz4 -> zstd:3 for perf report).
    Recompress(convert::RecompressArgs),
    /// Stacks of a recording: folded lines (as perf script | inferno-collapse-perf), an SVG flame graph, a pprof profile or a speedscope file; or two recordings' difference (--diff).
    Export(export::Args),
    /// What a recording spent its samples on: perf report, or perfz's own table.
    Report(report::Args),
}

/// Runs the CLI and turns errors into a one-line message and exit code 1
/// (`perfz record` reads its command line as perf does, and exits as perf).
pub fn main() -> ExitCode {
    // Bytes, as perf takes them: a command's argument need not be UTF-8.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|w| w == "record") {
        return record::main(&argv[2..]);
    }
    // perf report's command line, read as perf reads it.
    if argv.get(1).is_some_and(|w| w == "report") {
        return report::main(&argv[2..]);
    }
    let cli = Cli::parse();
    let res = match cli.command {
        Command::Record(args) => record::run(*args).map(|_| ()),
        Command::Codecs(args) => codecs::run(args),
        Command::Stat(args) => stat::run(args),
        Command::Eval(args) => eval::run(*args),
        Command::Recover(args) => recover::run(args),
        Command::Decompress(args) => convert::decompress(args),
        Command::Recompress(args) => convert::recompress(args),
        Command::Export(args) => export::run(args),
        Command::Report(a) => return report::main(&a.words),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        // A reader that stopped reading (`perfz stat | head -1`) is no
        // failure of ours, as for any filter.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            say!("perfz: {}", said(&e));
            ExitCode::from(1)
        }
    }
}

/// An error and its causes on one line, as anyhow's `{:#}` writes them,
/// less a cause the line already ends with: an error that displays its
/// source (`#[error("{0}")]` over an io::Error) would say it twice.
pub(crate) fn said(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain().map(|c| c.to_string()) {
        if line.is_empty() {
            line = cause;
        } else if !line.ends_with(&cause) {
            line = format!("{line}: {cause}");
        }
    }
    line
}

/// Writes `text` whole to standard output: a full disk or a closed pipe
/// is an error to report, never a panic (as `print!` would make it).
pub fn write_stdout(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| anyhow::Error::new(e).context("writing standard output"))
}

/// Whether `e` is a write to a pipe whose reader is gone.
pub(crate) fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Writes `bytes` as a new file that replaces `path` (a temporary beside it,
/// renamed over it): a symlink planted at `path` is replaced, never written
/// through.
pub(crate) fn write_replacing(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".perfz-stats-")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_is_said_once() {
        let io = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let e = anyhow::Error::new(crate::format::FormatError::Io(io())).context("reading x");
        assert_eq!(said(&e), format!("reading x: {}", io()));
        let e = anyhow::Error::new(io()).context("reading y");
        assert_eq!(said(&e), format!("reading y: {}", io()));
    }
}
