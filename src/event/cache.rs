//! Generic hardware cache events by name (L1-dcache-load-misses, ...), as
//! perf's tools/perf/util/parse-events.c spells them.

/// The caches by their names, with their number.
const CACHES: &[(&[&str], u64)] = &[
    (&["L1-dcache", "l1-d", "l1d", "L1-data"], 0),
    (&["L1-icache", "l1-i", "l1i", "L1-instruction"], 1),
    (&["LLC", "L2"], 2),
    (&["dTLB", "d-tlb", "Data-TLB"], 3),
    (&["iTLB", "i-tlb", "Instruction-TLB"], 4),
    (&["branch", "branches", "bpu", "btb", "bpc"], 5),
    (&["node"], 6),
];

/// The operations by their names, with their number.
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

/// The results by their names, with their number.
const RESULTS: &[(&[&str], u64)] = &[
    (&["refs", "Reference", "ops", "access", "accesses"], 0),
    (&["misses", "miss"], 1),
];

/// perf's generic cache events: `<cache>-<op>[-<result>]`, e.g.
/// `L1-dcache-load-misses`, `LLC-loads`, `dTLB-store-misses`,
/// `branch-load-misses`: config = cache | op << 8 | result << 16.
pub fn cache_event(s: &str) -> Option<u64> {
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
