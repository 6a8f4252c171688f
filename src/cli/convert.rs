//! `perfz decompress` and `perfz recompress`.

use std::path::PathBuf;

use anyhow::Context;
use perfz_codecs::CodecSpec;

#[derive(Debug, clap::Args)]
pub struct DecompressArgs {
    /// Input perf.data (any codec; file, pipe or --threads directory; `-` = stdin).
    input: PathBuf,
    /// Output file (`-` = pipe mode to stdout).
    #[arg(short, long)]
    output: PathBuf,
}

#[derive(Debug, clap::Args)]
pub struct RecompressArgs {
    /// Input perf.data (any codec; file, pipe or --threads directory; `-` = stdin).
    input: PathBuf,
    /// Output file (`-` = pipe mode to stdout).
    #[arg(short, long)]
    output: PathBuf,
    /// Codec of the output, e.g. zstd:3 (readable by perf), lz4, snappy, none.
    #[arg(long, value_name = "SPEC", value_parser = parse_spec)]
    codec: CodecSpec,
}

pub fn parse_spec(s: &str) -> Result<CodecSpec, perfz_codecs::Error> {
    s.parse()
}

pub fn decompress(a: DecompressArgs) -> anyhow::Result<()> {
    run(a.input, a.output, CodecSpec::None)
}

pub fn recompress(a: RecompressArgs) -> anyhow::Result<()> {
    run(a.input, a.output, a.codec)
}

fn run(input: PathBuf, output: PathBuf, spec: CodecSpec) -> anyhow::Result<()> {
    let s = crate::convert::convert(&input, &output, &spec)
        .with_context(|| input.display().to_string())?;
    if output.as_os_str() != "-" {
        eprintln!(
            "perfz: wrote {} ({spec}): {} records, {} bytes of ring data{}",
            output.display(),
            s.records,
            s.raw_bytes,
            if s.compressed_bytes > 0 {
                format!(
                    " compressed to {} (ratio {:.2})",
                    s.compressed_bytes,
                    s.raw_bytes as f64 / s.compressed_bytes as f64
                )
            } else {
                String::new()
            }
        );
    }
    Ok(())
}
