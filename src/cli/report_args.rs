//! `perfz report`'s words read as perf report's parse-options reads them:
//! perf 7.3's usage text (`perf_report_usage.txt`, verbatim from `perf
//! report -h`) says which options take a value, so an option's value (`-k
//! FILE`, `--comms burner`) is never taken for anything else. Unlike perf
//! record's, perf report's options go on after a word that is not one
//! (that word is perf's symbol filter, or perfz's input). perfz's own
//! options (`--own`, `--rows N`) are read beside perf's.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

use super::perf_usage::{long_or_negated, options_in, OptionSpec, Takes};

/// perf 7.3's `perf report -h` option lines, verbatim.
const USAGE: &str = include_str!("perf_report_usage.txt");

/// perf report's options that take the next word as their value only
/// where it does not start with `-` (`OPT_CALLBACK_DEFAULT` in
/// builtin-report.c: `perf report -g --stdio` is `-g` alone).
const LAST_ARG_DEFAULT: &[&str] = &["call-graph", "stdio-color"];

/// One option as read: its long name (or `-x` where it has none), whether
/// negated (`--no-children`), and its value.
#[derive(Debug, PartialEq)]
pub(super) struct Opt {
    pub(super) name: String,
    /// How it was written (`-g`, `--no-ch`): for messages.
    pub(super) said: String,
    pub(super) negated: bool,
    pub(super) value: Option<OsString>,
}

/// One or two words of the command line and what they are.
#[derive(Debug, PartialEq)]
pub(super) enum Read {
    /// Options (more than one for `-nv`) and the words they were given in.
    Options(Vec<Opt>, Vec<OsString>),
    /// A word that is no option: perf's symbol filter (perfz's input where
    /// it names a file or a directory). `after_dashes`: after `--`.
    Plain(OsString, bool),
    /// `--`, which ends the options.
    Dashes,
    /// What perf report refuses (an unknown option, one without its
    /// value): the word as given, and why, in perf's words.
    Bad(OsString, String),
}

/// perf report's options, and perfz's own (`--own`, `--rows N`).
fn known() -> Vec<OptionSpec> {
    let mut specs: Vec<OptionSpec> = options_in(USAGE).into_iter().map(|e| e.spec).collect();
    for (long, takes) in [("own", Takes::Nothing), ("rows", Takes::Value)] {
        specs.push(OptionSpec {
            short: None,
            long: Some(long.into()),
            takes,
        });
    }
    specs
}

/// Reads `words` (after `report`) as perf report reads its command line.
pub(super) fn read(words: &[OsString]) -> Vec<Read> {
    let known = known();
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        i += 1;
        let bytes = w.as_bytes();
        if bytes == b"--" {
            out.push(Read::Dashes);
            out.extend(words[i..].iter().map(|w| Read::Plain(w.clone(), true)));
            break;
        }
        let next = words.get(i);
        let read = if let Some(body) = bytes.strip_prefix(b"--") {
            long(body, next, &known)
        } else if bytes.len() > 1 && bytes[0] == b'-' {
            short(&bytes[1..], next, &known)
        } else {
            Ok((Vec::new(), false))
        };
        match read {
            Ok((opts, _)) if opts.is_empty() => out.push(Read::Plain(w.clone(), false)),
            Ok((opts, took_next)) => {
                let mut said = vec![w.clone()];
                if took_next {
                    said.extend(next.cloned());
                    i += 1;
                }
                out.push(Read::Options(opts, said));
            }
            Err(why) => out.push(Read::Bad(w.clone(), why)),
        }
    }
    out
}

/// What an option reads: its options, and whether it took the next word.
type Taken = Result<(Vec<Opt>, bool), String>;

/// The value of an option that takes one (`takes`), none attached: the
/// next word, perf's way.
fn next_value(
    name: &str,
    takes: Takes,
    next: Option<&OsString>,
) -> Result<Option<OsString>, String> {
    let defaults = LAST_ARG_DEFAULT.contains(&name);
    match (takes, next) {
        (Takes::Nothing | Takes::Optional, _) => Ok(None),
        (Takes::Value, Some(n)) if defaults && n.as_bytes().starts_with(b"-") => Ok(None),
        (Takes::Value, Some(n)) => Ok(Some(n.clone())),
        (Takes::Value, None) if defaults => Ok(None),
        (Takes::Value, None) => Err(format!("option `{name}' requires a value")),
    }
}

/// `--NAME[=VALUE]` (`body`: after the dashes).
fn long(body: &[u8], next: Option<&OsString>, known: &[OptionSpec]) -> Taken {
    let (name, attached) = match body.iter().position(|&b| b == b'=') {
        Some(at) => (&body[..at], Some(&body[at + 1..])),
        None => (body, None),
    };
    let said = String::from_utf8_lossy(name).into_owned();
    let (spec, negated) = long_or_negated(&said, known).map_err(|e| e.to_string())?;
    let name = spec.long.clone().unwrap_or_default();
    let said = format!("--{said}");
    let attached = attached.map(|v| OsString::from(std::ffi::OsStr::from_bytes(v)));
    let value = match (negated, spec.takes, attached) {
        (true, _, Some(_)) | (false, Takes::Nothing, Some(_)) => {
            return Err(format!("option `{name}' takes no value"))
        }
        (true, _, None) => None,
        (false, _, Some(v)) => Some(v),
        (false, takes, None) => {
            let v = next_value(&name, takes, next)?;
            let took = v.is_some();
            let opt = Opt {
                name,
                said,
                negated,
                value: v,
            };
            return Ok((vec![opt], took));
        }
    };
    Ok((
        vec![Opt {
            name,
            said,
            negated,
            value,
        }],
        false,
    ))
}

/// `-abc` (`cluster`: after the dash): switches, the last of which may take
/// the rest of the word or the next word as its value.
fn short(cluster: &[u8], next: Option<&OsString>, known: &[OptionSpec]) -> Taken {
    let mut opts = Vec::new();
    for (j, &b) in cluster.iter().enumerate() {
        let c = char::from(b);
        let spec = known
            .iter()
            .find(|o| o.short == Some(c) && b.is_ascii())
            .ok_or_else(|| format!("unknown switch `{c}'"))?;
        let name = spec.long.clone().unwrap_or_else(|| format!("-{c}"));
        let said = format!("-{c}");
        let rest = &cluster[j + 1..];
        if spec.takes == Takes::Nothing {
            opts.push(Opt {
                name,
                said,
                negated: false,
                value: None,
            });
            continue;
        }
        let attached =
            (!rest.is_empty()).then(|| OsString::from(std::ffi::OsStr::from_bytes(rest)));
        let (value, took) = match attached {
            Some(v) => (Some(v), false),
            None => {
                let v = next_value(&name, spec.takes, next)?;
                let took = v.is_some();
                (v, took)
            }
        };
        opts.push(Opt {
            name,
            said,
            negated: false,
            value,
        });
        return Ok((opts, took));
    }
    Ok((opts, false))
}

#[cfg(test)]
mod tests;
