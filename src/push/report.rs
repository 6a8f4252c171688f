//! The numbers a drain unit keeps ([`UnitReport`]), for the summary and
//! the header, and how the reports of several units add up.

use crate::format::CompressedInfo;
use crate::push::Copies;

/// The numbers a drain unit keeps, for the summary and the header.
#[derive(Debug, Clone, Default)]
pub struct UnitReport {
    /// Bytes read out of rings.
    pub(crate) ring_bytes: u64,
    /// Bytes of COMPRESSED records written (0 with `none`).
    pub(crate) compressed_bytes: u64,
    /// HEADER_COMPRESSED as it stands (None with `none`).
    pub(crate) compressed: Option<CompressedInfo>,
    /// Bytes of records written so far (or queued).
    pub(crate) bytes_written: u64,
    /// Where the output's last checkpoint left it (`None` before the
    /// first, or an output without checkpoints): what a failed write rolls
    /// back to.
    pub(crate) checkpoint_end: Option<u64>,
    /// The copy meter's counts, when it is on.
    pub(crate) copies: Option<Copies>,
    /// Whether the codec copies its input into a buffer of its own.
    pub(crate) codec_copies_input: bool,
    /// Bytes held by the codec's state.
    pub(crate) codec_state_bytes: usize,
    /// How writes are done ("serial", "async (io_uring)").
    pub(crate) writes: &'static str,
    /// Unwritten dwarf stack bytes left out.
    pub(crate) stack_bytes_cleared: u64,
    /// Samples with a stack left whole (they did not parse as their
    /// event's layout, or their id was unknown).
    pub(crate) stack_samples_uncut: u64,
    /// The fullest a ring was when a pass came to it, as a fraction of its
    /// size, and how many pushes found a ring at least 7/8 full (how close
    /// the drain came to losing records).
    pub(crate) max_fill: f64,
    /// Pushes that found their ring at least 7/8 full.
    pub(crate) near_full_pushes: u64,
    /// How much of their stack dumps the samples used (dwarf, when cut).
    pub(crate) stack_use: crate::transform::stack_use::StackUse,
    /// `--off-cpu`: switch-outs seen, off-CPU samples written, records of
    /// other recorders' ids left out (by every unit of the recording).
    pub(crate) off_cpu: Option<crate::transform::off_cpu::OffCpuCounts>,
    /// `--filter` on non-tracepoint events: the samples it left out, in
    /// the push path (None: no such filter).
    pub(crate) samples_filtered: Option<u64>,
}

impl UnitReport {
    /// HEADER_COMPRESSED for `data`, from every thread's stream: the same codec
    /// and level, the largest mmap_len, the ratio over all of them.
    pub fn combined_compressed(reports: &[UnitReport]) -> Option<CompressedInfo> {
        let mut info = reports.iter().find_map(|r| r.compressed)?;
        let raw: u64 = reports.iter().map(|r| r.ring_bytes).sum();
        let comp: u64 = reports.iter().map(|r| r.compressed_bytes).sum();
        info.mmap_len = reports
            .iter()
            .filter_map(|r| r.compressed.map(|c| c.mmap_len))
            .max()
            .unwrap_or(info.mmap_len);
        info.ratio = if comp == 0 {
            0
        } else {
            (raw as f64 / comp as f64 + 0.5) as u32
        };
        Some(info)
    }

    /// Two units' reports as one: sums, the fullest ring, how the first writes.
    pub fn combined(self, b: &UnitReport) -> UnitReport {
        let mut stack_use = self.stack_use;
        stack_use.merge(&b.stack_use);
        UnitReport {
            ring_bytes: self.ring_bytes + b.ring_bytes,
            compressed_bytes: self.compressed_bytes + b.compressed_bytes,
            compressed: self.compressed.or(b.compressed),
            bytes_written: self.bytes_written + b.bytes_written,
            checkpoint_end: self.checkpoint_end,
            copies: Copies::add(self.copies, b.copies),
            codec_copies_input: self.codec_copies_input,
            codec_state_bytes: self.codec_state_bytes + b.codec_state_bytes,
            writes: self.writes,
            stack_bytes_cleared: self.stack_bytes_cleared + b.stack_bytes_cleared,
            stack_samples_uncut: self.stack_samples_uncut + b.stack_samples_uncut,
            max_fill: self.max_fill.max(b.max_fill),
            near_full_pushes: self.near_full_pushes + b.near_full_pushes,
            stack_use,
            // Shared by every unit: the same counts.
            off_cpu: self.off_cpu.or(b.off_cpu),
            samples_filtered: match (self.samples_filtered, b.samples_filtered) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
            },
        }
    }
}
