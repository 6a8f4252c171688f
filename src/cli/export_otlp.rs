//! `perfz export`'s OpenTelemetry options: what the request's resource
//! says of where it is from.

use crate::export::OtlpOptions;

/// The OTLP options of `perfz export`.
#[derive(Debug, Clone, clap::Args)]
pub struct OtlpArgs {
    /// OTLP: the resource's service.name (default: the recorded command's
    /// name, from the recording's command line; else the process that
    /// weighs most).
    #[arg(long, value_name = "NAME")]
    pub service_name: Option<String>,
}

impl OtlpArgs {
    /// The export's OTLP options.
    pub fn options(&self) -> OtlpOptions {
        OtlpOptions {
            service_name: self.service_name.clone(),
            command_name: Some(super::record_args::command_name),
        }
    }
}
