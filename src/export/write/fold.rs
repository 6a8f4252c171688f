//! How a sample's stack is folded into a line and what it weighs:
//! stackcollapse-perf's options, which every format reads (the folded
//! lines, svg, speedscope and OTLP weigh a sample alike).

/// The most one sample weighs.
const MAX_PERIOD: u64 = 1 << 40;

/// stackcollapse-perf's options.
#[derive(Clone, Copy, Debug, Default)]
pub struct FoldOptions {
    /// `--pid`: `comm-pid` as the first frame.
    pub pid: bool,
    /// `--tid`: `comm-pid/tid` as the first frame.
    pub tid: bool,
    /// `--kernel`: kernel functions end in `_[k]`.
    pub annotate_kernel: bool,
    /// Each function followed by a tab and its module (the mapped file's
    /// name, `[kernel.kallsyms]`, `[unknown]`): `perfz report`'s dso column.
    pub modules: bool,
    /// Each sample weighs 1, not its period (perf script prints the period
    /// and inferno-collapse-perf weighs by it).
    pub sample_counts: bool,
}

/// What a sample of `period` weighs (1 where it has none, or with
/// `sample_counts`). A period past 2^40 is a damaged record (cpu-clock's
/// is 250 000 ns, a cycles one 10^9 at most): capped, so sums stay far
/// below u64::MAX whatever the file holds (and inferno's svg sums too).
pub(crate) fn weight(o: &FoldOptions, period: Option<u64>) -> u64 {
    if o.sample_counts {
        1
    } else {
        period.unwrap_or(1).min(MAX_PERIOD)
    }
}
