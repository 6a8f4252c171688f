//! Which events an export takes: `-e`'s, or the earliest sample's, as
//! perf script | inferno-collapse-perf keep it (events counting in other measures never
//! share a flame graph). A recording with off-CPU samples (`offcpu-time`,
//! `perfz record --off-cpu`) beside an on-CPU clock (cpu-clock,
//! task-clock: periods in nanoseconds) is exported in wall-clock
//! nanoseconds: both events, each sample weighing its period, so each
//! thread's time adds up to its wall time; or one of the two.

use crate::format::attr::OFF_CPU_NAME;
use crate::format::{Attr, AttrEntry, FormatError, Meta, Record, RecordType};

/// An event with samples: its name, attr, and how many.
pub(crate) type EventSamples = (String, Attr, u64);

/// Which time an export of a recording with off-CPU samples shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Time {
    /// On-CPU and off-CPU: wall-clock time.
    #[default]
    Wall,
    /// The on-CPU event alone (`--on-cpu-only`).
    OnCpu,
    /// The off-CPU samples alone (`--off-cpu-only`).
    OffCpu,
}

/// The samples' events of one input: attr index -> name.
pub(crate) fn name(a: &AttrEntry, i: usize) -> String {
    // Without EVENT_DESC (a file cut before its features), a built-in event
    // is named from its attr, as perf names it.
    a.name
        .clone()
        .or_else(|| {
            crate::event::events::name_of(a.attr.type_(), a.attr.config()).map(String::from)
        })
        .unwrap_or_else(|| format!("event{i}"))
}

/// perf's software clock events (cpu-clock and task-clock): their period
/// is nanoseconds.
pub(crate) fn is_clock(a: &Attr) -> bool {
    a.type_() == 1 && a.config() <= 1
}

/// The unit of the weights of `chosen` (speedscope's names):
/// `nanoseconds` where every event's period is (the clocks, off-CPU
/// time), else `none` (counts, or `--sample-counts`).
pub(crate) fn unit(chosen: &[&EventSamples], sample_counts: bool) -> &'static str {
    let ns = |e: &&EventSamples| e.0 == OFF_CPU_NAME || is_clock(&e.1);
    if !sample_counts && !chosen.is_empty() && chosen.iter().all(ns) {
        "nanoseconds"
    } else {
        "none"
    }
}

fn names(events: &[EventSamples]) -> String {
    if events.is_empty() {
        return "no samples".into();
    }
    let list: Vec<String> = events
        .iter()
        .map(|e| format!("{} ({} samples)", e.0, e.2))
        .collect();
    list.join(", ")
}

/// What an export format makes of a recording with samples of several
/// unrelated events, none chosen with `-e`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Several {
    /// The earliest sample's event alone.
    First,
    /// Each event (a profile each), the earliest sample's first.
    Each,
    /// Refused: what the format writes (`a pprof profile`) holds one.
    Refused(&'static str),
}

/// The events to export: `want` (-e), else the earliest sample's
/// (`first`); with off-CPU samples, as `time` says; of several unrelated
/// events, as the format's `several` says.
pub(crate) fn choose<'a>(
    events: &'a [EventSamples],
    first: Option<&str>,
    want: Option<&str>,
    time: Time,
    several: Several,
) -> Result<Vec<&'a EventSamples>, FormatError> {
    let no = |s: String| Err(FormatError::Unsupported(s));
    if let Some(why) = contradiction(want, time) {
        return no(why);
    }
    if let Some(want) = want {
        return match events.iter().find(|e| e.0 == want) {
            Some(e) => Ok(vec![e]),
            None => no(format!(
                "no samples of event {want:?} in the recording; it has: {}",
                names(events)
            )),
        };
    }
    let off = events.iter().find(|e| e.0 == OFF_CPU_NAME);
    let on = first
        .filter(|&f| f != OFF_CPU_NAME)
        .and_then(|f| events.iter().find(|e| e.0 == f))
        .or_else(|| events.iter().find(|e| e.0 != OFF_CPU_NAME));
    match (off, time) {
        (None, Time::OffCpu) => no(format!(
            "--off-cpu-only: no offcpu-time samples in the recording (record with perfz record --off-cpu); it has: {}",
            names(events)
        )),
        (Some(off), Time::OffCpu) => Ok(vec![off]),
        (Some(_), Time::OnCpu) => Ok(on.into_iter().collect()),
        (Some(off), Time::Wall) => match on {
            Some(on) if !is_clock(&on.1) => no(format!(
                "the on-CPU event {} counts events, not nanoseconds, so it does not add up with \
                 off-CPU time: export --on-cpu-only or --off-cpu-only (or record -e cpu-clock)",
                on.0
            )),
            on => Ok(on.into_iter().chain([off]).collect()),
        },
        (None, _) => match several {
            // A profile each (OTLP's), the first event's first.
            Several::Each => Ok(first
                .and_then(|f| events.iter().find(|e| e.0 == f))
                .into_iter()
                .chain(events.iter().filter(|e| Some(e.0.as_str()) != first))
                .collect()),
            Several::Refused(what) if events.len() > 1 => no(format!(
                "{what} holds one event and the recording has samples of {}: \
                 choose one with -e NAME",
                names(events)
            )),
            _ => Ok(first
                .and_then(|f| events.iter().find(|e| e.0 == f))
                .into_iter()
                .collect()),
        },
    }
}

/// Where `-e want` is an event that `time` leaves out (`-e offcpu-time
/// --on-cpu-only`, an on-CPU event with `--off-cpu-only`): what to give
/// instead. Nothing is exported of options that contradict each other.
pub(crate) fn contradiction(want: Option<&str>, time: Time) -> Option<String> {
    let want = want?;
    match time {
        Time::OnCpu if want == OFF_CPU_NAME => Some(format!(
            "-e {want} is the off-CPU event, which --on-cpu-only leaves out: give one of them \
             (-e {want} or --off-cpu-only for the off-CPU time, --on-cpu-only for the on-CPU event)"
        )),
        Time::OffCpu if want != OFF_CPU_NAME => Some(format!(
            "-e {want} is an on-CPU event, which --off-cpu-only leaves out: give one of them \
             (-e {want} for that event, --off-cpu-only for the off-CPU time)"
        )),
        _ => None,
    }
}

/// The attr of `rec`, and its event's place in `chosen`, where it is a
/// sample of an event exported (any, where none is chosen).
pub(crate) fn wanted<'m>(
    rec: &Record<'_>,
    meta: &'m Meta,
    chosen: &[&EventSamples],
) -> Option<(&'m Attr, usize)> {
    if rec.header.type_ != RecordType::SAMPLE {
        return None;
    }
    let i = meta.attr_index_of_sample(rec)?;
    let entry = &meta.attrs[i];
    if chosen.is_empty() {
        return Some((&entry.attr, 0));
    }
    let n = name(entry, i);
    let slot = chosen.iter().position(|e| e.0 == n)?;
    Some((&entry.attr, slot))
}

/// The events not exported, with their samples, for the note that says so.
pub(crate) fn others(events: &[EventSamples], chosen: &[&EventSamples]) -> Vec<String> {
    events
        .iter()
        .filter(|e| !chosen.is_empty() && chosen.iter().all(|c| c.0 != e.0))
        .map(|e| format!("{} ({} samples)", e.0, e.2))
        .collect()
}
