//! The list of export formats is the one the command line reads: every
//! format in `perfz::EXPORT_FORMATS` is a `--format` value named in
//! `perfz export --help` with its help, and writes a file of a recording;
//! a name not in the list is refused with the list's names.

use crate::common::*;

/// `perfz export --help`'s line for format `name` (`- name: help`).
fn help_line<'h>(help: &'h str, name: &str) -> Option<&'h str> {
    let prefix = format!("- {name}:");
    help.lines().map(str::trim).find(|l| l.starts_with(&prefix))
}

#[test]
fn every_listed_format_is_a_format_value_with_its_help_and_writes_a_file() {
    let help = perfz_ok(&["export", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    let dir = tempdir("export-formats");
    let data = fixture("plain-cmd");
    assert!(
        perfz::EXPORT_FORMATS.len() >= 6,
        "the list holds every format"
    );
    for f in perfz::EXPORT_FORMATS {
        let line = help_line(&help, f.name());
        let line = line.unwrap_or_else(|| panic!("--help names no {}:\n{help}", f.name()));
        assert!(line.ends_with(f.help()), "{line:?} is not {:?}", f.help());
        let out = dir.join(f.name());
        let args = ["export", "--format", f.name(), "-o", out.to_str().unwrap()];
        perfz_ok(&[&args[..], &[data.to_str().unwrap()]].concat());
        let written = std::fs::metadata(&out).map_or(0, |m| m.len());
        assert!(written > 0, "--format {} wrote nothing", f.name());
    }
}

#[test]
fn a_name_not_listed_is_refused_with_the_listed_names() {
    let data = fixture("plain-cmd");
    let out = perfz(&["export", "--format", "nope", data.to_str().unwrap()]);
    assert!(!out.status.success(), "--format nope was taken");
    let err = String::from_utf8_lossy(&out.stderr);
    let names: Vec<_> = perfz::EXPORT_FORMATS.iter().map(|f| f.name()).collect();
    assert!(
        err.contains(&format!("[possible values: {}]", names.join(", "))),
        "{err}"
    );
}
