//! The harness's own parts checked where the machine gives the suite no
//! case: no attr test with a group runs here (perf cannot open cycles), so
//! the group reading and matching are checked on perf's recording of a
//! software group and on made-up events.

use std::collections::BTreeMap;
use std::process::Command;

use super::attr_file::{compare, data_equal, resolve_groups, skip_on, Event};
use super::perf_data_attrs::read_events;
use crate::common::{perf, require_recording, tempdir, Within};

#[test]
fn attr_py_rules_as_ported() {
    assert!(data_equal("0|1", "1") && data_equal("*", "7") && data_equal("4|20", "20|4"));
    assert!(!data_equal("0|1", "2") && !data_equal("263", "7"));
    assert!(!skip_on("", "x86_64") && !skip_on("!aarch64", "x86_64"));
    assert!(skip_on("aarch64", "x86_64") && skip_on("!s390x,x86_64", "x86_64"));
}

fn event(fd: &str, group_fd: &str, config: &str) -> Event {
    let mut values: BTreeMap<String, String> = super::attr_file::TERMS
        .iter()
        .map(|t| (t.to_string(), "0".to_string()))
        .collect();
    values.insert("fd".into(), fd.into());
    values.insert("group_fd".into(), group_fd.into());
    values.insert("config".into(), config.into());
    Event {
        values,
        group: String::new(),
    }
}

fn events(list: &[(&str, Event)]) -> BTreeMap<String, Event> {
    let mut m: BTreeMap<String, Event> = list
        .iter()
        .map(|(n, e)| (n.to_string(), e.clone()))
        .collect();
    resolve_groups(&mut m);
    m
}

#[test]
fn groups_and_differences_are_found() {
    let grouped = events(&[("a", event("1", "-1", "0")), ("b", event("2", "1", "1"))]);
    let alone = events(&[("x", event("1", "-1", "0")), ("y", event("2", "-1", "1"))]);
    assert_eq!(grouped["b"].group, "a");
    assert!(compare(&grouped, &grouped, false).is_ok());
    let e = compare(&grouped, &alone, false).unwrap_err();
    assert!(e.starts_with("group failure"), "{e}");
    let other = events(&[("x", event("1", "-1", "0")), ("y", event("2", "1", "3"))]);
    let e = compare(&grouped, &other, false).unwrap_err();
    assert!(e.contains("expected config=1, got 3"), "{e}");
    let e = compare(&other, &grouped, true).unwrap_err();
    assert!(e.contains("expected config=1, got 3"), "{e}");
}

/// perf's own file with a group: HEADER_GROUP_DESC read into leaders.
#[test]
fn the_reader_finds_perfs_groups() {
    require_recording();
    let dir = tempdir("perf-suite-groups");
    let data = dir.join("perf.data");
    let out = Command::new(perf())
        .args([
            "record",
            "-q",
            "-e",
            "{cpu-clock,task-clock},page-faults",
            "-o",
        ])
        .arg(&data)
        .arg("true")
        .output_within();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ev = read_events(&data).unwrap();
    let (names, groups): (Vec<&str>, Vec<&str>) = ev
        .iter()
        .map(|(n, e)| (n.as_str(), e.group.as_str()))
        .unzip();
    assert_eq!(names, ["event-1", "event-2", "event-3"]);
    assert_eq!(groups, ["", "event-1", ""]);
    assert_eq!(
        ev["event-2"].values["config"], "1",
        "task-clock is config 1"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
