//! `-e` as perf spells it: comma lists, `{a,b}:mods` groups, symbolic and
//! generic cache events, raw `rNNNN`, tracepoints `sys:name` (globs),
//! `pmu/term=value,.../` from sysfs, per-event terms on any event
//! (`cpu-clock/period=10000/`), and the modifiers `:u :k :h :G :H :p... :P
//! :S :D`.

use super::error::OptionError;
use super::events::{EventSpec, Group, Sampling, TYPE_HW_CACHE, TYPE_RAW, TYPE_TRACEPOINT};
use super::pmu::Pmu;
use super::tracefs;

fn syntax(event: &str, why: impl Into<String>) -> OptionError {
    OptionError::EventSyntax {
        event: event.into(),
        why: why.into(),
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
    if !item.contains('/') {
        if let Some((sys, rest)) = item.split_once(':') {
            let (name, mods) = rest.split_once(':').unwrap_or((rest, ""));
            if EventSpec::symbolic(sys).is_none() && !sys.is_empty() {
                return tracepoints(item, sys, name, mods);
            }
        }
    }
    Ok(vec![parse_one(item)?])
}

fn tracepoints(
    item: &str,
    sys: &str,
    name: &str,
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
    let (base, terms, mods) = match item.split_once('/') {
        Some((base, rest)) => {
            let close = rest
                .rfind('/')
                .ok_or_else(|| syntax(item, "a `pmu/terms/` without its closing `/`"))?;
            let mods = &rest[close + 1..];
            let mods = match mods {
                "" => "",
                m => m
                    .strip_prefix(':')
                    .ok_or_else(|| syntax(item, "modifiers follow a `:`"))?,
            };
            (base, Some(&rest[..close]), mods)
        }
        None => match item.split_once(':') {
            Some((b, m)) => (b, None, m),
            None => (item, None, ""),
        },
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

/// perf's generic cache events: `<cache>-<op>[-<result>]`, e.g.
/// `L1-dcache-load-misses`, `LLC-loads`, `dTLB-store-misses`,
/// `branch-load-misses`: config = cache | op << 8 | result << 16.
fn cache_event(s: &str) -> Option<u64> {
    const CACHES: &[(&[&str], u64)] = &[
        (&["L1-dcache", "l1-d", "l1d", "L1-data"], 0),
        (&["L1-icache", "l1-i", "l1i", "L1-instruction"], 1),
        (&["LLC", "L2"], 2),
        (&["dTLB", "d-tlb", "Data-TLB"], 3),
        (&["iTLB", "i-tlb", "Instruction-TLB"], 4),
        (&["branch", "branches", "bpu", "btb", "bpc"], 5),
        (&["node"], 6),
    ];
    const OPS: &[(&[&str], u64)] = &[
        (&["load", "loads", "read"], 0),
        (&["store", "stores", "write"], 1),
        (
            &[
                "prefetch",
                "prefetches",
                "speculative-read",
                "speculative-load",
            ],
            2,
        ),
    ];
    const RESULTS: &[(&[&str], u64)] = &[
        (&["refs", "Reference", "ops", "access", "accesses"], 0),
        (&["misses", "miss"], 1),
    ];
    let find = |t: &[(&[&str], u64)], w: &str| {
        t.iter()
            .find(|(names, _)| names.iter().any(|n| n.eq_ignore_ascii_case(w)))
            .map(|&(_, v)| v)
    };
    let (cache, rest) = CACHES.iter().find_map(|(names, v)| {
        names.iter().find_map(|n| {
            let r = s.get(n.len()..)?;
            (s[..n.len()].eq_ignore_ascii_case(n) && r.starts_with('-')).then(|| (*v, &r[1..]))
        })
    })?;
    let (mut op, mut result) = (None, None);
    // Longest op names first ("speculative-read" holds a dash).
    let mut rest = rest;
    while !rest.is_empty() {
        let (word, tail) = OPS
            .iter()
            .chain(RESULTS)
            .flat_map(|(names, _)| names.iter())
            .filter(|n| {
                rest.len() >= n.len()
                    && rest[..n.len()].eq_ignore_ascii_case(n)
                    && (rest.len() == n.len() || rest.as_bytes()[n.len()] == b'-')
            })
            .max_by_key(|n| n.len())
            .map(|n| (&rest[..n.len()], rest[n.len()..].trim_start_matches('-')))?;
        if let Some(o) = find(OPS, word).filter(|_| op.is_none()) {
            op = Some(o);
        } else if let Some(r) = find(RESULTS, word).filter(|_| result.is_none()) {
            result = Some(r);
        } else {
            return None;
        }
        rest = tail;
    }
    (op.is_some() || result.is_some())
        .then(|| cache | op.unwrap_or(0) << 8 | result.unwrap_or(0) << 16)
}

fn number(v: &str) -> Option<u64> {
    match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

/// Terms every event takes: config*, period, freq, name.
fn generic_term(
    e: &mut EventSpec,
    k: &str,
    v: Option<&str>,
    item: &str,
) -> Result<bool, OptionError> {
    let num = || -> Result<u64, OptionError> {
        v.and_then(number)
            .ok_or_else(|| syntax(item, format!("`{k}` takes a number")))
    };
    match k {
        "config" => e.config = num()?,
        "config1" => e.config1 = num()?,
        "config2" => e.config2 = num()?,
        "period" => {
            e.sampling = Some(Sampling::Period(num()?));
            e.sampling_is_default = false;
        }
        "freq" => {
            e.sampling = Some(Sampling::Frequency(num()?));
            e.sampling_is_default = false;
        }
        "name" => {
            e.name = v
                .filter(|s| !s.is_empty())
                .ok_or_else(|| syntax(item, "`name` takes a name"))?
                .to_string()
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn terms_of(t: &str) -> impl Iterator<Item = (&str, Option<&str>)> {
    t.split(',')
        .filter(|x| !x.is_empty())
        .map(|x| match x.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (x.trim(), None),
        })
}

fn generic_terms(e: &mut EventSpec, t: &str, item: &str) -> Result<(), OptionError> {
    for (k, v) in terms_of(t) {
        if !generic_term(e, k, v, item)? {
            return Err(syntax(
                item,
                format!("unknown term `{k}`; this event takes config, config1, config2, period, freq, name"),
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
        if generic_term(e, k, v, item)? {
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
mod tests {
    use super::*;

    fn one(s: &str) -> EventSpec {
        EventSpec::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn lists_split_at_top_level_commas() {
        assert_eq!(split_top("a,b").unwrap(), vec!["a", "b"]);
        assert_eq!(split_top("{a,b}:S,c").unwrap(), vec!["{a,b}:S", "c"]);
        assert_eq!(
            split_top("msr/event=1,config1=2/,c").unwrap(),
            vec!["msr/event=1,config1=2/", "c"]
        );
        assert!(split_top("{a,b").is_err());
        assert!(split_top("a}").is_err());
        assert!(split_top("msr/event=1").is_err());
    }

    #[test]
    fn modifiers_mean_what_they_mean_in_perf() {
        let e = one("cycles:u");
        assert!(!e.exclude_user && e.exclude_kernel && e.exclude_hv);
        let e = one("cpu-clock:uk");
        assert!(!e.exclude_user && !e.exclude_kernel && e.exclude_hv);
        let e = one("cycles:pp");
        assert_eq!(e.precise, 2);
        assert!(e.exclude_guest && !e.exclude_user);
        let e = one("cycles:G");
        assert!(!e.exclude_guest && e.exclude_host);
        let e = one("cycles:H");
        assert!(e.exclude_guest && !e.exclude_host);
        assert_eq!(one("cycles:P").precise, 3);
        assert!(EventSpec::parse("cycles:pppp").is_err());
        let err = EventSpec::parse("cycles:x").unwrap_err().to_string();
        assert!(err.contains("modifier \"x\""), "{err}");
        assert!(EventSpec::parse("cycles:S")
            .unwrap_err()
            .to_string()
            .contains("{a,b}:S"));
    }

    #[test]
    fn cache_and_raw_events() {
        let e = one("L1-dcache-load-misses");
        assert_eq!((e.type_, e.config), (TYPE_HW_CACHE, 0x10000));
        assert_eq!(one("LLC-loads").config, 2);
        assert_eq!(one("dTLB-store-misses").config, 3 | 1 << 8 | 1 << 16);
        assert_eq!(one("branch-load-misses").config, 5 | 1 << 16);
        assert_eq!(one("L1-icache-prefetches").config, 1 | 2 << 8);
        let e = one("r1a8");
        assert_eq!((e.type_, e.config), (TYPE_RAW, 0x1a8));
        assert!(EventSpec::parse("L1-dcache-frobs").is_err());
        assert!(EventSpec::parse("rxyz").is_err());
    }

    #[test]
    fn per_event_terms_and_groups() {
        let e = one("cpu-clock/period=10000/");
        assert_eq!(e.sampling, Some(Sampling::Period(10000)));
        assert!(!e.sampling_is_default);
        let e = one("task-clock/freq=999,name=tc/:u");
        assert_eq!(e.sampling, Some(Sampling::Frequency(999)));
        assert_eq!(e.name, "task-clock/freq=999,name=tc/:u");
        assert!(EventSpec::parse("cpu-clock/bogus=1/")
            .unwrap_err()
            .to_string()
            .contains("unknown term"));
        let mut g = 0;
        let v = parse_events("{cpu-clock,task-clock}:S,page-faults", &mut g).unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(
            v[0].group,
            Some(Group {
                id: 0,
                leader: true,
                sample_read: true
            })
        );
        assert_eq!(
            v[1].group,
            Some(Group {
                id: 0,
                leader: false,
                sample_read: true
            })
        );
        assert_eq!(v[2].group, None);
        assert_eq!(g, 1);
        let v = parse_events("{cpu-clock:u,task-clock}:k", &mut g).unwrap();
        assert!(
            !v[0].exclude_user && !v[0].exclude_kernel,
            "the group's :k adds to :u"
        );
        assert!(!v[1].exclude_kernel && v[1].exclude_user);
        assert!(parse_events("{a,{b}}", &mut g).is_err());
    }

    #[test]
    fn pmus_from_sysfs() {
        // The software PMU has no format files: config= works, others do not.
        let e = one("software/config=3/");
        assert_eq!((e.type_, e.config), (1, 3));
        if let Some(msr) = Pmu::load("msr") {
            if msr.events.contains_key("tsc") {
                let e = one("msr/tsc/");
                assert_eq!(e.type_, msr.type_);
                let err = EventSpec::parse("msr/nope/").unwrap_err().to_string();
                assert!(err.contains("its events:") && err.contains("tsc"), "{err}");
            }
        }
        let err = EventSpec::parse("frobnicate").unwrap_err().to_string();
        assert!(err.contains("software/.../"), "{err}");
    }
}
