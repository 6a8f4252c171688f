//! `perf record`'s command line as perf's parse-options reads it: perf
//! 7.3's usage text (`perf_record_usage.txt`, verbatim from `perf record
//! -h`) names every option and the value it takes; [`split`] reads argv the
//! way perf does (short options combine, `-F99` and `-F 99`, `--freq=99` and
//! `--freq 99`, optional values only attached, options end at the first
//! word that is not one or at `--`), so clap sees one spelling per option
//! and the command is never an option perfz does not know. perf's
//! negations (`--no-NAME` of option NAME, `--NAME` of an option named
//! `--no-NAME`) come out as one word, [`NEGATED`] then the option's name.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};

/// perf 7.3's `perf record -h` option lines, verbatim (the `--off-cpu`
/// line without its note on perf's BPF build).
const USAGE: &str = include_str!("perf_record_usage.txt");

/// Options of perf's usage that perfz refuses, with the one line saying why.
pub const REFUSED: &[(&str, &str)] = &[
    ("snapshot", "AUX area snapshots need an AUX tracing PMU (intel_pt, arm_spe, cs_etm) and perfz records no AUX area; --flight-recorder SIZE keeps the newest trace for a snapshot"),
    ("aux-sample", "AUX area samples need an AUX tracing PMU (intel_pt, arm_spe, cs_etm) and perfz records no AUX area"),
    ("affinity", "perfz's serial drain does not move between CPUs; --threads=cpu drains each CPU's rings on that CPU (perf's --affinity=cpu), --threads=numa on its node (--affinity=node)"),
    ("debuginfod", "perfz record fetches no debug info; perf report --debuginfod reads perfz's files by their build ids"),
    ("kcore", "perfz does not copy /proc/kcore; the recording's kernel build id and kallsyms name kernel frames"),
    ("overwrite", "perfz keeps the newest trace compressed instead of in overwritable rings: --flight-recorder SIZE (written on SIGUSR2, --control snapshot, or at the end)"),
    ("setup-filter", "BPF sample filters need perf's BPF skeletons; perfz loads no BPF"),
    ("tail-synthesize", "perfz writes the side band (tasks, maps) at the start, where readers need it; it has no overwrite rings to synthesize after"),
];

/// The first character of the word [`split`] gives for a negated option:
/// `!call-graph` for `--no-call-graph`, `!no-inherit` for `--inherit`.
pub const NEGATED: char = '!';

/// What an option takes after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Takes {
    /// Nothing (a switch).
    Nothing,
    /// A value: attached (`-F99`, `--freq=99`) or the next word.
    Value,
    /// A value only when attached (`-z3`, `--aio=2`); alone, the default.
    Optional,
}

/// One option of a command line: its spellings and what it takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionSpec {
    /// `-x`.
    pub short: Option<char>,
    /// `--name`.
    pub long: Option<String>,
    /// What follows it.
    pub takes: Takes,
}

/// One option of perf's usage text, with the lines perf prints for it.
#[derive(Clone, Debug)]
pub struct UsageEntry {
    /// Its spellings and value.
    pub spec: OptionSpec,
    /// Its lines in `perf record -h`, verbatim.
    pub lines: String,
}

/// perf 7.3's `perf record` options, in its usage's order.
pub fn perf_options() -> Vec<UsageEntry> {
    options_in(USAGE)
}

/// The options of a perf usage text (`perf COMMAND -h`'s option lines),
/// in its order.
pub fn options_in(usage: &str) -> Vec<UsageEntry> {
    let mut out: Vec<UsageEntry> = Vec::new();
    for line in usage.lines() {
        let t = line.trim_start();
        let is_option =
            t.starts_with('-') && (line.starts_with("    -") || line.starts_with("        --"));
        if !is_option {
            if let Some(last) = out.last_mut() {
                last.lines.push('\n');
                last.lines.push_str(line);
            }
            continue;
        }
        let head = t.split("  ").next().unwrap_or(t);
        let mut short = None;
        let mut rest = head;
        if let Some(s) = head.strip_prefix('-').filter(|s| !s.starts_with('-')) {
            short = s.chars().next();
            rest = s.get(1..).unwrap_or("").trim_start_matches(", ");
        }
        let (long, takes) = match rest.strip_prefix("--") {
            Some(l) => {
                let name_end = l.find(['[', ' ']).unwrap_or(l.len());
                (Some(l[..name_end].to_string()), takes_of(&l[name_end..]))
            }
            None => (None, takes_of(rest)),
        };
        out.push(UsageEntry {
            spec: OptionSpec { short, long, takes },
            lines: line.to_string(),
        });
    }
    out
}

fn takes_of(arg: &str) -> Takes {
    if arg.starts_with("[=") || arg.starts_with("[<") {
        Takes::Optional
    } else if arg.trim_start().starts_with('<') {
        Takes::Value
    } else {
        Takes::Nothing
    }
}

/// Why perfz refuses perf's option `long`, if it does.
pub fn refusal(long: &str) -> Option<&'static str> {
    REFUSED
        .iter()
        .find(|(l, _)| *l == long)
        .map(|(_, why)| *why)
}

/// A command line perf's parse-options would refuse, in perf's words.
#[derive(Debug, PartialEq, Eq)]
pub enum BadOption {
    /// `--name` that no option has (nor as the start of one).
    UnknownLong(String),
    /// `-x` that no option has.
    UnknownShort(char),
    /// `--name` that more than one option starts with.
    Ambiguous(String, Vec<String>),
    /// An option that needs a value at the end of the line.
    NeedsValue(String),
    /// `--switch=value` for a switch.
    TakesNoValue(String),
}

impl std::fmt::Display for BadOption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadOption::UnknownLong(n) => write!(f, "unknown option `{n}'"),
            BadOption::UnknownShort(c) => write!(f, "unknown switch `{c}'"),
            BadOption::Ambiguous(n, all) => {
                write!(
                    f,
                    "Ambiguous option: {n} (could be --{})",
                    all.join(" or --")
                )
            }
            BadOption::NeedsValue(n) => write!(f, "option `{n}' requires a value"),
            BadOption::TakesNoValue(n) => write!(f, "option `{n}' takes no value"),
        }
    }
}

/// A command line read as perf reads it: each option once as
/// `--long[=value]` (or `-x[value]` where it has no long name), then the
/// command. Words are bytes, as perf passes them: a value or a command's
/// argument need not be UTF-8 (an option's name must be).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Split {
    /// The options, one word each.
    pub options: Vec<OsString>,
    /// The command and its arguments (after the options, or after `--`).
    pub command: Vec<OsString>,
}

/// Reads `words` (without the program and subcommand) as perf's
/// parse-options reads `perf record`'s: options until `--` or the first word
/// that is not one; a long option may be abbreviated to a prefix only it has.
pub fn split(words: &[OsString], known: &[OptionSpec]) -> Result<Split, BadOption> {
    let mut out = Split::default();
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_bytes();
        i += 1;
        if w == b"--" {
            out.command = words[i..].to_vec();
            return Ok(out);
        }
        if let Some(body) = w.strip_prefix(b"--") {
            let (name, attached) = match body.iter().position(|&b| b == b'=') {
                Some(at) => (&body[..at], Some(&body[at + 1..])),
                None => (body, None),
            };
            let name = String::from_utf8_lossy(name);
            let (spec, negated) = long_or_negated(&name, known)?;
            let long = spec.long.clone().unwrap_or_default();
            if negated {
                // perf: an option's negation takes no value.
                if attached.is_some() {
                    return Err(BadOption::TakesNoValue(name.into_owned()));
                }
                out.options.push(format!("{NEGATED}{long}").into());
                continue;
            }
            let value = match (spec.takes, attached) {
                (Takes::Nothing, Some(_)) => return Err(BadOption::TakesNoValue(long)),
                (Takes::Nothing, None) | (Takes::Optional, None) => None,
                (_, Some(v)) => Some(v),
                (Takes::Value, None) => {
                    let v = words.get(i).ok_or(BadOption::NeedsValue(long.clone()))?;
                    i += 1;
                    Some(v.as_bytes())
                }
            };
            out.options.push(spelled(spec, value));
        } else if w.len() > 1 && w[0] == b'-' {
            i = short_cluster(words, i, &w[1..], known, &mut out.options)?;
        } else {
            out.command = words[i - 1..].to_vec();
            return Ok(out);
        }
    }
    Ok(out)
}

/// Reads one word of short options (`cluster`: the bytes after its `-`)
/// into `options`; `i`: the index of the word after it, returned past the
/// value it took, if any.
fn short_cluster(
    words: &[OsString],
    mut i: usize,
    cluster: &[u8],
    known: &[OptionSpec],
    options: &mut Vec<OsString>,
) -> Result<usize, BadOption> {
    let mut j = 0;
    while j < cluster.len() {
        // perf's short options are ASCII; any other byte names none.
        let c = char::from(cluster[j]);
        let spec = known
            .iter()
            .find(|o| o.short == Some(c) && c.is_ascii())
            .ok_or_else(|| {
                let lossy = String::from_utf8_lossy(&cluster[j..]);
                BadOption::UnknownShort(lossy.chars().next().unwrap_or(c))
            })?;
        j += 1;
        let rest = &cluster[j..];
        let value = match spec.takes {
            Takes::Nothing => None,
            Takes::Optional => Some(rest).filter(|r| !r.is_empty()),
            Takes::Value if !rest.is_empty() => Some(rest),
            Takes::Value => {
                let v = words.get(i).ok_or(BadOption::NeedsValue(c.to_string()))?;
                i += 1;
                Some(v.as_bytes())
            }
        };
        if spec.takes != Takes::Nothing {
            j = cluster.len();
        }
        options.push(spelled(spec, value));
    }
    Ok(i)
}

/// The option `--name` stands for, and whether negated, as perf's
/// parse-options reads it: an option of that name; `no-X` of option X;
/// `X` of option `no-X`; else the one option it begins, or the negation of
/// the one option what follows `no-` begins.
pub fn long_or_negated<'a>(
    name: &str,
    known: &'a [OptionSpec],
) -> Result<(&'a OptionSpec, bool), BadOption> {
    let exact = |n: &str| known.iter().find(|o| o.long.as_deref() == Some(n));
    if let Some(o) = exact(name) {
        return Ok((o, false));
    }
    if let Some(o) = name.strip_prefix("no-").and_then(exact) {
        return Ok((o, true));
    }
    if let Some(o) = exact(&format!("no-{name}")) {
        return Ok((o, true));
    }
    // Abbreviated: of an option, of one named `no-X` (negated), or after
    // `no-` of an option (negated).
    let begins = |o: &OptionSpec, n: &str| {
        !n.is_empty() && o.long.as_deref().is_some_and(|l| l.starts_with(n))
    };
    let mut found: Vec<(&OptionSpec, bool)> = Vec::new();
    for o in known {
        let l = o.long.as_deref().unwrap_or("");
        let by_name = begins(o, name);
        let of_no = l
            .strip_prefix("no-")
            .is_some_and(|rest| rest.starts_with(name));
        let after_no = name.strip_prefix("no-").is_some_and(|rest| begins(o, rest));
        if by_name {
            found.push((o, false));
        } else if of_no || after_no {
            found.push((o, true));
        }
    }
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(BadOption::UnknownLong(name.to_string())),
        many => Err(BadOption::Ambiguous(
            name.to_string(),
            many.iter().filter_map(|(o, _)| o.long.clone()).collect(),
        )),
    }
}

/// One option occurrence in the one spelling clap is given.
fn spelled(spec: &OptionSpec, value: Option<&[u8]>) -> OsString {
    let mut w: Vec<u8> = match (&spec.long, spec.short) {
        (Some(l), _) => format!("--{l}").into_bytes(),
        (None, Some(c)) => format!("-{c}").into_bytes(),
        (None, None) => return OsString::new(),
    };
    if let Some(v) = value {
        if spec.long.is_some() {
            w.push(b'=');
        }
        w.extend_from_slice(v);
    }
    OsString::from_vec(w)
}

/// One usage line in perf's layout (parse-options' `print_option_help`):
/// spellings, padded to 24 columns (or alone on a line), then the help.
pub fn usage_line(spec: &OptionSpec, value_name: &str, help: &str) -> String {
    let mut head = String::from("    ");
    match spec.short {
        Some(c) => head += &format!("-{c}"),
        None => head += "    ",
    }
    if let Some(l) = &spec.long {
        if spec.short.is_some() {
            head += ", ";
        }
        head += &format!("--{l}");
    }
    match spec.takes {
        Takes::Nothing => {}
        Takes::Value => head += &format!(" <{value_name}>"),
        Takes::Optional => head += &format!("[=<{value_name}>]"),
    }
    let help = help.replace('\n', &format!("\n{}", " ".repeat(26)));
    if head.len() <= 24 {
        format!("{head:<24}  {help}")
    } else {
        format!("{head}\n{:26}{help}", "")
    }
}

#[cfg(test)]
mod tests;
