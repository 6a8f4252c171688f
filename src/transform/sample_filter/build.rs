//! The filters of a recording's events, built once from their `--filter`
//! strings and attrs.

use super::{compile, parse, SampleFilter};
use crate::format::AttrEntry;

/// The filters of `attrs`' events, `filters[i]` the `--filter` of the
/// i-th (events past `filters` have none): `Ok(None)` where none has one;
/// perf's words where a filter does not parse or reads a field its event
/// does not sample.
pub fn for_attrs(
    attrs: &[AttrEntry],
    filters: &[Option<&str>],
) -> Result<Option<SampleFilter>, String> {
    let mut per_event = Vec::with_capacity(attrs.len());
    for (i, e) in attrs.iter().enumerate() {
        let Some(f) = filters.get(i).copied().flatten() else {
            per_event.push(None);
            continue;
        };
        let parsed = parse(f, cgroup_id)?;
        let name = e.name.as_deref().unwrap_or("the");
        per_event.push(Some(compile(&parsed, name, e.attr.sample_type())?));
    }
    if per_event.iter().all(Option::is_none) {
        return Ok(None);
    }
    let id_at = crate::format::sample::id_offset(attrs[0].attr.sample_type());
    if attrs.len() > 1
        && (id_at.is_none()
            || attrs
                .iter()
                .any(|e| crate::format::sample::id_offset(e.attr.sample_type()) != id_at))
    {
        return Err(
            "--filter: the events' samples do not say which event they belong to \
             (no PERF_SAMPLE_IDENTIFIER, no PERF_SAMPLE_ID at one place); add --sample-identifier"
                .into(),
        );
    }
    let ids = attrs
        .iter()
        .enumerate()
        .flat_map(|(i, e)| e.ids.iter().map(move |&id| (id, i)))
        .collect();
    Ok(SampleFilter::new(per_event, id_at, ids))
}

/// The id of the cgroup at `path` under the cgroup v2 mount (its
/// directory's inode number), 0 where there is none, as perf's
/// `read_cgroup_id` leaves it.
fn cgroup_id(path: &str) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let p = format!("/sys/fs/cgroup/{}", path.trim_start_matches('/'));
    std::fs::metadata(p).map_or(0, |m| m.ino())
}
