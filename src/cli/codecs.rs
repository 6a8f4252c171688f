//! `perfz codecs`: what this build can compress with.

use std::io::Write;

use perfz_codecs::{CodecKind, CodecSpec};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Check one codec spec (e.g. `zstd:3,wlog=23`) and print its canonical form.
    #[arg(long, value_name = "SPEC")]
    check: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if let Some(s) = args.check {
        let spec: CodecSpec = s.parse()?;
        writeln!(out, "{spec} (HEADER_COMPRESSED type {})", spec.id().0)?;
        return Ok(());
    }
    writeln!(out, "{:<8} {:<6} {:<12} parameters", "codec", "built", "id")?;
    for kind in CodecKind::ALL {
        writeln!(
            out,
            "{:<8} {:<6} {:<12} {}",
            kind.name(),
            if kind.is_built() { "yes" } else { "no" },
            format!("{:#x}", kind.id().0),
            kind.parameters()
        )?;
    }
    writeln!(
        out,
        "\ndefault: {}; perf 6.1 reads zstd and none directly",
        CodecSpec::default()
    )?;
    Ok(())
}
