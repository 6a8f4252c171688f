//! What `perfz record`'s -e, --filter and -F ask for, parsed as perf parses
//! them.

use anyhow::Context;

use crate::event::events::EventSpec;
use crate::event::parse::parse_events;
use crate::notes::Notes;

/// Parses every -e (perf's grammar; each -e's events a list of their own)
/// and gives each --filter (and --exclude-perf's `common_pid != PID`) to
/// the tracepoints of the -e before it on the command line, as perf does; `words` are the options as perf's
/// parse-options split them (`--event=E`, `--filter=F`, `--exclude-perf`).
pub(super) fn events_with_filters(
    lists: &[String],
    filters: &[String],
    exclude_perf: bool,
    words: &[String],
) -> anyhow::Result<Vec<Vec<EventSpec>>> {
    let lists: Vec<String> = if lists.is_empty() {
        vec!["cpu-clock".into()]
    } else {
        lists.to_vec()
    };
    let mut next_group = 0;
    let mut parsed: Vec<Vec<EventSpec>> = lists
        .iter()
        .map(|l| parse_events(l, &mut next_group))
        .collect::<Result<_, _>>()?;
    // The order of -e, --filter and --exclude-perf on the command line.
    let exclude = "perfz's own threads".to_string();
    let order = filter_order(words, exclude_perf);
    let (mut e_seen, mut f_seen) = (0usize, 0usize);
    for item in order {
        let Some(is_exclude) = item else {
            e_seen += 1;
            continue;
        };
        let f = if is_exclude {
            &exclude
        } else {
            f_seen += 1;
            filters
                .get(f_seen - 1)
                .context("--filter: more filters than parsed")?
        };
        let list = e_seen
            .checked_sub(1)
            .and_then(|i| parsed.get_mut(i))
            .with_context(|| {
                format!("--filter {f:?} must follow the -e of the tracepoints it filters")
            })?;
        apply_filter(list, f, is_exclude)?;
    }
    anyhow::ensure!(
        f_seen == filters.len(),
        "--filter must follow the -e of the tracepoints it filters"
    );
    Ok(parsed)
}

/// The order of -e (None), --filter (`Some(false)`) and, where given,
/// --exclude-perf (`Some(true)`) among `words`.
fn filter_order(words: &[String], exclude_perf: bool) -> Vec<Option<bool>> {
    let mut order = Vec::new();
    for w in words {
        if w.starts_with("--event=") {
            order.push(None);
        } else if w.starts_with("--filter=") {
            order.push(Some(false));
        } else if w == "--exclude-perf" && exclude_perf {
            order.push(Some(true));
        }
    }
    order
}

/// Gives filter `f` (or, `is_exclude`, --exclude-perf's) to the events
/// of one -e's `list`, as perf's parse_filter does: a tracepoint's is an
/// ftrace filter, any other event's a sample filter (perf 6.6+, checked
/// here in perf's grammar); --exclude-perf's is for tracepoints only.
fn apply_filter(list: &mut [EventSpec], f: &str, is_exclude: bool) -> anyhow::Result<()> {
    let mut any = false;
    for e in list.iter_mut() {
        if e.tracepoint.is_none() && !is_exclude {
            crate::transform::sample_filter::parse(f, |_| 0).map_err(anyhow::Error::msg)?;
            // A second --filter adds its terms, as perf appends them.
            e.sample_filter = Some(match e.sample_filter.take() {
                Some(before) => format!("{before}, {f}"),
                None => f.to_string(),
            });
        } else if e.tracepoint.is_none() {
            continue;
        } else if is_exclude {
            e.exclude_self = true;
        } else {
            e.filter = Some(f.to_string());
        }
        any = true;
    }
    anyhow::ensure!(
        any,
        "--filter {f:?}: the -e before it names no tracepoint (filters apply to tracepoints such as sched:sched_switch)"
    );
    Ok(())
}

/// The kernel's perf_event_max_sample_rate.
pub(super) fn max_sample_rate() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// `-F`: a number or `max`; above the kernel's limit it is lowered to it
/// with a note, as perf does (an error with `--strict-freq`).
pub(super) fn frequency(f: &str, strict: bool, notes: &mut Notes) -> anyhow::Result<u64> {
    let max = max_sample_rate();
    if f == "max" {
        let m = max.context("-F max: cannot read /proc/sys/kernel/perf_event_max_sample_rate")?;
        notes.push(format!(
            "-F max: sampling at {m} Hz (perf_event_max_sample_rate)"
        ));
        return Ok(m);
    }
    let hz: u64 = f
        .parse()
        .map_err(|_| anyhow::anyhow!("-F {f:?}: give a frequency in Hz or `max`"))?;
    match max {
        Some(m) if hz > m && strict => anyhow::bail!(
            "Maximum frequency rate ({m} Hz) exceeded, please use a lower frequency than {hz} Hz, or drop --strict-freq"
        ),
        Some(m) if hz > m => {
            notes.push(format!(
                "maximum frequency rate ({m} Hz) exceeded, throttling from {hz} Hz to {m} Hz \
                 (raise /proc/sys/kernel/perf_event_max_sample_rate to sample faster)"
            ));
            Ok(m)
        }
        _ => Ok(hz),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_filter_after_another_event_is_a_sample_filter_added_up() {
        let lists = words(&["task-clock"]);
        let filters = words(&["ip < 0xffffffff00000000", "period > 1"]);
        let w = words(&["--event=task-clock", "--filter=a", "--filter=b"]);
        let parsed = events_with_filters(&lists, &filters, false, &w).unwrap();
        let e = &parsed[0][0];
        assert_eq!(
            e.sample_filter.as_deref(),
            Some("ip < 0xffffffff00000000, period > 1")
        );
        assert_eq!(e.filter, None);
        let bad = words(&["frob > 1"]);
        let err = events_with_filters(&lists, &bad, false, &w[..2]).unwrap_err();
        assert!(
            err.to_string().contains("Unexpected filter ident: frob"),
            "{err}"
        );
    }
}
