//! perf's attr test files and their matching, ported from perf's own
//! runner (tools/perf/tests/attr.py: `data_equal`, `Event`, `Test.compare`,
//! `resolve_groups`), so perfz is judged by the rules perf is judged by.

use std::collections::BTreeMap;
use std::path::Path;

/// The ini of one file as Python's configparser reads it: section name →
/// (lowercased key → stripped value), in file order. Only what perf's files
/// use is read; anything else (interpolation with `%`, a key without a
/// value) fails the test rather than being read some other way.
pub type Ini = Vec<(String, Vec<(String, String)>)>;

pub fn parse_ini(path: &Path) -> Ini {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read perf's attr test {}: {e}", path.display()));
    let mut ini: Ini = Vec::new();
    let mut defaults: Vec<(String, String)> = Vec::new();
    // Where keys go: None in [DEFAULT]; no key may come before a section.
    let (mut cur, mut started): (Option<usize>, bool) = (None, false);
    // The indent of the key a continuation line would extend.
    let mut key_indent: Option<usize> = None;
    for (n, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", path.display(), n + 1);
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if let Some(name) = trimmed.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            started = true;
            cur = (name != "DEFAULT").then(|| {
                ini.push((name.to_string(), Vec::new()));
                ini.len() - 1
            });
            key_indent = None;
            continue;
        }
        assert!(started, "{}: a key before any section", at());
        let section = match cur {
            Some(i) => &mut ini[i].1,
            None => &mut defaults,
        };
        if key_indent.is_some_and(|k| indent > k) {
            // configparser's multi-line value: joined with newlines.
            let last = section.last_mut().expect("a key before its continuation");
            last.1 = format!("{}\n{trimmed}", last.1);
            continue;
        }
        let cut = trimmed
            .find(['=', ':'])
            .unwrap_or_else(|| panic!("{}: neither section nor key = value: {line:?}", at()));
        let (key, value) = (trimmed[..cut].trim(), trimmed[cut + 1..].trim());
        assert!(
            !value.contains('%'),
            "{}: '%' interpolation is not ported from configparser",
            at()
        );
        let key = key.to_lowercase();
        section.retain(|(k, _)| *k != key);
        section.push((key, value.to_string()));
        key_indent = Some(indent);
    }
    // configparser gives every section the [DEFAULT] keys it does not set.
    for (_, items) in &mut ini {
        for (k, v) in &defaults {
            if !items.iter().any(|(key, _)| key == k) {
                items.push((k.clone(), v.clone()));
            }
        }
    }
    ini
}

pub fn section<'a>(ini: &'a Ini, name: &str) -> Option<&'a [(String, String)]> {
    ini.iter()
        .find(|(n, _)| n == name)
        .map(|(_, items)| &items[..])
}

/// attr.py's `data_equal`: either side may list alternatives with `|`, and
/// `*` on either side matches anything.
pub fn data_equal(a: &str, b: &str) -> bool {
    a.split('|')
        .any(|x| b.split('|').any(|y| x == y || x == "*" || y == "*"))
}

/// attr.py's `Event.terms`: the fields compared (the others a file sets,
/// such as `mmap2` or `write_backward`, are not).
pub const TERMS: &[&str] = &[
    "cpu",
    "flags",
    "type",
    "size",
    "config",
    "sample_period",
    "sample_type",
    "read_format",
    "disabled",
    "inherit",
    "pinned",
    "exclusive",
    "exclude_user",
    "exclude_kernel",
    "exclude_hv",
    "exclude_idle",
    "mmap",
    "comm",
    "freq",
    "inherit_stat",
    "enable_on_exec",
    "task",
    "watermark",
    "precise_ip",
    "mmap_data",
    "sample_id_all",
    "exclude_host",
    "exclude_guest",
    "exclude_callchain_kernel",
    "exclude_callchain_user",
    "wakeup_events",
    "bp_type",
    "config1",
    "config2",
    "branch_sample_type",
    "sample_regs_user",
    "sample_stack_user",
];

/// One event: its values, and the name of its group leader ("" when it
/// leads or is alone), as `resolve_groups` sets it.
#[derive(Clone, Debug, Default)]
pub struct Event {
    pub values: BTreeMap<String, String>,
    pub group: String,
}

impl Event {
    fn get(&self, t: &str) -> Option<&str> {
        self.values.get(t).map(String::as_str)
    }

    /// `Event.equal`: a term missing on either side is a difference.
    fn equal(&self, other: &Event) -> bool {
        TERMS
            .iter()
            .all(|t| matches!((self.get(t), other.get(t)), (Some(a), Some(b)) if data_equal(a, b)))
    }

    fn optional(&self) -> bool {
        self.get("optional") == Some("1")
    }

    /// `Event.diff`: the terms both have that differ.
    fn diff(&self, other: &Event) -> Vec<(&'static str, String, String)> {
        TERMS
            .iter()
            .filter_map(|t| match (self.get(t), other.get(t)) {
                (Some(a), Some(b)) if !data_equal(a, b) => Some((*t, a.into(), b.into())),
                _ => None,
            })
            .collect()
    }
}

/// A test's `[config]` and expected events.
pub struct AttrTest {
    pub command: String,
    pub args: String,
    pub ret: String,
    pub arch: String,
    pub expect: BTreeMap<String, Event>,
}

/// `Test.__init__` and `load_events`: every section whose name holds
/// "event" is an event, and `[NAME:BASE]` starts from the `[event]`
/// section of the file BASE beside the test.
pub fn load_test(path: &Path) -> AttrTest {
    let ini = parse_ini(path);
    let config =
        section(&ini, "config").unwrap_or_else(|| panic!("{} has no [config]", path.display()));
    let get = |k: &str| {
        config
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    let dir = path.parent().unwrap();
    let mut expect = BTreeMap::new();
    for (name, items) in ini.iter().filter(|(n, _)| n.contains("event")) {
        let mut values = BTreeMap::new();
        if let Some((_, base)) = name.split_once(':') {
            let base_ini = parse_ini(&dir.join(base));
            let base_items = section(&base_ini, "event")
                .unwrap_or_else(|| panic!("{}: base {base} has no [event]", path.display()));
            values.extend(base_items.iter().cloned());
        }
        values.extend(items.iter().cloned());
        expect.insert(
            name.clone(),
            Event {
                values,
                group: String::new(),
            },
        );
    }
    resolve_groups(&mut expect);
    AttrTest {
        command: get("command").unwrap_or_else(|| panic!("{}: no command", path.display())),
        args: get("args").unwrap_or_else(|| panic!("{}: no args", path.display())),
        ret: get("ret").unwrap_or_else(|| "0".into()),
        arch: get("arch").unwrap_or_default(),
        expect,
    }
}

/// `resolve_groups`: an event whose `group_fd` is another's `fd` is in
/// that one's group.
pub fn resolve_groups(events: &mut BTreeMap<String, Event>) {
    let fds: Vec<(String, Option<String>)> = events
        .iter()
        .map(|(n, e)| (n.clone(), e.values.get("fd").cloned()))
        .collect();
    for e in events.values_mut() {
        let Some(gfd) = e.values.get("group_fd").filter(|g| *g != "-1") else {
            continue;
        };
        if let Some((leader, _)) = fds.iter().find(|(_, fd)| fd.as_ref() == Some(gfd)) {
            e.group = leader.clone();
        }
    }
}

/// `Test.skip_test`: `arch` lists the machines a test is for, or with a
/// leading `!` those it is not for.
pub fn skip_on(arch: &str, machine: &str) -> bool {
    if arch.is_empty() {
        return false;
    }
    match arch.strip_prefix('!') {
        Some(not) => not.split(',').any(|a| a == machine),
        None => !arch.split(',').any(|a| a == machine),
    }
}

/// `Test.compare` of `from` against `to`: every event of `from` (but an
/// optional one) matches some event of `to`, and every match of a group
/// member lies in a group led by a match of its leader. `flip` says the
/// sides are (result, expected), so each difference still reads "expected
/// (the test's value), got (perfz's)".
pub fn compare(
    from: &BTreeMap<String, Event>,
    to: &BTreeMap<String, Event>,
    flip: bool,
) -> Result<(), String> {
    let mut matches: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, e) in from {
        let found: Vec<&str> = to
            .iter()
            .filter(|(_, o)| e.equal(o))
            .map(|(n, _)| n.as_str())
            .collect();
        if found.is_empty() && !e.optional() {
            return Err(no_match(name, e, to, flip));
        }
        matches.insert(name, found);
    }
    for (name, e) in from.iter().filter(|(_, e)| !e.group.is_empty()) {
        for m in &matches[name.as_str()] {
            let leaders = &matches[e.group.as_str()];
            if !leaders.contains(&to[*m].group.as_str()) {
                return Err(format!(
                    "group failure: [{name}] (in [{}]'s group) matches [{m}], whose leader \
                     is [{}], not one of {leaders:?}",
                    e.group, to[*m].group
                ));
            }
        }
    }
    Ok(())
}

fn no_match(name: &str, e: &Event, to: &BTreeMap<String, Event>, flip: bool) -> String {
    let whose = if flip { "perfz's" } else { "expected" };
    let mut s = format!("match failure: {whose} [{name}] matches no event");
    for (other, o) in to {
        s += &format!("\n    against [{other}]:");
        let missing: Vec<&&str> = TERMS
            .iter()
            .filter(|t| e.get(t).is_none() || o.get(t).is_none())
            .collect();
        if !missing.is_empty() {
            s += &format!(" terms missing on a side: {missing:?};");
        }
        for (t, a, b) in e.diff(o) {
            let (want, got) = if flip { (b, a) } else { (a, b) };
            s += &format!(" expected {t}={want}, got {got};");
        }
    }
    if to.is_empty() {
        s += " (there are none)";
    }
    s
}
