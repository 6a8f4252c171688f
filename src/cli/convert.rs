//! `perfz decompress` and `perfz recompress`.

use std::path::PathBuf;

use anyhow::Context;
use perfz_codecs::CodecSpec;

#[derive(Debug, clap::Args)]
pub struct DecompressArgs {
    /// Input perf.data (any codec; file, pipe or --threads directory; `-` = stdin).
    input: PathBuf,
    /// Output file (`-` = pipe mode to stdout); default: NAME.plain.data
    /// beside the input, a file every perf.data reader takes (samply,
    /// hotspot, perf 6.1 built without zstd).
    #[arg(short, long)]
    output: Option<PathBuf>,
}

/// `perf.data` -> `perf.plain.data`, `run.data/` -> `run.plain.data`.
pub fn plain_name(input: &std::path::Path) -> PathBuf {
    let s = input.to_string_lossy();
    let s = s.trim_end_matches('/');
    let stem = s.strip_suffix(".data").unwrap_or(s);
    PathBuf::from(format!("{stem}.plain.data"))
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
    anyhow::ensure!(
        a.output.is_some() || a.input.as_os_str() != "-",
        "reading stdin: say where to write with -o FILE (or -o - for stdout)"
    );
    let output = a.output.unwrap_or_else(|| plain_name(&a.input));
    run(a.input, output.clone(), CodecSpec::None)?;
    if output.as_os_str() != "-" {
        let o = output.display();
        eprintln!(
            "perfz: view it with `perf report -i {o}`, `samply import {o}`, or `hotspot {o}` (readers that take no compressed records)"
        );
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::plain_name;
    use std::path::Path;

    #[test]
    fn plain_names_sit_beside_the_input() {
        assert_eq!(
            plain_name(Path::new("perf.data")),
            Path::new("perf.plain.data")
        );
        assert_eq!(
            plain_name(Path::new("/x/run.data/")),
            Path::new("/x/run.plain.data")
        );
        assert_eq!(
            plain_name(Path::new("trace")),
            Path::new("trace.plain.data")
        );
    }
}
