//! `perfz report`: perf report's command line. Where perf is installed
//! every word goes to `perf report` and its exit status is perfz's (a
//! lone file name is its `-i`, perfz's habit); where it is not (or with
//! `--own`), perfz's own table honours the common options (`-i`,
//! `--stdio`, `--sort comm,dso,sym`, `--children`, `--no-children`,
//! `--percent-limit`) and refuses the rest, naming them.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

use anyhow::Context;

use crate::export::report::{table, Row, SortKey};
use crate::export::{ExportFormat, ExportOptions};

/// For `perfz --help`: `perfz report` reads its words itself ([`main`]).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// perf report's options (`-i FILE`, `--stdio`, `--sort`, `--no-children`,
    /// `--percent-limit`, ...); `--own`: perfz's own table even where perf is
    /// installed; `--rows N`: the rows of that table (25).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub(super) words: Vec<OsString>,
}

/// What perfz's own table shows.
#[derive(Debug, PartialEq)]
struct Own {
    input: PathBuf,
    keys: Vec<SortKey>,
    children: bool,
    percent_limit: f64,
    rows: usize,
}

impl Default for Own {
    fn default() -> Self {
        Own {
            input: PathBuf::from("perf.data"),
            keys: vec![SortKey::Comm, SortKey::Dso, SortKey::Sym],
            children: true,
            percent_limit: 0.0,
            rows: 25,
        }
    }
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
            _ if !name.starts_with('-') && std::path::Path::new(w).is_file() => {
                // perfz's habit, `perfz report FILE` (perf would take the
                // word for a symbol filter).
                said.insert(0, "-i".into());
                Ok(Change::Input(w.into()))
            }
            _ => Err(format!(
                "{name}: perfz's own table honours -i, --stdio, --sort comm,dso,sym, --children, \
                 --no-children and --percent-limit; perf report has the rest (Debian, Ubuntu: \
                 apt-get install linux-perf)"
            )),
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

/// What one option changes in the own table.
enum Change {
    None,
    Input(PathBuf),
    Keys(Vec<SortKey>),
    Children(bool),
    PercentLimit(f64),
}

impl Change {
    fn apply(self, o: &mut Own) {
        match self {
            Change::None => {}
            Change::Input(p) => o.input = p,
            Change::Keys(k) => o.keys = k,
            Change::Children(c) => o.children = c,
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
    if !line.own_only {
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
    match run_own(&own) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if super::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            say!("perfz report: {}", super::said(&e));
            ExitCode::from(1)
        }
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

/// perfz's own table, in perf report --stdio's layout.
fn run_own(o: &Own) -> anyhow::Result<()> {
    let mut folded = Vec::new();
    let mut options = ExportOptions::default();
    options.fold.modules = true;
    options.fold.annotate_kernel = true;
    let done = crate::export::export(
        std::slice::from_ref(&o.input),
        ExportFormat::Folded,
        &options,
        &mut folded,
    )
    .with_context(|| format!("reading {}", o.input.display()))?;
    let lines: Vec<String> = String::from_utf8_lossy(&folded)
        .lines()
        .map(String::from)
        .collect();
    let (rows, total) = table(&lines, &o.keys, !o.children);
    let pct = |n: u64| 100.0 * n as f64 / total.max(1) as f64;
    let shown: Vec<&Row> = rows
        .iter()
        .filter(|r| pct(if o.children { r.children } else { r.self_ }) >= o.percent_limit)
        .take(o.rows)
        .collect();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "# {}\n#\n# Samples: {} of event '{}'\n#",
        o.input.display(),
        done.samples,
        done.event.as_deref().unwrap_or("unknown")
    )?;
    let widths: Vec<usize> = o
        .keys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let w = shown.iter().map(|r| r.key[i].len()).max().unwrap_or(0);
            w.max(k.heading().len())
        })
        .collect();
    let mut head = if o.children {
        "# Children      Self".to_string()
    } else {
        "# Overhead".to_string()
    };
    for (k, w) in o.keys.iter().zip(&widths) {
        head += &format!("  {:w$}", k.heading());
    }
    writeln!(out, "{}\n#", head.trim_end())?;
    for r in &shown {
        let mut l = if o.children {
            format!("{:>9.2}%  {:>7.2}%", pct(r.children), pct(r.self_))
        } else {
            format!("{:>9.2}%", pct(r.self_))
        };
        for (i, (k, w)) in o.keys.iter().zip(&widths).enumerate() {
            let v = &r.key[i];
            match k {
                SortKey::Sym => l += &format!("  [{}] {v}", if r.kernel { 'k' } else { '.' }),
                _ => l += &format!("  {v:w$}"),
            }
        }
        writeln!(out, "{}", l.trim_end())?;
    }
    if rows.len() > shown.len() && o.percent_limit == 0.0 {
        writeln!(
            out,
            "# ... {} more rows (--rows N)",
            rows.len() - shown.len()
        )?;
    }
    Ok(())
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
