//! Per-event terms (`EVENT/term=value,.../`) as perf's parse-events.c takes
//! them: every event but a tracepoint takes config*, period, freq, name and
//! the terms perf only checks (`percore`, `metric-id`, `nr`); every event,
//! tracepoints and probes included, takes the terms of how it samples:
//! `call-graph=fp|dwarf|lbr|no`, `stack-size=N`, `max-stack=N`, `inherit`,
//! `no-inherit`, `nr=N`, `no-overwrite` (perf's config_term_tracepoint
//! takes these alone). `ratio-to-prev=R` pairs an event with the one before
//! it in its group (ratio.rs).
//!
//! A term without a value is 1 (`inherit` = `inherit=1`). What perfz
//! cannot record is refused with what to do: `overwrite` (perfz has no
//! backward rings: --flight-recorder keeps the newest), `time=0` (perfz
//! times every record), per-event `cpu=` and `branch_type=`, and the AUX
//! area terms.

use super::error::OptionError;
use super::events::{CallGraph, EventSpec, Sampling};

/// The `-e` item `event` is wrong: `why`.
pub(super) fn syntax(event: &str, why: impl Into<String>) -> OptionError {
    OptionError::EventSyntax {
        event: event.into(),
        why: why.into(),
    }
}

/// A term's number: decimal or 0x hex.
pub(super) fn number(v: &str) -> Option<u64> {
    match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

/// `a=1,b,c=x` as (name, value) pairs.
pub(super) fn terms_of(t: &str) -> impl Iterator<Item = (&str, Option<&str>)> {
    t.split(',')
        .filter(|x| !x.is_empty())
        .map(|x| match x.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (x.trim(), None),
        })
}

/// The terms a tracepoint (or probe) takes, as perf's config_term_tracepoint
/// (`overwrite` perfz refuses, saying why).
const TRACEPOINT_TERMS: &[&str] = &[
    "call-graph",
    "stack-size",
    "max-stack",
    "inherit",
    "no-inherit",
    "nr",
    "overwrite",
    "no-overwrite",
];

/// The terms of a `sys:name/terms/` tracepoint.
pub(super) fn tracepoint_terms(e: &mut EventSpec, t: &str, item: &str) -> Result<(), OptionError> {
    for (k, v) in terms_of(t) {
        if !TRACEPOINT_TERMS.contains(&k) || !sampling_term(e, k, v, item)? {
            return Err(syntax(
                item,
                format!(
                    "a tracepoint takes no term `{k}` (nor does perf); its terms: {}{}",
                    TRACEPOINT_TERMS.join(", "),
                    size_hint(k)
                ),
            ));
        }
    }
    Ok(())
}

/// Where a "term" is a number: the dwarf size perf's `--call-graph
/// dwarf,SIZE` takes, which a term gives as `stack-size=N`.
pub(super) fn size_hint(k: &str) -> String {
    if number(k).is_some() {
        format!(" ({COMMA})")
    } else {
        String::new()
    }
}

const COMMA: &str = "a term's value has no comma: give call-graph=dwarf,stack-size=N";

/// Terms perf takes that perfz cannot record, with what to do instead.
const REFUSED: &[(&str, &str)] = &[
    (
        "cpu",
        "perfz opens every event on the CPUs -a or -C names: give -C LIST instead of a per-event cpu=",
    ),
    (
        "branch_type",
        "perfz takes one branch filter for every event: give -j FILTER (or -b) instead of a per-event branch_type=",
    ),
    ("aux-output", AUX),
    ("aux-action", AUX),
    ("aux-sample-size", AUX),
];

const AUX: &str =
    "this term configures an AUX area event (Intel PT, CoreSight), which perfz does not record";

/// One term of an event that is not a tracepoint, other than a PMU's
/// `format/` terms: Ok(false) where perf knows no such term.
pub(super) fn event_term(
    e: &mut EventSpec,
    k: &str,
    v: Option<&str>,
    item: &str,
) -> Result<bool, OptionError> {
    if let Some((_, why)) = REFUSED.iter().find(|(t, _)| *t == k) {
        return Err(syntax(item, *why));
    }
    let num = || value(k, v, item);
    match k {
        "config" => e.config = num()?,
        "config1" => e.config1 = num()?,
        "config2" => e.config2 = num()?,
        "period" => {
            e.sampling = Some(Sampling::Period(num()?));
            e.sampling_is_default = false;
        }
        "freq" => {
            e.sampling = Some(Sampling::Frequency(num()?));
            e.sampling_is_default = false;
        }
        "name" => {
            e.name = v
                .filter(|s| !s.is_empty())
                .ok_or_else(|| syntax(item, "`name` takes a name"))?
                .to_string()
        }
        // Every record is timed: perfz orders and matches them by time.
        "time" if !flag(k, v, item)? => {
            return Err(syntax(
                item,
                "perfz times every sample (records are ordered and matched by time): drop time=0",
            ))
        }
        "time" => {}
        // perf stat's: perf record checks them and records the same.
        "percore" if num()? > 1 => return Err(syntax(item, "`percore` takes 0 or 1")),
        "percore" | "metric-id" => {}
        "ratio-to-prev" => e.terms.ratio_to_prev = Some(ratio(v, item)?),
        _ => return sampling_term(e, k, v, item),
    }
    Ok(true)
}

/// A term's number, or the error saying it needs one.
fn value(k: &str, v: Option<&str>, item: &str) -> Result<u64, OptionError> {
    match v {
        None => Ok(1),
        Some(v) => number(v).ok_or_else(|| syntax(item, format!("`{k}` takes a number"))),
    }
}

/// A 0/1 term (no value: 1), as perf reads `inherit`, `time`, `overwrite`.
fn flag(k: &str, v: Option<&str>, item: &str) -> Result<bool, OptionError> {
    Ok(value(k, v, item)? != 0)
}

/// `ratio-to-prev`'s value: a ratio above 0 (perf 7.3 refuses a whole
/// number, which perfz takes).
fn ratio(v: Option<&str>, item: &str) -> Result<String, OptionError> {
    let v = v.unwrap_or_default();
    match v.parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(v.to_string()),
        _ => Err(syntax(
            item,
            format!("ratio-to-prev={v}: give the ratio of this event's period to the previous one's, above 0 (0.5, 2.0)"),
        )),
    }
}

/// The terms of how an event samples, which tracepoints take too.
fn sampling_term(
    e: &mut EventSpec,
    k: &str,
    v: Option<&str>,
    item: &str,
) -> Result<bool, OptionError> {
    match k {
        "call-graph" => {
            let mode = v.ok_or_else(|| syntax(item, "`call-graph` takes fp, dwarf, lbr or no"))?;
            if mode.contains(',') {
                return Err(syntax(item, COMMA));
            }
            e.terms.call_graph = Some(match mode {
                "no" => CallGraph::None,
                m => CallGraph::parse(m)?,
            });
        }
        "stack-size" => {
            let n = value(k, v, item)?;
            if n > 65528 {
                return Err(syntax(
                    item,
                    format!("stack-size={n}: a dwarf sample dumps at most 65528 bytes of stack (the kernel's limit)"),
                ));
            }
            e.terms.stack_size = n.div_ceil(8) as u32 * 8;
        }
        "max-stack" => e.terms.max_stack = max_stack(value(k, v, item)?, item)?,
        "inherit" => e.terms.inherit = Some(flag(k, v, item)?),
        "no-inherit" => e.terms.inherit = Some(!flag(k, v, item)?),
        // perf trace's limit on an event's samples: perf record checks it
        // and records them all.
        "nr" => {
            value(k, v, item)?;
        }
        "overwrite" | "no-overwrite" if flag(k, v, item)? == (k == "overwrite") => {
            return Err(syntax(
                item,
                "perfz has no overwritable (backward) rings: --flight-recorder SIZE keeps the newest SIZE of the trace instead",
            ))
        }
        "overwrite" | "no-overwrite" => {}
        _ => return Ok(false),
    }
    Ok(true)
}

/// `max-stack=N`, checked against the kernel's limit
/// (/proc/sys/kernel/perf_event_max_stack), which would refuse the event.
fn max_stack(n: u64, item: &str) -> Result<u16, OptionError> {
    let limit = std::fs::read_to_string("/proc/sys/kernel/perf_event_max_stack")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(u64::from(u16::MAX));
    if n > limit.min(u64::from(u16::MAX)) {
        return Err(syntax(
            item,
            format!("max-stack={n} is over the kernel's limit of {limit} frames (/proc/sys/kernel/perf_event_max_stack): give at most that, or raise the limit"),
        ));
    }
    Ok(n as u16)
}

#[cfg(test)]
mod tests;
