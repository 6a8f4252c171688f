//! `perfz export`'s and `perfz record`'s OpenTelemetry options: what the
//! request's resource says of where it is from, and where it is sent.

use std::path::PathBuf;

use anyhow::Context;

use crate::export::otlp_push::{Endpoint, MAX_REQUEST};
use crate::export::{CommandName, ExportOptions, OtlpOptions};

/// The OTLP options.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OtlpArgs {
    /// Send the profiles to an OpenTelemetry Collector over OTLP/HTTP, at
    /// the endpoint OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT or
    /// OTEL_EXPORTER_OTLP_ENDPOINT names (default http://localhost:4318).
    #[arg(long)]
    pub otlp: bool,
    /// Send the profiles over OTLP/HTTP to URL/v1development/profiles
    /// (gzipped protobuf; headers, timeout and compression also from the
    /// OTEL_EXPORTER_OTLP_* variables).
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,
    /// A header sent with each OTLP request (repeatable; after
    /// OTEL_EXPORTER_OTLP_HEADERS's, replacing one of the same name).
    #[arg(long, value_name = "KEY=VALUE")]
    pub otlp_header: Vec<String>,
    /// OTLP: the resource's service.name (default: the recorded command's
    /// name, from the recording's command line; else the process that
    /// weighs most).
    #[arg(long, value_name = "NAME")]
    pub service_name: Option<String>,
}

impl OtlpArgs {
    /// The export's OTLP options, the recorded command's name read from
    /// the recording's command line by `command_name`.
    pub fn options(&self, command_name: CommandName) -> OtlpOptions {
        OtlpOptions {
            service_name: self.service_name.clone(),
            command_name: Some(command_name),
        }
    }

    /// Where to send, if anywhere (checked before anything is read).
    pub fn endpoint(&self) -> anyhow::Result<Option<Endpoint>> {
        if !self.otlp && self.otlp_endpoint.is_none() {
            if !self.otlp_header.is_empty() {
                anyhow::bail!("--otlp-header goes with --otlp-endpoint URL (or --otlp)");
            }
            return Ok(None);
        }
        let env = |k: &str| std::env::var(k).ok();
        let e = Endpoint::resolve(self.otlp_endpoint.as_deref(), &self.otlp_header, &env);
        Ok(Some(e.map_err(anyhow::Error::msg)?))
    }
}

/// Sends `inputs` (read as `perfz export` reads them, as `o` says) to
/// `to` as OTLP requests; says what was sent. Nothing is sent of a
/// recording without samples, nor where the export fails.
pub fn send(to: &Endpoint, inputs: &[PathBuf], o: &ExportOptions) -> anyhow::Result<()> {
    let (requests, done) = crate::export::otlp_requests(inputs, o, MAX_REQUEST)
        .with_context(|| format!("reading {}", inputs[0].display()))?;
    let said = to.send(&requests).map_err(anyhow::Error::msg)?;
    let bytes: usize = requests.iter().map(Vec::len).sum();
    say!("{}", super::export_said::said(&done));
    for s in said {
        say!("perfz: {s}");
    }
    say!(
        "perfz: sent {} OTLP request{} ({bytes} bytes before gzip) to {}",
        requests.len(),
        if requests.len() == 1 { "" } else { "s" },
        to.url
    );
    Ok(())
}

/// `perfz record`'s endpoint, if it sends: refused (before anything is
/// recorded) where the recording is not one file or directory at its end
/// (`-o -`; `several`: --switch-output or --flight-recorder's outputs).
pub fn record_endpoint(
    a: &OtlpArgs,
    output: &std::path::Path,
    several: bool,
) -> anyhow::Result<Option<Endpoint>> {
    let to = a.endpoint()?;
    if to.is_some() && (output.as_os_str() == "-" || several) {
        anyhow::bail!(
            "--otlp-endpoint sends the recording at its end: it needs one output (not -o -, \
             --switch-output or --flight-recorder); send each output with perfz export --otlp-endpoint"
        );
    }
    Ok(to)
}

/// Sends the finished recording `output` to `to`, its resource named as
/// `a` says; a failure is the caller's (the recording stays).
pub fn send_recording(
    a: &OtlpArgs,
    to: &Endpoint,
    output: &std::path::Path,
    command_name: CommandName,
) -> anyhow::Result<()> {
    let o = ExportOptions {
        otlp: a.options(command_name),
        debuginfod: std::env::var("DEBUGINFOD_URLS").ok(),
        ..Default::default()
    };
    send(to, &[output.to_path_buf()], &o).map_err(|e| {
        let why = super::said(&e);
        anyhow::anyhow!(
            "{why} ({} is kept: perfz export --otlp-endpoint URL {0} sends it)",
            output.display()
        )
    })
}
