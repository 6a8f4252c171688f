//! Sizes and durations as perfz's options spell them, parsed in one place:
//! `-m`, `--mmap-flush`, `--max-size`, `--flight-recorder`, `--switch-output`
//! and the dwarf stack size all read sizes here.

use std::time::Duration;

/// A size or a duration that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// A size that does not parse (the text given).
    #[error("bad size {0:?}: use a number with an optional K, M or G suffix")]
    Size(String),
    /// A duration that does not parse (the text given).
    #[error("bad duration {0:?}: use a number with s, m, h or d (30s, 5m, 1h, 1d)")]
    Duration(String),
}

/// A size: a plain number of bytes, or with a K/M/G suffix (with or without
/// a trailing B; `m` is MiB here).
pub fn parse_size(s: &str) -> Result<u64, QuantityError> {
    let t = s.trim().trim_end_matches(['B', 'b']);
    let (num, mult) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 1 << 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| QuantityError::Size(s.into()))
}

/// A duration with a unit: `30s`, `5m`, `1h`, `1d` (whole numbers).
pub fn parse_duration(s: &str) -> Result<Duration, QuantityError> {
    let bad = || QuantityError::Duration(s.into());
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = num.parse().map_err(|_| bad())?;
    let secs = match unit {
        "s" => Some(n),
        "m" => n.checked_mul(60),
        "h" => n.checked_mul(3600),
        "d" => n.checked_mul(86400),
        _ => None,
    };
    secs.map(Duration::from_secs).ok_or_else(bad)
}

/// Seconds as perf takes them (`--duration 2.5`, `--checkpoint 0.5`): a
/// number from 0 to a day.
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=86400.0).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not a number of seconds (0..=86400)")),
    }
}

/// Whether `s` names a duration (ends in s, m, h or d).
pub fn is_duration(s: &str) -> bool {
    s.ends_with(['s', 'm', 'h', 'd']) && !s.ends_with("B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_durations() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("8K"), Ok(8192));
        assert_eq!(parse_size("2MB"), Ok(2 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert!(parse_size("20000000000G").is_err());
        assert!(parse_size("x").is_err());
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1d"), Ok(Duration::from_secs(86400)));
        assert!(parse_duration("5").is_err());
        assert!(parse_duration("99999999999999999d").is_err());
        assert_eq!(parse_seconds("2.5"), Ok(2.5));
        assert!(parse_seconds("-1").is_err() && parse_seconds("1e9").is_err());
    }
}
