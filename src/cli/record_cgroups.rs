//! `-G/--cgroup NAMES` as perf's parse_cgroups reads it: the Nth name of
//! all -G options (comma-separated, an empty one meaning none) goes to the
//! Nth event; a -G must follow an -e ("must define events before
//! cgroups"); where the first -G gives one name alone, every event defined
//! so far is counted in that cgroup.

use crate::event::EventSpec;

/// Gives the events of `lists` (each -e's, in order) their cgroups, from
/// `words` (the options as perf's parse-options split them: `--event=E`,
/// `--cgroup=NAMES`).
pub(super) fn assign(lists: &mut [Vec<EventSpec>], words: &[String]) -> anyhow::Result<()> {
    let per_list: Vec<usize> = lists.iter().map(Vec::len).collect();
    let mut events: Vec<&mut EventSpec> = lists.iter_mut().flatten().collect();
    let (mut lists_seen, mut defined, mut named) = (0usize, 0usize, 0usize);
    for w in words {
        if w.starts_with("--event=") {
            defined += per_list.get(lists_seen).copied().unwrap_or(0);
            lists_seen += 1;
            continue;
        }
        let Some(names) = w.strip_prefix("--cgroup=") else {
            continue;
        };
        anyhow::ensure!(
            defined > 0,
            "-G {names}: must define events before cgroups (-e EVENT -G NAME), as perf"
        );
        for name in names.split(',') {
            anyhow::ensure!(
                named < defined,
                "-G {names}: more cgroups than events before it (one name per event, in order)"
            );
            events[named].cgroup = (!name.is_empty()).then(|| name.to_string());
            named += 1;
        }
        if named == 1 {
            let first = events[0].cgroup.clone();
            events[..defined]
                .iter_mut()
                .for_each(|e| e.cgroup = first.clone());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cgroups_of(lists: &[&str], words: &[&str]) -> anyhow::Result<Vec<Option<String>>> {
        let words: Vec<String> = words.iter().map(|s| s.to_string()).collect();
        let mut g = 0;
        let mut lists: Vec<Vec<EventSpec>> = lists
            .iter()
            .map(|l| crate::event::parse::parse_events(l, &mut g).unwrap())
            .collect();
        assign(&mut lists, &words)?;
        Ok(lists.into_iter().flatten().map(|e| e.cgroup).collect())
    }

    #[test]
    fn names_go_to_events_in_order_and_one_name_to_all_as_perfs() {
        let s = |v: &str| Some(v.to_string());
        let one = cgroups_of(
            &["cpu-clock,task-clock"],
            &["--event=cpu-clock,task-clock", "--cgroup=web"],
        );
        assert_eq!(one.unwrap(), [s("web"), s("web")]);
        let each = cgroups_of(
            &["cpu-clock", "task-clock", "page-faults"],
            &[
                "--event=cpu-clock",
                "--event=task-clock",
                "--cgroup=a,",
                "--event=page-faults",
                "--cgroup=c",
            ],
        );
        assert_eq!(each.unwrap(), [s("a"), None, s("c")]);
        let e = cgroups_of(&["cpu-clock"], &["--cgroup=a", "--event=cpu-clock"]);
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("must define events before cgroups"));
        let e = cgroups_of(&["cpu-clock"], &["--event=cpu-clock", "--cgroup=a,b"]);
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("more cgroups than events"));
    }
}
