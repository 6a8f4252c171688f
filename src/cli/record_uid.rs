//! `-u`/`--uid USER` as perf 6.16+ records it: every CPU (`-a` implied,
//! `-a -u` and `-C LIST -u` taken), each event's samples kept where their
//! task belongs to USER, by the sample filter `uid == N` (perf's
//! `parse_uid_filter`, and-ed with a `--filter` given), so tasks the user
//! starts after the recording began are recorded. perf filters in the
//! kernel with BPF, and so does perfz where its program loads
//! (transform/sample_filter/kernel); else the push path reads each task's
//! owner from /proc (transform/sample_filter/owners.rs says how that can
//! be wrong).
//! With -p or -t, those win and -u is left out, with perf's warning.

use super::record_options::Args;
use crate::event::EventSpec;

/// Adds `uid == N` to the sample filter of every event `a` records where
/// -u is the target.
pub(super) fn filter_events(a: &Args, events: &mut [EventSpec]) -> anyhow::Result<()> {
    let Some(u) = &a.uid else { return Ok(()) };
    if !a.pid.is_empty() || !a.tid.is_empty() {
        return Ok(());
    }
    let uid = super::record_args::resolve_user(u)?;
    let by_uid = format!("uid == {uid}");
    for e in events.iter_mut().filter(|e| !e.off_cpu) {
        e.sample_filter = Some(match e.sample_filter.take() {
            Some(f) => format!("{f}, {by_uid}"),
            None => by_uid.clone(),
        });
    }
    Ok(())
}
