//! perfz's own `perfz report` table, where perf is not installed (or with
//! `--own`), in `perf report --stdio`'s layout: the rows of
//! [`crate::export::report_table`] by the sort keys, their overhead (and,
//! with `--latency`, latency) shares as perf's columns show them.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;

use crate::export::write::report::{ReportRow, ReportTable, SortKey};
use crate::export::ExportOptions;

/// What perfz's own table shows.
#[derive(Debug, PartialEq)]
pub(super) struct Own {
    pub(super) input: PathBuf,
    pub(super) keys: Vec<SortKey>,
    pub(super) children: bool,
    /// `--latency`: latency columns beside the overhead ones.
    pub(super) latency: bool,
    pub(super) percent_limit: f64,
    pub(super) rows: usize,
    /// `--kallsyms`: the kernel's symbols from this file.
    pub(super) kallsyms: Option<PathBuf>,
}

impl Default for Own {
    fn default() -> Self {
        Own {
            input: PathBuf::from("perf.data"),
            keys: vec![SortKey::Comm, SortKey::Dso, SortKey::Sym],
            children: true,
            latency: false,
            percent_limit: 0.0,
            rows: 25,
            kallsyms: None,
        }
    }
}

/// One row as shown: its key, and its shares (percent) in column order.
struct Shown<'a> {
    row: &'a ReportRow,
    shares: Vec<f64>,
}

/// The table of `o.input`, its frames with their modules; weighed for a
/// latency profile with `latency`. Also the samples and the event.
fn counted(o: &Own, latency: bool) -> anyhow::Result<(ReportTable, u64, Option<String>)> {
    let options = ExportOptions {
        latency,
        kallsyms: o.kallsyms.clone(),
        ..Default::default()
    };
    let (table, done) = crate::export::report_table(
        std::slice::from_ref(&o.input),
        &options,
        &o.keys,
        !o.children,
    )
    .with_context(|| format!("reading {}", o.input.display()))?;
    Ok((table, done.samples, done.event))
}

/// The columns' headings, as perf's: with `--latency` each overhead column
/// has a latency one before it.
fn headings(o: &Own) -> Vec<&'static str> {
    match (o.children, o.latency) {
        (true, false) => vec!["Children", "Self"],
        (false, false) => vec!["Overhead"],
        (true, true) => vec!["Latency", "Children", "Latency", "Self"],
        (false, true) => vec!["Latency", "Overhead"],
    }
}

/// perfz's own table of `o`, on standard output.
pub(super) fn run(o: &Own) -> anyhow::Result<()> {
    let ((rows, total), samples, event) = counted(o, false)?;
    let latency = if o.latency {
        Some(counted(o, true)?.0)
    } else {
        None
    };
    let share = |n: u64, total: u64| 100.0 * n as f64 / total.max(1) as f64;
    let mut shown: Vec<Shown> = rows
        .iter()
        .map(|r| {
            let (c, s) = (share(r.children, total), share(r.self_, total));
            let mut shares = if o.children { vec![c, s] } else { vec![s] };
            if let Some((lat, lat_total)) = &latency {
                let l = lat.iter().find(|l| l.key == r.key);
                let (lc, ls) = l.map_or((0, 0), |l| (l.children, l.self_));
                let (lc, ls) = (share(lc, *lat_total), share(ls, *lat_total));
                shares = if o.children {
                    vec![lc, c, ls, s]
                } else {
                    vec![ls, s]
                };
            }
            Shown { row: r, shares }
        })
        .collect();
    // perf ranks by the first column (latency first with --latency).
    shown.sort_by(|a, b| b.shares[0].total_cmp(&a.shares[0]));
    let all = shown.len();
    shown.retain(|s| s.shares[0] >= o.percent_limit);
    shown.truncate(o.rows);
    let mut out = std::io::stdout().lock();
    let event = event.as_deref().unwrap_or("unknown");
    writeln!(
        out,
        "# {}\n#\n# Samples: {samples} of event '{event}'\n#",
        o.input.display()
    )?;
    write_rows(&mut out, o, &shown)?;
    if all > shown.len() && o.percent_limit == 0.0 {
        writeln!(out, "# ... {} more rows (--rows N)", all - shown.len())?;
    }
    Ok(())
}

/// The heading line and the rows (control characters in names shown
/// escaped, `\n`: each row one line).
fn write_rows(out: &mut dyn Write, o: &Own, shown: &[Shown]) -> std::io::Result<()> {
    let keys: Vec<Vec<String>> = shown
        .iter()
        .map(|s| s.row.key.iter().map(|v| escaped(v)).collect())
        .collect();
    let widths: Vec<usize> = o
        .keys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let w = keys
                .iter()
                .map(|key| key[i].chars().count())
                .max()
                .unwrap_or(0);
            w.max(k.heading().len())
        })
        .collect();
    let mut head = "#".to_string();
    for h in headings(o) {
        head += &format!(" {h:>8} ");
    }
    for (k, w) in o.keys.iter().zip(&widths) {
        head += &format!(" {}", padded(k.heading(), *w));
    }
    writeln!(out, "{}\n#", head.trim_end())?;
    for (s, key) in shown.iter().zip(&keys) {
        let mut l: String = s.shares.iter().map(|v| format!(" {v:>8.2}%")).collect();
        for ((k, w), v) in o.keys.iter().zip(&widths).zip(key) {
            match k {
                SortKey::Sym => {
                    let mode = if s.row.kernel { 'k' } else { '.' };
                    l += &format!("  [{mode}] {v}");
                }
                _ => l += &format!("  {}", padded(v, *w)),
            }
        }
        writeln!(out, "{}", l.trim_end())?;
    }
    Ok(())
}

/// `text` padded with spaces to `width` chars, as `{:width$}` pads it; a
/// width past u16::MAX (a symbol's name can be that long) is none that
/// std's formatting takes: it panics.
fn padded(text: &str, width: usize) -> String {
    let pad = width.saturating_sub(text.chars().count());
    format!("{text}{}", " ".repeat(pad))
}

/// `name` with its control characters escaped (`\n`, `\t`, `\u{1b}`).
fn escaped(name: &str) -> String {
    name.chars()
        .map(|c| match c.is_control() {
            true => c.escape_default().to_string(),
            false => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::write::report::ReportRow;

    /// A name of 70 000 bytes (an ELF symbol's may be longer) in the
    /// table: the columns' width once panicked ('Formatting argument out
    /// of range').
    #[test]
    fn a_name_longer_than_a_format_width_is_shown_whole() {
        let name = "n".repeat(70_000);
        let row = ReportRow {
            key: vec!["comm".into(), "dso".into(), name.clone()],
            kernel: false,
            children: 1,
            self_: 1,
        };
        let shown = [Shown {
            row: &row,
            shares: vec![100.0, 100.0],
        }];
        let mut out = Vec::new();
        write_rows(&mut out, &Own::default(), &shown).unwrap();
        let text = String::from_utf8(out).unwrap();
        let line = text.lines().last().unwrap();
        assert!(
            line.starts_with("   100.00%   100.00%  comm"),
            "{line:.200}"
        );
        assert!(line.ends_with(&format!("  [.] {name}")), "{line:.200}");
    }
}
