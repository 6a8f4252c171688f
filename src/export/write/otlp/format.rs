//! The two OpenTelemetry formats, `otlp` (protobuf) and `otlp-json` (the
//! OTLP JSON mapping): a profile per event, and what the request's
//! resource says (the recording's host, the recorded command).

use std::io::Write;

use super::{json, write_proto, Described, Otlp, Profiles};
use crate::export::name::frames::Named;
use crate::export::recording::events::Several;
use crate::export::write::fold::FoldOptions;
use crate::export::write::format::{Diff, Ending, Exports, Format};
use crate::export::write::pprof;
use crate::export::write::sampled::Sampled;
use crate::export::ExportOptions;
use crate::format::FormatError;

impl Format for Otlp {
    const NAME: &'static str = "otlp";
    const HELP: &'static str = "OpenTelemetry profiles (OTLP, profiles v1development): an ExportProfilesServiceRequest in protobuf, a profile per event, as the Collector's OTLP receiver takes them";
    const BINARY: Option<&'static str> = Some("an OTLP request is binary: give -o FILE (e.g. -o profiles.pb), --format otlp-json, or redirect the output");
    const SEVERAL_EVENTS: Several = Several::Each;
    const WANTS_PROCESS: bool = true;

    fn new(_: &ExportOptions) -> Otlp {
        Otlp::default()
    }

    fn add_sample(&mut self, fold: &FoldOptions, _: &[Named<'_>], s: &Sampled<'_>) {
        self.add(fold, s);
    }

    fn write_to(self, end: &Ending<'_>, out: &mut dyn Write) -> Result<usize, FormatError> {
        let profiles = self.profiles(end)?;
        write_proto(&profiles.whole(), out)?;
        Ok(profiles.samples())
    }

    fn diff(d: &mut Diff<'_, impl Exports>, out: &mut dyn Write) -> Result<usize, FormatError> {
        no_diff(d, out)
    }
}

/// The same request in the OTLP JSON mapping.
#[derive(Default)]
pub(crate) struct OtlpJson(Otlp);

impl Format for OtlpJson {
    const NAME: &'static str = "otlp-json";
    const HELP: &'static str = "The same request in the OTLP JSON mapping";
    const SEVERAL_EVENTS: Several = Several::Each;
    const WANTS_PROCESS: bool = true;

    fn new(_: &ExportOptions) -> OtlpJson {
        OtlpJson::default()
    }

    fn add_sample(&mut self, fold: &FoldOptions, _: &[Named<'_>], s: &Sampled<'_>) {
        self.0.add(fold, s);
    }

    fn write_to(self, end: &Ending<'_>, out: &mut dyn Write) -> Result<usize, FormatError> {
        let profiles = self.0.profiles(end)?;
        json::write(&profiles.whole(), out)?;
        Ok(profiles.samples())
    }

    fn diff(d: &mut Diff<'_, impl Exports>, out: &mut dyn Write) -> Result<usize, FormatError> {
        no_diff(d, out)
    }
}

/// `--diff` of OTLP profiles: refused.
fn no_diff(_: &mut Diff<'_, impl Exports>, _: &mut dyn Write) -> Result<usize, FormatError> {
    Err(FormatError::Unsupported(
        "--diff writes folded lines, svg or pprof, not OTLP (a backend compares \
         two profiles itself: send each)"
            .into(),
    ))
}

impl Otlp {
    /// The profiles gathered, their frames and resource as `end` says;
    /// refused where there are none: a recording without samples makes no
    /// request.
    pub(crate) fn profiles<'f>(self, end: &Ending<'f>) -> Result<Profiles<'f>, FormatError> {
        let profiles = self.finish(end.named, described(end));
        if profiles.is_empty() {
            return Err(FormatError::Unsupported(format!(
                "{}: no samples with a stack to export, so no OTLP profile: nothing written or sent",
                end.inputs[0].display()
            )));
        }
        Ok(profiles)
    }
}

/// What the profiles say of themselves: pprof's types, periods and time
/// span; the recording's host (else this one's); the service name asked
/// for, else the recorded command's.
fn described(end: &Ending<'_>) -> Described {
    let p = pprof::about(end.inputs, end.chosen, end.span.0, end.span.1);
    let host = (end.host.map(str::to_string))
        .or_else(|| crate::synth::features::uname().map(|u| u.0))
        .unwrap_or_default();
    let o = &end.o.otlp;
    let service = o.service_name.clone().or_else(|| {
        let command = o.command_name?;
        command(end.cmdline?)
    });
    let counts = end.o.fold.sample_counts;
    super::about(&p, end.chosen, counts, host, service)
}
