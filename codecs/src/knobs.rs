//! zstd's options after the level, in one table: parsing, the canonical
//! form ([`Display`](std::fmt::Display) of a spec), `perfz eval`'s
//! description, `perfz codecs`, the grammar in error messages and the list
//! of known options all read it; the zstd codec sets each numeric knob's
//! libzstd parameter in the same order.

use std::ops::RangeInclusive;

/// zstd's level when none is given: perf's `-z` default.
pub const ZSTD_DEFAULT_LEVEL: i32 = 1;
/// What `zstd:0` means: libzstd's own default level.
pub const LIBZSTD_DEFAULT_LEVEL: i32 = 3;
/// Fastest level libzstd accepts (`ZSTD_minCLevel()`).
pub const ZSTD_MIN_LEVEL: i32 = -(1 << 17);
/// Strongest level.
pub const ZSTD_MAX_LEVEL: i32 = 22;

/// A numeric knob: its name in a spec, what it takes, and a note for an
/// out-of-range value.
pub struct Knob {
    /// The option's name in a spec (`wlog` in `wlog=23`).
    pub name: &'static str,
    /// The values the spec accepts, inclusive.
    pub range: RangeInclusive<u32>,
    /// Appended to the out-of-range error (empty, or ` (why)` with a leading space).
    pub note: &'static str,
}

const fn knob(name: &'static str, lo: u32, hi: u32, note: &'static str) -> Knob {
    Knob {
        name,
        range: lo..=hi,
        note,
    }
}

/// The numeric knobs, in the order a canonical spec prints them: window,
/// hash, chain and search logs, minimum match (the window log's range is
/// ZSTD_WINDOWLOG_MIN to the largest perf 6.1 reads).
pub const KNOBS: [Knob; 5] = [
    knob("wlog", 10, 27, " (perf's reader accepts at most 27)"),
    knob("hlog", 6, 30, ""),
    knob("clog", 6, 30, ""),
    knob("slog", 1, 30, ""),
    knob("mml", 3, 7, ""),
];

/// Index of the window log in [`KNOBS`].
pub const WLOG: usize = 0;

/// zstd's match-finder strategies, by their libzstd number (`ZSTD_fast` = 1).
pub const ZSTD_STRATEGIES: [&str; 9] = [
    "fast", "dfast", "greedy", "lazy", "lazy2", "btlazy2", "btopt", "btultra", "btultra2",
];

/// The options without a value.
pub const FLAGS: [&str; 2] = ["long", "oneshot"];

/// `wlog=10..27, hlog=6..30, ..., strategy=NAME, long, oneshot`.
pub fn options() -> String {
    KNOBS
        .iter()
        .map(|k| format!("{}={}..{}", k.name, k.range.start(), k.range.end()))
        .chain(std::iter::once("strategy=NAME".to_string()))
        .chain(FLAGS.iter().map(|f| f.to_string()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The grammar in one line, for error messages.
pub fn grammar() -> String {
    let opts: String = options().split(", ").map(|o| format!("[,{o}]")).collect();
    format!(
        "none | zstd[:LEVEL]{opts} (LEVEL {ZSTD_MIN_LEVEL}..-1 or 1..{ZSTD_MAX_LEVEL}, default {ZSTD_DEFAULT_LEVEL}) | lz4 | snappy"
    )
}

/// Whether `tok`, one comma-separated item of a spec list, is an option of
/// the spec before it (`long`, `wlog=23`) rather than a spec of its own.
pub fn is_option(tok: &str) -> bool {
    let name = tok.split_once('=').map(|(n, _)| n);
    FLAGS.contains(&tok)
        || name.is_some_and(|n| n == "strategy" || KNOBS.iter().any(|k| k.name == n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_speaks_for_every_option() {
        assert!(is_option("wlog=23") && is_option("long") && is_option("strategy=fast"));
        assert!(!is_option("lz4") && !is_option("zstd:3") && !is_option("wlog"));
        assert!(grammar().contains("[,mml=3..7]"), "{}", grammar());
        assert_eq!(KNOBS[WLOG].name, "wlog");
    }
}
