//! `perfz decompress` and `perfz recompress`.

use std::path::PathBuf;

use anyhow::Context;
use perfz_codecs::CodecSpec;

use crate::format::CompressedFormat;

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
    /// The record compressed data goes in: compressed
    /// (PERF_RECORD_COMPRESSED, the default: every perf since 5.x reads it)
    /// or compressed2 (PERF_RECORD_COMPRESSED2, as perf 6.16 and newer
    /// write with -z: perf before 6.16 cannot read it).
    #[arg(
        long = "compressed-format",
        value_name = "compressed|compressed2",
        default_value = "compressed"
    )]
    compressed_format: CompressedFormat,
    /// Keep the bytes of dwarf stack dumps the kernel did not write. By
    /// default they are dropped, as `perfz record` drops them: each sample's
    /// stack is cut to what the kernel wrote (perf reads and unwinds it the
    /// same way).
    #[arg(long = "keep-stack-padding")]
    keep_stack_padding: bool,
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
    run(
        a.input,
        output.clone(),
        CodecSpec::None,
        Default::default(),
        false,
    )?;
    if output.as_os_str() != "-" {
        let o = output.display();
        say!(
            "perfz: view it with `perf report -i {o}`, `samply import {o}`, or `hotspot {o}` (readers that take no compressed records)"
        );
    }
    Ok(())
}

pub fn recompress(a: RecompressArgs) -> anyhow::Result<()> {
    let cut = !a.keep_stack_padding;
    run(a.input, a.output, a.codec, a.compressed_format, cut)
}

fn run(
    input: PathBuf,
    output: PathBuf,
    spec: CodecSpec,
    format: CompressedFormat,
    cut: bool,
) -> anyhow::Result<()> {
    let s = crate::convert::convert(&input, &output, &spec, format, cut)
        .with_context(|| input.display().to_string())?;
    if let Some(n) = &s.stack_note {
        say!("perfz: {n}");
    }
    if s.stack_samples_uncut > 0 {
        say!(
            "perfz: {} samples kept their whole stack dump (their fields did not parse as their event's layout)",
            s.stack_samples_uncut
        );
    }
    if output.as_os_str() != "-" {
        let size = crate::format::size_on_disk;
        if let (a @ 1.., b) = (size(&input), size(&output)) {
            say!(
                "perfz: {} -> {}: {a} -> {b} bytes, {:.2}x smaller{}",
                input.display(),
                output.display(),
                a as f64 / b.max(1) as f64,
                if s.stack_bytes_cut > 0 {
                    format!(
                        " ({} bytes of unwritten dwarf stack left out, then {spec})",
                        s.stack_bytes_cut
                    )
                } else {
                    String::new()
                }
            );
        }
        say!(
            "perfz: wrote {} ({spec}): {} records, {} bytes of records given to the codec{}",
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
