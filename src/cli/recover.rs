//! `perfz recover`: make a crashed recording readable again.

use std::path::PathBuf;

use anyhow::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The perf.data left by a crash (rewritten in place: its records are kept,
    /// a cut-off tail is dropped, features and header are rebuilt).
    file: PathBuf,
    /// Repair an output of perf's `-z --switch-output` after the first: give
    /// the outputs before it, oldest first (repeat the option); FILE is
    /// rewritten as a standalone compressed file.
    #[arg(long = "after", value_name = "EARLIER")]
    after: Vec<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    if !a.after.is_empty() {
        let r = crate::recover::repair_continuation(&a.file, &a.after)
            .with_context(|| a.file.display().to_string())?;
        eprintln!(
            "perfz: repaired {}: its compressed stream went on from the {} earlier file(s) ({} compressed records); rewritten standalone with {} records",
            r.output,
            a.after.len(),
            r.primed_records,
            r.records
        );
        return Ok(());
    }
    let r = crate::recover::recover(&a.file).with_context(|| a.file.display().to_string())?;
    eprintln!(
        "perfz: recovered {}: {} records ({} samples), {} bytes of data; dropped {} bytes{}{}",
        a.file.display(),
        r.records,
        r.samples,
        r.data_bytes,
        r.dropped_bytes,
        r.stopped_because
            .map(|s| format!(" after: {s}"))
            .unwrap_or_default(),
        r.guessed_codec
            .map(|c| format!("; the codec ({c}) was read from the data"))
            .unwrap_or_default(),
    );
    Ok(())
}
