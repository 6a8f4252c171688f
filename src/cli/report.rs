//! `perfz report`: perf report's command line. Where perf is installed
//! every word goes to `perf report` and its exit status is perfz's (a
//! lone file name is its `-i`, perfz's habit); where it is not (or with
//! `--own`), perfz's own table honours the common options (`-i`,
//! `--stdio`, `--sort comm,dso,sym`, `--children`, `--no-children`,
//! `--percent-limit`) and refuses the rest, naming them.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

use anyhow::Context;

use super::report_own::Own;
use crate::export::write::report::SortKey;

/// For `perfz --help`: `perfz report` reads its words itself ([`main`]).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// perf report's options (`-i FILE`, `--stdio`, `--sort`, `--no-children`,
    /// `--percent-limit`, ...); `--own`: perfz's own table even where perf is
    /// installed; `--rows N`: the rows of that table (25).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub(super) words: Vec<OsString>,
}

/// A command line read for both: the words for perf report (perfz's own
/// options taken out), and what the own table makes of them (`Err`: an
/// option it does not honour, in perf's words).
struct Line {
    for_perf: Vec<OsString>,
    own: Result<Own, String>,
    /// `--own`.
    own_only: bool,
}

/// Reads `words` (after `report`): each goes to perf as given, but
/// perfz's own options and a lone file name (perf's `-i` for it).
fn read(words: &[OsString]) -> anyhow::Result<Line> {
    let mut line = Line {
        for_perf: Vec::new(),
        own: Ok(Own::default()),
        own_only: false,
    };
    let mut it = words.iter();
    while let Some(w) = it.next() {
        let text = w.to_string_lossy().into_owned();
        let (name, attached) = match text.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (text.as_str(), None),
        };
        let mut said = vec![w.clone()];
        // The option's value: attached, or the next word.
        let mut value = |what: &str| -> anyhow::Result<String> {
            if let Some(v) = attached {
                return Ok(v.to_string());
            }
            let v = it
                .next()
                .with_context(|| format!("option `{what}' requires a value"))?;
            said.push(v.clone());
            Ok(v.to_string_lossy().into_owned())
        };
        let change = match name {
            "--own" => {
                line.own_only = true;
                continue;
            }
            "--rows" => {
                let n = value("rows")?.parse().context("--rows: a number of rows")?;
                if let Ok(o) = &mut line.own {
                    o.rows = n;
                }
                continue;
            }
            _ if !name.starts_with('-') && std::path::Path::new(w).is_file() => {
                // perfz's habit, `perfz report FILE` (perf would take the
                // word for a symbol filter).
                said.insert(0, "-i".into());
                Ok(Change::Input(w.into()))
            }
            _ => own_change(name, &mut value)?,
        };
        line.for_perf.extend(said);
        match (&mut line.own, change) {
            (Ok(o), Ok(change)) => change.apply(o),
            (Ok(_), Err(e)) => line.own = Err(e),
            (Err(_), _) => {}
        }
    }
    Ok(line)
}

/// What option `name` changes in the own table (`value` reads its
/// value), or why the own table cannot honour it.
fn own_change(
    name: &str,
    value: &mut impl FnMut(&str) -> anyhow::Result<String>,
) -> anyhow::Result<Result<Change, String>> {
    Ok(match name {
        "-i" | "--input" => Ok(Change::Input(value("input")?.into())),
        _ if name.starts_with("-i") && !name.starts_with("--") => {
            Ok(Change::Input(name[2..].into()))
        }
        "-s" | "--sort" => SortKey::parse_list(&value("sort")?)
            .map(Change::Keys)
            .map_err(|k| format!("--sort {k}: perfz's own table sorts by comm, dso and sym")),
        "--percent-limit" => {
            let p = value("percent-limit")?.parse();
            Ok(Change::PercentLimit(
                p.context("--percent-limit: a percentage, e.g. 0.5")?,
            ))
        }
        "--stdio" => Ok(Change::None),
        "--children" => Ok(Change::Children(true)),
        "--no-children" => Ok(Change::Children(false)),
        "--latency" => Ok(Change::Latency),
        _ => Err(format!(
            "{name}: perfz's own table honours -i, --stdio, --sort comm,dso,sym, --children, \
             --no-children, --latency and --percent-limit; perf report has the rest (Debian, Ubuntu: \
             apt-get install linux-perf)"
        )),
    })
}

/// What one option changes in the own table.
enum Change {
    None,
    Input(PathBuf),
    Keys(Vec<SortKey>),
    Children(bool),
    Latency,
    PercentLimit(f64),
}

impl Change {
    fn apply(self, o: &mut Own) {
        match self {
            Change::None => {}
            Change::Input(p) => o.input = p,
            Change::Keys(k) => o.keys = k,
            Change::Children(c) => o.children = c,
            Change::Latency => o.latency = true,
            Change::PercentLimit(p) => o.percent_limit = p,
        }
    }
}

/// `perfz report WORDS`: perf report's exit status where perf ran it,
/// else 0, or 1 (perfz's own table could not be made) or 129 (an option
/// it does not honour, or a usage error, as perf's).
pub fn main(words: &[OsString]) -> ExitCode {
    let line = match read(words) {
        Ok(l) => l,
        Err(e) => {
            say!("  Error: {e}");
            return ExitCode::from(129);
        }
    };
    let latency = line.own.as_ref().is_ok_and(|o| o.latency);
    let perf_lacks_latency = latency && !line.own_only && !perf_has_latency();
    if perf_lacks_latency {
        say!(
            "perfz report: this perf has no --latency (perf 6.15 and newer do): perfz's own table:"
        );
    }
    if !line.own_only && !perf_lacks_latency {
        match Command::new("perf")
            .arg("report")
            .args(&line.for_perf)
            .status()
        {
            Ok(st) => return ExitCode::from(status_of(st)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => say!(
                "perfz report: perf is not installed (Debian, Ubuntu: apt-get install linux-perf); \
                 perfz's own table:"
            ),
            Err(e) => {
                say!("perfz report: cannot run perf report: {e}");
                return ExitCode::from(1);
            }
        }
    }
    let own = match line.own {
        Ok(o) => o,
        Err(e) => {
            let why = if line.own_only {
                "--own"
            } else {
                "perf is not installed"
            };
            say!("  Error: {e} ({why})");
            return ExitCode::from(129);
        }
    };
    match super::report_own::run(&own) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if super::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            say!("perfz report: {}", super::said(&e));
            ExitCode::from(1)
        }
    }
}

/// Whether the perf on PATH knows `perf report --latency` (6.15 and
/// newer); true where perf is missing (the own table answers then) or
/// says no version.
fn perf_has_latency() -> bool {
    let Ok(o) = Command::new("perf").arg("version").output() else {
        return true;
    };
    // "perf version 6.1.76", "perf version 7.3.4"
    let text = String::from_utf8_lossy(&o.stdout);
    let mut v = text.split_whitespace().nth(2).unwrap_or("").split('.');
    let mut num = || v.next().and_then(|n| n.parse::<u32>().ok());
    match (num(), num()) {
        (Some(major), Some(minor)) => (major, minor) >= (6, 15),
        _ => true,
    }
}

/// A child's exit status as a shell gives it (128 + the signal that ended it).
fn status_of(st: std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (st.code(), st.signal()) {
        (Some(c), _) => c as u8,
        (None, Some(s)) => (128 + s) as u8,
        (None, None) => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_words(w: &[&str]) -> Line {
        read(&w.iter().map(OsString::from).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn perf_gets_every_word_but_perfzs_own() {
        let l = read_words(&["--rows", "3", "-i", "f", "--sort=sym", "-g", "--own"]);
        assert_eq!(l.for_perf, ["-i", "f", "--sort=sym", "-g"]);
        assert!(l.own_only);
        assert!(l.own.unwrap_err().starts_with("-g: "));
        // perfz's habit: a lone file is the input.
        let l = read_words(&["Cargo.toml", "--no-children", "--percent-limit=2"]);
        assert_eq!(
            l.for_perf,
            ["-i", "Cargo.toml", "--no-children", "--percent-limit=2"]
        );
        let own = l.own.unwrap();
        assert_eq!(
            (own.input.to_str(), own.children),
            (Some("Cargo.toml"), false)
        );
        assert_eq!(own.percent_limit, 2.0);
        assert!(read(&[OsString::from("-i")]).is_err(), "-i needs a value");
    }
}
