//! `-e` as perf spells it: comma lists, `{a,b}:mods` groups, symbolic and
//! generic cache events, raw `rNNNN`, tracepoints `sys:name` (globs; a
//! probe is a tracepoint), `pmu/term=value,.../` from sysfs, per-event
//! terms on any event (`cpu-clock/period=10000/`,
//! `sched:sched_switch/max-stack=3/`; terms.rs), and the modifiers `:u :k
//! :h :G :H :p... :P :S :D`.
//!
//! Details as perf has them: top-level commas only (not inside `{...}` or
//! `pmu/.../`); a generic cache event is type 3 with config
//! `cache | op << 8 | result << 16` (cache.rs); raw `rNNNN` is type 4;
//! tracepoint ids come from tracefs (tracefs.rs, mounted as perf does
//! where nothing is), and a tracepoint samples at period 1 unless -F/-c
//! says otherwise; a PMU's type, `format/` bit ranges and `events/`
//! aliases come from sysfs (pmu.rs). The modifiers follow perf's
//! get_event_modifier: the first of u/k/h excludes the other two, G/H the
//! same, each p adds one to precise_ip.

use super::cache::cache_event;
use super::error::OptionError;
use super::events::{EventSpec, Group, Sampling};
use super::pmu::Pmu;
use super::terms::{event_term, number, size_hint, syntax, terms_of, tracepoint_terms};
use super::tracefs;
use crate::format::attr::{TYPE_HW_CACHE, TYPE_RAW, TYPE_TRACEPOINT};

impl EventSpec {
    /// One event (no groups, no lists): see [`parse_events`].
    pub fn parse(s: &str) -> Result<Self, OptionError> {
        let mut v = parse_events(s, &mut 0)?;
        if v.len() != 1 || v[0].group.is_some() {
            return Err(OptionError::EventSyntax {
                event: s.into(),
                why: "one event expected here".into(),
            });
        }
        Ok(v.remove(0))
    }
}

/// Splits at top-level commas: not inside `{...}` nor `pmu/.../`.
fn split_top(s: &str) -> Result<Vec<&str>, OptionError> {
    let (mut depth, mut slash, mut start) = (0i32, false, 0);
    let mut out = Vec::new();
    for (i, c) in s.char_indices() {
        match c {
            '{' if !slash => depth += 1,
            '}' if !slash => {
                depth -= 1;
                if depth < 0 {
                    return Err(syntax(s, "a `}` without its `{`"));
                }
            }
            '/' => slash = !slash,
            ',' if depth == 0 && !slash => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(syntax(s, "a `{` without its `}`"));
    }
    if slash {
        return Err(syntax(s, "a `pmu/terms/` without its closing `/`"));
    }
    out.push(&s[start..]);
    Ok(out)
}

/// Parses a `-e` value into events; groups get ids from `next_group`.
pub fn parse_events(s: &str, next_group: &mut u32) -> Result<Vec<EventSpec>, OptionError> {
    let mut out = Vec::new();
    for item in split_top(s)? {
        let item = item.trim();
        if item.is_empty() {
            return Err(syntax(s, "an empty event in the list"));
        }
        if let Some(rest) = item.strip_prefix('{') {
            let close = rest
                .rfind('}')
                .ok_or_else(|| syntax(item, "a `{` without its `}`"))?;
            let (inner, mods) = (&rest[..close], &rest[close + 1..]);
            let mods = match mods {
                "" => "",
                m => m
                    .strip_prefix(':')
                    .ok_or_else(|| syntax(item, "group modifiers follow a `:`"))?,
            };
            let id = *next_group;
            *next_group += 1;
            let mut members = Vec::new();
            for m in split_top(inner)? {
                if m.trim_start().starts_with('{') {
                    return Err(syntax(item, "groups do not nest"));
                }
                // A member may be a tracepoint (a glob gives several), as
                // perf takes `{cpu-clock,sched:sched_switch}`.
                members.extend(parse_item(m.trim())?);
            }
            let sample_read = mods.contains('S');
            for (i, mut e) in members.into_iter().enumerate() {
                apply_modifiers(&mut e, &mods.replace('S', ""), item)?;
                e.group = Some(Group {
                    id,
                    leader: i == 0,
                    sample_read,
                });
                out.push(e);
            }
        } else {
            out.extend(parse_item(item)?);
        }
    }
    Ok(out)
}

/// One list item that is not a group: a tracepoint glob may give several.
fn parse_item(item: &str) -> Result<Vec<EventSpec>, OptionError> {
    let (base, terms, mods) = split_terms(item)?;
    if let Some((sys, rest)) = base.split_once(':') {
        let (name, mods) = match terms {
            Some(_) => (rest, mods),
            None => rest.split_once(':').unwrap_or((rest, "")),
        };
        if EventSpec::symbolic(sys).is_none() && !sys.is_empty() {
            return tracepoints(item, (sys, name), terms, mods);
        }
    }
    Ok(vec![parse_one(item)?])
}

/// `base/terms/[:mods]` as (base, terms, mods); an item without terms
/// whole, with no terms or modifiers.
fn split_terms(item: &str) -> Result<(&str, Option<&str>, &str), OptionError> {
    let Some((base, rest)) = item.split_once('/') else {
        return Ok((item, None, ""));
    };
    let close = rest
        .rfind('/')
        .ok_or_else(|| syntax(item, "a `pmu/terms/` without its closing `/`"))?;
    let mods = match &rest[close + 1..] {
        "" => "",
        m => m
            .strip_prefix(':')
            .ok_or_else(|| syntax(item, "modifiers follow a `:`"))?,
    };
    Ok((base, Some(&rest[..close]), mods))
}

fn tracepoints(
    item: &str,
    (sys, name): (&str, &str),
    terms: Option<&str>,
    mods: &str,
) -> Result<Vec<EventSpec>, OptionError> {
    let root = tracefs::root().map_err(|e| syntax(item, e.to_string()))?;
    if !tracefs::is_subsystem(&root, sys) {
        return Err(OptionError::UnknownEvent {
            name: item.into(),
            known: format!(
                "{} (or a tracepoint: {})",
                EventSpec::symbolic_names().join(", "),
                tracefs::suggestions(&root, sys)
            ),
        });
    }
    let found = tracefs::resolve(&root, sys, name);
    if found.is_empty() {
        return Err(OptionError::UnknownEvent {
            name: item.into(),
            known: tracefs::suggestions(&root, sys),
        });
    }
    found
        .into_iter()
        .map(|tp| {
            let mut e = EventSpec::new(&format!("{}:{}", tp.sys, tp.name), TYPE_TRACEPOINT, tp.id);
            e.sampling = Some(Sampling::Period(1));
            e.sampling_is_default = true;
            e.tracepoint = Some(tp);
            if let Some(t) = terms {
                tracepoint_terms(&mut e, t, item)?;
            }
            apply_modifiers(&mut e, mods, item)?;
            if !mods.is_empty() {
                e.name = format!("{}:{mods}", e.name);
            }
            Ok(e)
        })
        .collect()
}

/// `name[:mods]` or `name/terms/[:mods]`.
fn parse_one(item: &str) -> Result<EventSpec, OptionError> {
    let (base, terms, mods) = match split_terms(item)? {
        (_, None, _) => item
            .split_once(':')
            .map_or((item, None, ""), |(b, m)| (b, None, m)),
        split => split,
    };
    let mut e = if let Some((t, c)) = EventSpec::symbolic(base) {
        EventSpec::new(base, t, c)
    } else if let Some(c) = cache_event(base) {
        EventSpec::new(base, TYPE_HW_CACHE, c)
    } else if let Some(c) = raw_event(base) {
        EventSpec::new(base, TYPE_RAW, c)
    } else if let (Some(pmu), Some(_)) = (Pmu::load(base), terms) {
        let mut e = EventSpec::new(base, pmu.type_, 0);
        e.name = item.split(':').next().unwrap_or(item).to_string();
        pmu_terms(&mut e, &pmu, terms.unwrap_or(""), item)?;
        apply_modifiers(&mut e, mods, item)?;
        if !mods.is_empty() {
            e.name = format!("{}:{mods}", e.name);
        }
        return Ok(e);
    } else {
        return Err(unknown(base));
    };
    if let Some(t) = terms {
        generic_terms(&mut e, t, item)?;
    }
    apply_modifiers(&mut e, mods, item)?;
    e.name = item.to_string();
    Ok(e)
}

fn unknown(name: &str) -> OptionError {
    let pmus: Vec<String> = super::pmu::mappings()
        .into_iter()
        .map(|(_, n)| format!("{n}/.../"))
        .collect();
    OptionError::UnknownEvent {
        name: name.into(),
        known: format!(
            "{}; cache events like L1-dcache-load-misses; raw rNNNN; PMUs {}; tracepoints sys:name (see `perf list`)",
            EventSpec::symbolic_names().join(", "),
            pmus.join(", ")
        ),
    }
}

/// `rNNNN`: a raw PMU config in hex.
fn raw_event(s: &str) -> Option<u64> {
    let hex = s.strip_prefix('r')?;
    (!hex.is_empty() && hex.len() <= 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| u64::from_str_radix(hex, 16).ok())
        .flatten()
}

fn generic_terms(e: &mut EventSpec, t: &str, item: &str) -> Result<(), OptionError> {
    for (k, v) in terms_of(t) {
        if !event_term(e, k, v, item)? {
            return Err(syntax(
                item,
                format!(
                    "unknown term `{k}`; this event takes config, config1, config2, period, \
                     freq, name, call-graph, stack-size, max-stack, inherit, no-inherit, \
                     ratio-to-prev, nr, percore, metric-id{}",
                    size_hint(k)
                ),
            ));
        }
    }
    Ok(())
}

/// `pmu/terms/`: format terms from sysfs, event aliases, generic terms.
fn pmu_terms(e: &mut EventSpec, pmu: &Pmu, t: &str, item: &str) -> Result<(), OptionError> {
    let mut words = [0u64; 3];
    let apply = |k: &str,
                 v: Option<&str>,
                 words: &mut [u64; 3],
                 e: &mut EventSpec|
     -> Result<(), OptionError> {
        if let Some(f) = pmu.formats.get(k) {
            let n = match v {
                None => 1,
                Some(v) => {
                    number(v).ok_or_else(|| syntax(item, format!("`{k}` takes a number")))?
                }
            };
            if !f.apply(n, words) {
                return Err(syntax(item, format!("{n:#x} does not fit `{k}`")));
            }
            return Ok(());
        }
        if event_term(e, k, v, item)? {
            return Ok(());
        }
        Err(syntax(
            item,
            format!(
                "{} has no term or event `{k}`; its terms: {}; its events: {}",
                pmu.name,
                pmu.formats.keys().cloned().collect::<Vec<_>>().join(", "),
                pmu.events.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        ))
    };
    for (k, v) in terms_of(t) {
        match (pmu.events.get(k), v) {
            (Some(alias), None) => {
                for (ak, av) in terms_of(alias) {
                    apply(ak, av, &mut words, e)?;
                }
            }
            _ => apply(k, v, &mut words, e)?,
        }
    }
    e.config |= words[0];
    e.config1 |= words[1];
    e.config2 |= words[2];
    Ok(())
}

/// perf's modifiers (parse-events.c, get_event_modifier).
fn apply_modifiers(e: &mut EventSpec, mods: &str, item: &str) -> Result<(), OptionError> {
    // As perf: modifiers add to what an event's own modifiers excluded
    // (a group's `:k` on `cpu-clock:u` records both).
    let mut any_ukh = e.exclude_user || e.exclude_kernel || e.exclude_hv;
    let mut any_gh = false;
    let (mut eu, mut ek, mut eh) = (e.exclude_user, e.exclude_kernel, e.exclude_hv);
    let (mut eg, mut ehost) = (e.exclude_guest, e.exclude_host);
    for c in mods.chars() {
        match c {
            'u' | 'k' | 'h' => {
                if !any_ukh {
                    (eu, ek, eh, any_ukh) = (true, true, true, true);
                }
                match c {
                    'u' => eu = false,
                    'k' => ek = false,
                    _ => eh = false,
                }
            }
            'G' | 'H' => {
                if !any_gh {
                    (eg, ehost, any_gh) = (true, true, true);
                }
                if c == 'G' {
                    eg = false;
                } else {
                    ehost = false;
                }
            }
            'p' => e.precise += 1,
            'P' => e.precise = 3,
            'D' => e.pinned = true,
            'S' => {
                return Err(syntax(
                    item,
                    ":S (leader sampling) belongs on a group: {a,b}:S",
                ))
            }
            _ => {
                return Err(OptionError::UnknownModifier {
                    event: item.into(),
                    modifier: c.to_string(),
                })
            }
        }
    }
    if e.precise > 3 {
        return Err(syntax(item, "at most :ppp (precise_ip 3)"));
    }
    (e.exclude_user, e.exclude_kernel, e.exclude_hv) = (eu, ek, eh);
    (e.exclude_guest, e.exclude_host) = (eg, ehost);
    Ok(())
}

#[cfg(test)]
mod tests;
