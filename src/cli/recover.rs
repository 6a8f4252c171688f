//! `perfz recover`: make a crashed recording readable again.

use std::path::PathBuf;

use anyhow::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The perf.data left by a crash (rewritten in place: its records are kept,
    /// a cut-off tail is dropped, features and header are rebuilt).
    file: PathBuf,
}

pub fn run(a: Args) -> anyhow::Result<()> {
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
