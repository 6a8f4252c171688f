//! `perfz report`: perf report's command line, read as perf report reads
//! it (report_args.rs: an option's value is never taken for anything
//! else). Where perf is installed every word goes to `perf report` and its
//! exit status is perfz's (a word that is no option and names a file or a
//! directory is its `-i`, perfz's habit); where it is not (or with
//! `--own`), perfz's own table honours the common options (`-i`,
//! `--stdio`, `--sort comm,dso,sym`, `--children`, `--no-children`,
//! `--latency`, `--kallsyms`, `--percent-limit`) and refuses the rest,
//! naming them.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

use anyhow::Context;

use super::report_args::{self, Opt, Read};
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

/// Reads `words` (after `report`) as perf report does ([`report_args`]):
/// each goes to perf as given, but perfz's own options, and a word that
/// is no option and names a file or a directory (a `--threads`
/// recording), which goes as perf's `-i` for it.
fn read(words: &[OsString]) -> anyhow::Result<Line> {
    let mut line = Line {
        for_perf: Vec::new(),
        own: Ok(Own::default()),
        own_only: false,
    };
    // `--` and the words after it: after the options, `-i` included.
    let mut after = Vec::new();
    for r in report_args::read(words) {
        match r {
            Read::Dashes => after.push("--".into()),
            Read::Plain(w, _) if std::path::Path::new(&w).exists() => {
                // perfz's habit, `perfz report FILE` (perf would take the
                // word for a symbol filter).
                line.for_perf.extend(["-i".into(), w.clone()]);
                line.change(Ok(Change::Input(w.into())));
            }
            Read::Plain(w, dashes) => {
                let why = format!(
                    "{}: no file or directory of that name (perf report's symbol filter: \
                     not honoured by perfz's own table)",
                    w.to_string_lossy()
                );
                if dashes {
                    &mut after
                } else {
                    &mut line.for_perf
                }
                .push(w);
                line.change(Err(why));
            }
            Read::Bad(w, why) => {
                line.for_perf.push(w);
                line.change(Err(why));
            }
            Read::Options(opts, said) => line.options(opts, said)?,
        }
    }
    line.for_perf.extend(after);
    Ok(line)
}

impl Line {
    /// Options `opts`, given in the words `said`: perf's go to perf as
    /// said and change the own table; perfz's own (`--own`, `--rows N`)
    /// stay here.
    fn options(&mut self, opts: Vec<Opt>, said: Vec<OsString>) -> anyhow::Result<()> {
        let mut perfs = true;
        for o in opts {
            match o.name.as_str() {
                "own" => (perfs, self.own_only) = (false, true),
                "rows" => {
                    perfs = false;
                    let n = o.value.unwrap_or_default();
                    let n = n.to_string_lossy().parse();
                    let n = n.context("--rows: a number of rows")?;
                    if let Ok(own) = &mut self.own {
                        own.rows = n;
                    }
                }
                _ => self.change(own_change(&o)),
            }
        }
        if perfs {
            self.for_perf.extend(said);
        }
        Ok(())
    }

    /// Applies `change` to the own table, or notes the first option it
    /// cannot honour.
    fn change(&mut self, change: Result<Change, String>) {
        match (&mut self.own, change) {
            (Ok(o), Ok(change)) => change.apply(o),
            (Ok(_), Err(e)) => self.own = Err(e),
            (Err(_), _) => {}
        }
    }
}

/// What option `o` changes in the own table, or why the own table cannot
/// honour it.
fn own_change(o: &Opt) -> Result<Change, String> {
    let value = || o.value.clone().unwrap_or_default();
    let text = || value().to_string_lossy().into_owned();
    match (o.name.as_str(), o.negated) {
        ("input", false) => Ok(Change::Input(value().into())),
        ("sort", false) => SortKey::parse_list(&text())
            .map(Change::Keys)
            .map_err(|k| format!("--sort {k}: perfz's own table sorts by comm, dso and sym")),
        ("percent-limit", false) => text()
            .parse()
            .map(Change::PercentLimit)
            .map_err(|_| "--percent-limit: a percentage, e.g. 0.5".to_string()),
        ("kallsyms", false) => Ok(Change::Kallsyms(value().into())),
        ("stdio", false) => Ok(Change::None),
        ("children", negated) => Ok(Change::Children(!negated)),
        ("latency", false) => Ok(Change::Latency),
        _ => Err(format!(
            "{}: perfz's own table honours -i, --stdio, --sort comm,dso,sym, --children, \
             --no-children, --latency, --kallsyms and --percent-limit; perf report has the rest \
             (Debian, Ubuntu: apt-get install linux-perf)",
            o.said
        )),
    }
}

/// What one option changes in the own table.
enum Change {
    None,
    Input(PathBuf),
    Keys(Vec<SortKey>),
    Children(bool),
    Latency,
    PercentLimit(f64),
    Kallsyms(PathBuf),
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
            Change::Kallsyms(k) => o.kallsyms = Some(k),
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
        let l = read_words(&["-i"]);
        assert_eq!(l.for_perf, ["-i"], "perf says what -i lacks");
        assert!(l.own.unwrap_err().contains("requires a value"));
    }

    #[test]
    fn an_options_value_is_never_the_input() {
        // Cargo.toml is a file here: as a value it stays one.
        let l = read_words(&[
            "--kallsyms",
            "Cargo.toml",
            "-k",
            "Cargo.toml",
            "--comms",
            "src",
        ]);
        assert_eq!(
            l.for_perf,
            [
                "--kallsyms",
                "Cargo.toml",
                "-k",
                "Cargo.toml",
                "--comms",
                "src"
            ]
        );
        // A directory (a --threads recording) is the input as a file is,
        // and `-i` goes before `--`.
        let l = read_words(&["--stdio", "--", "src"]);
        assert_eq!(l.for_perf, ["--stdio", "-i", "src", "--"]);
        assert_eq!(l.own.unwrap().input.to_str(), Some("src"));
    }
}
