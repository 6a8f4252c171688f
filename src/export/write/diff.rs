//! `perfz export --diff BASE NEW`: two recordings' difference. Each is
//! exported as every export is (the same options), then the two written
//! as its format writes them ([`crate::export::write::format::Format::diff`]):
//!
//! - folded: `stack count_base count_new` lines, as `inferno-diff-folded`
//!   and `difffolded.pl` write them ([`diff_folded`]: inferno's own code:
//!   `--normalize` scales the base's counts to the new's total as it
//!   does), sorted by stack (the tools' order is their hash table's);
//! - svg: the differential flame graph inferno draws from those lines
//!   (the new's widths; red grew, blue shrank);
//! - pprof: the new profile with the base's samples negated, as `go tool
//!   pprof -diff_base` merges them ([`crate::export::write::pprof_diff`]).

use crate::export::Exported;

/// What a diff read and wrote.
#[derive(Debug, Default)]
pub struct Diffed {
    /// The base's export.
    pub base: Exported,
    /// The new's export.
    pub new: Exported,
    /// Stacks written (lines, or pprof samples).
    pub stacks: usize,
}

/// The two-count lines of folded `base` and `new`, as
/// `inferno-diff-folded [--normalize] BASE NEW` writes them, sorted by
/// stack.
pub(crate) fn diff_folded(
    base: &[u8],
    new: &[u8],
    normalize: bool,
) -> std::io::Result<Vec<String>> {
    let opt = inferno::differential::Options {
        normalize,
        strip_hex: false,
    };
    let mut text = Vec::new();
    inferno::differential::from_readers(opt, base, new, &mut text)?;
    let mut lines: Vec<String> = String::from_utf8_lossy(&text)
        .lines()
        .map(String::from)
        .collect();
    let stack = |l: &String| l.rsplitn(3, ' ').nth(2).unwrap_or_default().to_string();
    lines.sort_by_cached_key(stack);
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_of_either_get_both_counts_the_base_scaled_with_normalize() {
        let base = b"a;b 3\na;c 1\n";
        let new = b"a;b 2\na;d 6\n";
        let d = diff_folded(base, new, false).unwrap();
        assert_eq!(d, ["a;b 3 2", "a;c 1 0", "a;d 0 6"]);
        // Base total 4, new 8: each base count doubled (truncated).
        let d = diff_folded(base, new, true).unwrap();
        assert_eq!(d, ["a;b 6 2", "a;c 2 0", "a;d 0 6"]);
    }
}
