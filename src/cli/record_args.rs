//! `perfz record`'s command line, read as perf reads `perf record`'s: split
//! by perf's parse-options rules ([`super::perf_usage::split`]), options
//! perfz refuses named with the reason, then handed to clap one spelling
//! each. `-h` prints perf's usage lines for the options the two share, then
//! perfz's own.

use std::ffi::{OsStr, OsString};
use std::process::ExitCode;

use anyhow::Context;

use crate::event::ring::parse_mmap_pages;
use clap::{Args as _, FromArgMatches as _};

use super::perf_usage::{perf_options, refusal, split, usage_line, OptionSpec, Takes, NEGATED};
use super::record_options::Args;

/// The lines perf's usage starts with.
pub const USAGE_HEAD: &str = " Usage: perfz record [<options>] [<command>]\n    or: perfz record [<options>] -- <command> [<options>]";

/// What a command line asks for.
pub enum Parsed {
    /// A recording.
    Args(Box<Args>),
    /// Nothing more: help was printed (perf exits 129 after its usage).
    Exit(ExitCode),
}

fn clap_command() -> clap::Command {
    Args::augment_args(
        clap::Command::new("perfz record")
            .no_binary_name(true)
            .disable_help_flag(true)
            .args_override_self(true),
    )
}

/// Each option clap knows for `perfz record`, as the splitter reads it.
fn clap_options(cmd: &clap::Command) -> Vec<OptionSpec> {
    cmd.get_arguments()
        .filter(|a| a.get_short().is_some() || a.get_long().is_some())
        .map(|a| {
            let takes = if !a.get_action().takes_values() {
                Takes::Nothing
            } else if a.get_num_args().is_some_and(|n| n.min_values() == 0) {
                Takes::Optional
            } else {
                Takes::Value
            };
            OptionSpec {
                short: a.get_short(),
                long: a.get_long().map(str::to_string),
                takes,
            }
        })
        .collect()
}

/// Every option the splitter knows: clap's, perf's that perfz refuses (to
/// name them with the reason), and `-h`.
fn known_options(cmd: &clap::Command) -> Vec<OptionSpec> {
    let mut known = clap_options(cmd);
    for e in perf_options() {
        let refused = e.spec.long.as_deref().is_some_and(|l| refusal(l).is_some());
        if refused && !known.iter().any(|k| k.long == e.spec.long) {
            known.push(e.spec);
        }
    }
    known.push(OptionSpec {
        short: Some('h'),
        long: Some("help".into()),
        takes: Takes::Nothing,
    });
    known
}

/// Reads `words` (after `record`) as perf would.
pub fn parse(words: &[OsString]) -> anyhow::Result<Parsed> {
    let cmd = clap_command();
    let s = split(words, &known_options(&cmd)).map_err(anyhow::Error::msg)?;
    if s.options.iter().any(|o| o == "--help") {
        // On stderr with 129, as perf's usage.
        say!("{}", help(&cmd));
        return Ok(Parsed::Exit(ExitCode::from(129)));
    }
    let options = unset(s.options)?;
    for o in &options {
        let name = name_of(o);
        if let Some(why) = refusal(&name) {
            anyhow::bail!("--{name}: {why}");
        }
    }
    let m = cmd.try_get_matches_from(&options).map_err(|e| {
        anyhow::anyhow!(
            "{}",
            e.render().to_string().trim_start_matches("error: ").trim()
        )
    })?;
    let mut a = Args::from_arg_matches(&m).map_err(|e| anyhow::anyhow!("{e}"))?;
    a.command = s.command;
    // Which options came in which order (-e and --filter pair by it); a
    // value clap took as a String is UTF-8 already.
    a.words = options
        .iter()
        .map(|o| o.to_string_lossy().into_owned())
        .collect();
    Ok(Parsed::Args(Box::new(a)))
}

/// The recorded command's name (its first word's file name) in a
/// recorder's command line as HEADER_CMDLINE holds it (`perf record -g --
/// ./prog args`, perfz's alike), read as [`parse`] reads `perfz record`'s;
/// None where it has no command (`-a`, `-p`) or is not a `record`.
pub fn command_name(cmdline: &[String]) -> Option<String> {
    let at = cmdline.iter().skip(1).position(|w| w == "record")? + 2;
    let words: Vec<OsString> = cmdline[at..].iter().map(OsString::from).collect();
    let s = split(&words, &known_options(&clap_command())).ok()?;
    let first = s.command.first()?.to_string_lossy().into_owned();
    let name = first.rsplit('/').next().unwrap_or(&first);
    (!name.is_empty()).then(|| name.to_string())
}

/// The name of an option word of the splitter's (`--freq=99`: `freq`;
/// `-g`: `g`).
fn name_of(word: &OsStr) -> String {
    let word = word.to_string_lossy();
    let name = word.trim_start_matches('-').split('=').next();
    name.unwrap_or("").to_string()
}

/// Negations perf refuses, or perfz, with the reason.
const NOT_UNSET: &[(&str, &str)] = &[
    (
        "freq",
        "perf record refuses it too: leave -F out for the default frequency (4000 Hz)",
    ),
    (
        "mmap-pages",
        "perf record refuses it too: leave -m out for the default ring size",
    ),
    (
        "timestamp",
        "perfz always samples timestamps: it orders and cuts its outputs by them",
    ),
];

/// Applies perf's negations: `--no-X` unsets option X, so X is as if not
/// given before it (perf's unset value is perfz's default for each option
/// it takes, but two: `--no-call-graph` also ends `-g`, and
/// `--no-compression-level` is `--codec none`, perfz compressing by
/// default).
fn unset(options: Vec<OsString>) -> anyhow::Result<Vec<OsString>> {
    const CODEC_OFF: &str = "--codec=none";
    let mut out: Vec<OsString> = Vec::new();
    // A CODEC_OFF of a negation's, which a later -z or --codec replaces.
    let mut codec_off = false;
    for w in options {
        let Some(long) = w.to_str().and_then(|w| w.strip_prefix(NEGATED)) else {
            if codec_off && matches!(name_of(&w).as_str(), "compression-level" | "codec") {
                out.retain(|o| o != CODEC_OFF);
                codec_off = false;
            }
            out.push(w);
            continue;
        };
        if let Some((_, why)) = NOT_UNSET.iter().find(|(n, _)| *n == long) {
            anyhow::bail!("--no-{long}: {why}");
        }
        let also = match long {
            "call-graph" => "g",
            "compression-level" => "codec",
            _ => long,
        };
        out.retain(|o| !matches!(name_of(o), n if n == long || n == also));
        if long == "compression-level" {
            out.push(CODEC_OFF.into());
            codec_off = true;
        }
    }
    Ok(out)
}

/// `perfz record -h`: perf's usage lines for the options the two share
/// (verbatim, so scripts that probe perf's help find them), then perfz's own.
fn help(cmd: &clap::Command) -> String {
    let mut out = format!("\n{USAGE_HEAD}\n\n");
    let perf = perf_options();
    for e in &perf {
        let refused = e.spec.long.as_deref().is_some_and(|l| refusal(l).is_some());
        if !refused {
            out += &e.lines;
            out.push('\n');
        }
    }
    out += "\n perfz's own options:\n\n";
    for a in cmd.get_arguments() {
        let long = a.get_long().map(str::to_string);
        let shared = perf.iter().any(|e| {
            (long.is_some() && e.spec.long == long)
                || (long.is_none() && e.spec.short == a.get_short())
        });
        if shared || (a.get_long().is_none() && a.get_short().is_none()) {
            continue;
        }
        let spec = clap_options(&clap::Command::new("one").arg(a.clone()))
            .pop()
            .expect("an option");
        let value = a
            .get_value_names()
            .and_then(|v| v.first())
            .map_or("value".to_string(), |v| v.to_string());
        let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
        out += &usage_line(&spec, &value, &help);
        out.push('\n');
    }
    out
}

/// `-D MS` or `-1`; perf's time ranges (`10-20,30-40`) are refused.
pub(super) fn delay_ms(d: &str) -> anyhow::Result<i64> {
    d.parse().map_err(|_| {
        if d.contains(['-', ',']) {
            anyhow::anyhow!(
                "-D {d}: perfz takes a delay in ms (or -1), not ranges of time; to sample between times, start with -D -1 and write enable and disable to --control"
            )
        } else {
            anyhow::anyhow!("-D {d}: give milliseconds, or -1 to start disabled")
        }
    })
}

/// `-m PAGES[,AUX]`: the data pages (perfz records no AUX area).
pub(super) fn data_pages(m: &str) -> anyhow::Result<usize> {
    let (data, aux) = m.split_once(',').unwrap_or((m, ""));
    anyhow::ensure!(
        aux.is_empty(),
        "-m {m}: AUX area pages need an AUX tracing PMU (intel_pt, arm_spe, cs_etm) and perfz records no AUX area: give the data pages alone"
    );
    Ok(parse_mmap_pages(data)?)
}

/// `-u USER`: a name or a number.
pub(super) fn resolve_user(u: &str) -> anyhow::Result<u32> {
    if let Ok(n) = u.parse::<u32>() {
        return Ok(n);
    }
    let name = std::ffi::CString::new(u).context("-u: a user name without NUL bytes")?;
    // SAFETY: getpwnam reads a NUL-terminated string and returns a pointer
    // to static storage or null; we copy the uid out at once.
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    anyhow::ensure!(!pw.is_null(), "-u {u}: no such user");
    // SAFETY: pw is non-null and points to a valid passwd entry.
    Ok(unsafe { (*pw).pw_uid })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_perf_has_is_perfzs_or_refused_with_a_reason() {
        let cmd = clap_command();
        let ours = clap_options(&cmd);
        for e in perf_options() {
            let long = e.spec.long.clone();
            if long.as_deref().is_some_and(|l| refusal(l).is_some()) {
                assert!(
                    !ours.iter().any(|o| o.long == long),
                    "{long:?} both refused and taken"
                );
                continue;
            }
            let o = ours
                .iter()
                .find(|o| {
                    (long.is_some() && o.long == long)
                        || (long.is_none() && o.short == e.spec.short)
                })
                .unwrap_or_else(|| panic!("perf's {:?} is neither perfz's nor refused", e.spec));
            assert_eq!(o.short, e.spec.short, "{long:?}: perf's short name");
            assert_eq!(o.takes, e.spec.takes, "{long:?}: what it takes, as perf");
        }
    }

    #[test]
    fn the_option_table_in_the_docs_has_a_row_for_each_of_perfs_options() {
        let doc = include_str!("../../docs/RECORD_OPTIONS.md");
        for e in perf_options() {
            let name = match (&e.spec.long, e.spec.short) {
                (Some(l), _) => format!("`--{l}`"),
                (None, Some(c)) => format!("`-{c}`"),
                (None, None) => continue,
            };
            let row = doc
                .lines()
                .find(|l| l.starts_with("| ") && l.contains(&format!("{name} |")));
            let row = row.unwrap_or_else(|| panic!("docs/RECORD_OPTIONS.md has no row for {name}"));
            let refused = e.spec.long.as_deref().and_then(refusal).is_some();
            assert_eq!(row.contains("| refused"), refused, "{row}");
        }
    }

    #[test]
    fn help_shows_perfs_lines_and_perfzs_own() {
        let h = help(&clap_command());
        assert!(h.contains("    -z, --compression-level[=<n>]\n"), "{h}");
        assert!(h.contains("    -a, --all-cpus        system-wide collection from all CPUs\n"));
        assert!(!h.contains("--kcore"), "refused options are not shared");
        assert!(h.contains("        --codec <SPEC>"), "{h}");
        assert!(h.contains("        --flight-recorder <SIZE>"));
    }

    #[test]
    fn a_refused_option_names_its_reason() {
        let words: Vec<OsString> = ["--kcore", "true"].map(OsString::from).to_vec();
        let e = parse(&words).err().unwrap().to_string();
        assert!(
            e.starts_with("--kcore: perfz does not copy /proc/kcore"),
            "{e}"
        );
    }

    fn words_of(line: &[&str]) -> anyhow::Result<Vec<String>> {
        let words: Vec<OsString> = line.iter().map(OsString::from).collect();
        match parse(&words)? {
            Parsed::Args(a) => Ok(a.words),
            Parsed::Exit(_) => anyhow::bail!("not a recording"),
        }
    }

    #[test]
    fn a_negation_unsets_what_came_before_it_as_perfs_does() {
        let cases: &[(&[&str], &[&str])] = &[
            (&["-g", "-a", "--no-call-graph"], &["--all-cpus"]),
            (&["--call-graph=dwarf", "--no-call-graph", "-g"], &["-g"]),
            (&["-i", "--inherit", "-s"], &["--stat"]),
            (&["-z3", "--no-compression-level"], &["--codec=none"]),
            (&["--no-compression-level", "-z"], &["--compression-level"]),
            (
                &["--codec=lz4", "--no-compression-level", "--codec=zstd"],
                &["--codec=zstd"],
            ),
            (&["-B", "--buildid", "--no-all-cpus"], &[]),
            (
                &["-o", "x", "--no-output", "-e", "cpu-clock", "--no-event"],
                &[],
            ),
            (&["--no-cgroup"], &[]),
        ];
        for (line, want) in cases {
            let mut line = line.to_vec();
            line.push("true");
            assert_eq!(words_of(&line).unwrap(), *want, "{line:?}");
        }
        for refused in ["--no-freq", "--no-mmap-pages", "--no-timestamp"] {
            let e = words_of(&[refused, "true"]).unwrap_err().to_string();
            assert!(e.starts_with(&format!("{refused}: ")), "{e}");
        }
    }

    #[test]
    fn perfs_combined_short_options_reach_clap() {
        let words: Vec<OsString> = ["-asdg", "-F99", "-o", "x.data", "--", "sleep", "1"]
            .map(OsString::from)
            .to_vec();
        let Parsed::Args(a) = parse(&words).unwrap() else {
            panic!("not a recording")
        };
        assert_eq!(a.command, ["sleep", "1"]);
        assert_eq!(
            a.words,
            [
                "--all-cpus",
                "--stat",
                "--data",
                "-g",
                "--freq=99",
                "--output=x.data"
            ]
        );
    }

    #[test]
    fn the_recorded_commands_name_is_read_from_the_recorders_command_line() {
        let line = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let name = |s: &str| command_name(&line(s));
        assert_eq!(
            name("perfz record -g -o x.data -- ./bin/prog 1").as_deref(),
            Some("prog")
        );
        assert_eq!(
            name("/usr/bin/perf record -F 99 -g dd if=/dev/zero").as_deref(),
            Some("dd")
        );
        assert_eq!(name("perf record -a -g"), None);
        assert_eq!(name("perf top"), None);
    }
}
