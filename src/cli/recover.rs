//! `perfz recover`: make a crashed recording readable again.

use std::path::PathBuf;

use anyhow::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The perf.data left by a crash. It is recovered in a copy (its records
    /// kept, a cut-off tail dropped, features and header rebuilt) that
    /// replaces it only if it reads back whole with at least the samples the
    /// input gave; otherwise the input is left untouched.
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
        say!(
            "perfz: repaired {}: its compressed stream went on from the {} earlier file(s) ({} compressed records); rewritten standalone with {} records",
            r.output,
            a.after.len(),
            r.primed_records,
            r.records
        );
        return Ok(());
    }
    let r = crate::recover::recover(&a.file).with_context(|| a.file.display().to_string())?;
    say!(
        "perfz: recovered {}: {} records, {} bytes of data, {} samples read back whole (the input gave {}); {}{}{}{}",
        a.file.display(),
        r.records,
        r.data_bytes,
        r.samples,
        r.samples_before,
        if r.dropped_bytes == 0 {
            "nothing dropped (it was whole)".to_string()
        } else {
            format!("dropped {} bytes", r.dropped_bytes)
        },
        r.stopped_because
            .map(|s| format!(" after: {s}"))
            .unwrap_or_default(),
        r.guessed_codec
            .map(|c| format!("; the codec ({c}) was read from the data"))
            .unwrap_or_default(),
        if r.rebuilt.is_empty() {
            String::new()
        } else {
            format!("; rebuilt {}", r.rebuilt.join(", "))
        },
    );
    if r.rewritten_compressed2 > 0 {
        say!(
            "perfz: its {} COMPRESSED2 records (perf 6.16's) are rewritten as COMPRESSED records, \
             which perf before 6.16 reads too",
            r.rewritten_compressed2
        );
    }
    if r.cut_off > 0 {
        say!(
            "perfz: the recording stopped before its codec was flushed: the last {} decompressed \
             bytes are the start of a record it cut off, left out (perf leaves them out too)",
            r.cut_off
        );
    }
    Ok(())
}
