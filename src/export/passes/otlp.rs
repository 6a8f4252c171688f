//! The second pass's end for OpenTelemetry profiles: what the request's
//! resource says (the recording's host, the recorded command), and the
//! profiles written to a file or cut into requests to send.

use std::path::PathBuf;

use super::SecondPass;
use crate::export::write::otlp::{self, Otlp, Profiles};
use crate::export::write::pprof;
use crate::export::{ExportFormat, Exported};
use crate::format::FormatError;

impl SecondPass<'_> {
    /// Writes the profiles gathered in `otlp` to `out` as the format
    /// asks (protobuf or JSON); what the export did.
    pub(super) fn finish_otlp(
        self,
        otlp: Otlp,
        inputs: &[PathBuf],
        out: &mut dyn std::io::Write,
    ) -> Result<Exported, FormatError> {
        let json = self.format == ExportFormat::OtlpJson;
        self.with_profiles(otlp, inputs, |p| {
            let req = p.whole();
            match json {
                true => otlp::json::write(&req, out),
                false => Ok(otlp::write_proto(&req, out)?),
            }
        })
    }

    /// The profiles gathered as encoded requests of at most `limit` bytes
    /// where one sample allows; what the export did.
    pub(crate) fn finish_requests(
        mut self,
        inputs: &[PathBuf],
        limit: usize,
    ) -> Result<(Vec<Vec<u8>>, Exported), FormatError> {
        self.close();
        let Some(otlp) = self.gather.take_otlp() else {
            return Err(FormatError::Unsupported(
                "OTLP requests are made of an OTLP export".into(),
            ));
        };
        let mut requests = Vec::new();
        let done = self.with_profiles(otlp, inputs, |p| {
            requests = p.bounded(limit);
            Ok(())
        })?;
        Ok((requests, done))
    }

    /// The profiles gathered in `otlp` handed to `emit`, unless there are
    /// none: a recording without samples makes no request.
    fn with_profiles(
        mut self,
        otlp: Otlp,
        inputs: &[PathBuf],
        emit: impl FnOnce(&Profiles<'_>) -> Result<(), FormatError>,
    ) -> Result<Exported, FormatError> {
        let about = self.about(inputs);
        let profiles = otlp.finish(&self.table.named, about);
        if profiles.is_empty() {
            return Err(FormatError::Unsupported(format!(
                "{}: no samples with a stack to export, so no OTLP profile: nothing written or sent",
                inputs[0].display()
            )));
        }
        self.done.stacks = profiles.samples();
        emit(&profiles)?;
        Ok(self.done)
    }

    /// What the profiles say of themselves: pprof's types, periods and
    /// time span; the recording's host (else this one's); the service
    /// name asked for, else the recorded command's.
    fn about(&self, inputs: &[PathBuf]) -> otlp::Described {
        let p = pprof::about(inputs, &self.chosen, self.first, self.last);
        let host = (self.host.clone())
            .or_else(|| crate::synth::features::uname().map(|u| u.0))
            .unwrap_or_default();
        let o = &self.o.otlp;
        let service = o.service_name.clone().or_else(|| {
            let command = o.command_name?;
            command(self.cmdline.as_deref()?)
        });
        otlp::about(&p, &self.chosen, self.o.fold.sample_counts, host, service)
    }
}
