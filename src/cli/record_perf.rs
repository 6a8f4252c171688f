//! perf record's options that add sample fields and attr bits to every
//! event (`-d`, `-P`, `-R`, `-W`, `-s`, `--all-user`, `--user-regs`, ...),
//! turned into what perf 6.12's `evsel__config` sets (checked against
//! `perf evlist -v` of perf's own recordings, docs/RECORD_OPTIONS.md).

use crate::event::attr_build::ExtraAttr;
use crate::format::attr::{flags, read_format as rf, sample_type as st};

/// perf's sample and attr options, as `perf record -h` names them.
#[derive(Debug, Default, clap::Args)]
pub struct PerfArgs {
    /// Sample data addresses (ADDR, DATA_SRC) and record data mmaps.
    #[arg(short = 'd', long = "data")]
    data: bool,
    /// Sample the data source of memory operations (DATA_SRC; perf 7.x).
    #[arg(long = "sample-mem-info")]
    sample_mem_info: bool,
    /// Record mmap events of non-executable mappings too (perf 7.x).
    #[arg(long = "data-mmap")]
    data_mmap: bool,
    /// Sample physical addresses (PHYS_ADDR).
    #[arg(long = "phys-data")]
    phys_data: bool,
    /// Sample the page size behind the data address (DATA_PAGE_SIZE).
    #[arg(long = "data-page-size")]
    data_page_size: bool,
    /// Sample the page size behind the ip (CODE_PAGE_SIZE).
    #[arg(long = "code-page-size")]
    code_page_size: bool,
    /// Sample the period (PERIOD) with -c too.
    #[arg(short = 'P', long = "period")]
    period: bool,
    /// Sample timestamps (TIME; perfz always does, as perf).
    #[arg(short = 'T', long = "timestamp")]
    timestamp: bool,
    /// Raw sample records (RAW, CPU, TIME) from every event.
    #[arg(short = 'R', long = "raw-samples")]
    raw_samples: bool,
    /// Sample weights (WEIGHT_STRUCT, as perf 6.x on x86).
    #[arg(short = 'W', long = "weight")]
    weight: bool,
    /// Sample transaction flags (TRANSACTION; special events only).
    #[arg(long = "transaction")]
    transaction: bool,
    /// Sample the CPU (CPU).
    #[arg(long = "sample-cpu")]
    sample_cpu: bool,
    /// Sample the event id first (IDENTIFIER).
    #[arg(long = "sample-identifier")]
    sample_identifier: bool,
    /// Per-thread counts (inherit_stat, enabled and running times).
    #[arg(short = 's', long = "stat")]
    stat: bool,
    /// Enabled and running times in :S events' reads.
    #[arg(long = "running-time")]
    running_time: bool,
    /// Don't sample: the events only count (period 0).
    #[arg(short = 'n', long = "no-samples")]
    no_samples: bool,
    /// Every event counts user space only (exclude_kernel).
    #[arg(long = "all-user", conflicts_with = "all_kernel")]
    all_user: bool,
    /// Every event counts kernel space only (exclude_user).
    #[arg(long = "all-kernel")]
    all_kernel: bool,
    /// Call chains of user space only (exclude_callchain_kernel).
    #[arg(long = "user-callchains")]
    user_callchains: bool,
    /// Call chains of the kernel only (exclude_callchain_user).
    #[arg(long = "kernel-callchains")]
    kernel_callchains: bool,
    /// Record namespace records (NAMESPACES) of the target's tasks.
    #[arg(long = "namespaces")]
    namespaces: bool,
    /// Record cgroup records and each sample's cgroup (CGROUP).
    #[arg(long = "all-cgroups")]
    all_cgroups: bool,
    /// Don't record bpf program load records (bpf_event).
    #[arg(long = "no-bpf-event")]
    no_bpf_event: bool,
    /// Wake the reader at every record (wakeup_events 1).
    #[arg(long = "no-buffering")]
    no_buffering: bool,
    /// Sample these user registers (REGS_USER; `?` lists them; alone: all).
    #[arg(long = "user-regs", value_name = "REGS", num_args = 0..=1, default_missing_value = "", require_equals = true)]
    user_regs: Option<String>,
    /// Sample these registers at the interrupt (REGS_INTR; `?` lists them; alone: all).
    #[arg(short = 'I', long = "intr-regs", value_name = "REGS", num_args = 0..=1, default_missing_value = "", require_equals = true)]
    intr_regs: Option<String>,
    /// Sample any taken branch (BRANCH_STACK; needs a PMU with branch stacks).
    #[arg(short = 'b', long = "branch-any")]
    branch_any: bool,
    /// Sample branch stacks of these kinds (any, any_call, any_ret, ind_call, ind_jmp, call, cond, u, k, hv, ...).
    #[arg(short = 'j', long = "branch-filter", value_name = "MASK")]
    branch_filter: Vec<String>,
}

/// `perf_regs.h`'s x86_64 register names, in bit order.
const X86_64_REGS: &[&str] = &[
    "AX", "BX", "CX", "DX", "SI", "DI", "BP", "SP", "IP", "FLAGS", "CS", "SS", "DS", "ES", "FS",
    "GS", "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15",
];

/// perf's default register mask on x86_64: every general register but the
/// segment registers the kernel does not sample (DS, ES, FS, GS).
const X86_64_DEFAULT_REGS: u64 = 0xff_0fff;

/// The register names `perf record -I?` lists, as perf lists them.
pub fn register_list() -> String {
    let names: Vec<&str> = X86_64_REGS
        .iter()
        .enumerate()
        .filter(|(i, _)| X86_64_DEFAULT_REGS & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect();
    format!("available registers: {} ", names.join(" "))
}

/// A register list (`AX,BX`; empty: perf's default set) as a mask.
fn register_mask(option: &str, list: &str) -> anyhow::Result<u64> {
    anyhow::ensure!(
        std::env::consts::ARCH == "x86_64",
        "{option}: perfz knows the register names of x86_64 only"
    );
    if list.is_empty() {
        return Ok(X86_64_DEFAULT_REGS);
    }
    list.split(',').try_fold(0u64, |mask, name| {
        let bit = X86_64_REGS
            .iter()
            .position(|r| r.eq_ignore_ascii_case(name.trim()))
            .filter(|&b| X86_64_DEFAULT_REGS & (1 << b) != 0)
            .ok_or_else(|| {
                anyhow::anyhow!("{option}: unknown register {name:?} ({})", register_list())
            })?;
        Ok(mask | 1 << bit)
    })
}

/// `-j`'s words as perf's `branch_modes[]` names them.
const BRANCH_MODES: &[(&str, u64)] = &[
    ("u", 1 << 0),
    ("k", 1 << 1),
    ("hv", 1 << 2),
    ("any", 1 << 3),
    ("any_call", 1 << 4),
    ("any_ret", 1 << 5),
    ("ind_call", 1 << 6),
    ("abort_tx", 1 << 7),
    ("in_tx", 1 << 8),
    ("no_tx", 1 << 9),
    ("cond", 1 << 10),
    ("call_stack", 1 << 11),
    ("ind_jmp", 1 << 12),
    ("call", 1 << 13),
    ("no_flags", 1 << 14),
    ("no_cycles", 1 << 15),
    ("save_type", 1 << 16),
    ("stack", 1 << 11),
    ("hw_index", 1 << 17),
    ("priv", 1 << 18),
    ("counter", 1 << 19),
];

/// The privilege bits of a branch filter (perf adds the events' own where
/// a filter names none).
const BRANCH_PRIV: u64 = 0b111;

fn branch_mask(words: &[String]) -> anyhow::Result<u64> {
    let mut mask = 0;
    for w in words.iter().flat_map(|w| w.split(',')) {
        let bit = BRANCH_MODES
            .iter()
            .find(|(n, _)| *n == w)
            .map(|(_, b)| *b)
            .ok_or_else(|| anyhow::anyhow!("-j: unknown branch filter {w:?}"))?;
        mask |= bit;
    }
    if mask & !BRANCH_PRIV == 0 {
        // Only privilege levels: any branch at those levels, as perf.
        mask |= 1 << 3;
    }
    Ok(mask)
}

impl PerfArgs {
    /// Whether `-I?` or `--user-regs=?` asks for the register list.
    pub fn lists_registers(&self) -> bool {
        self.user_regs.as_deref() == Some("?") || self.intr_regs.as_deref() == Some("?")
    }

    /// What these options add to every event's attr.
    pub fn extra_attr(&self, dwarf: bool) -> anyhow::Result<ExtraAttr> {
        let mut x = ExtraAttr::default();
        x.sample_type |= self.sample_type_bits();
        self.set_flags(&mut x);
        if let Some(list) = &self.user_regs {
            anyhow::ensure!(
                !dwarf,
                "--user-regs with a dwarf call graph (--call-graph dwarf, or an event's call-graph=dwarf): dwarf stacks sample the registers unwinding needs; drop --user-regs"
            );
            x.sample_type |= st::REGS_USER;
            x.sample_regs_user = register_mask("--user-regs", list)?;
        }
        if let Some(list) = &self.intr_regs {
            x.sample_type |= st::REGS_INTR;
            x.sample_regs_intr = register_mask("-I", list)?;
        }
        if self.branch_any || !self.branch_filter.is_empty() {
            x.sample_type |= st::BRANCH_STACK;
            x.branch_sample_type = if self.branch_filter.is_empty() {
                1 << 3
            } else {
                branch_mask(&self.branch_filter)?
            };
        }
        Ok(x)
    }

    /// The sample type bits the sample options add (`-d`, `--phys-data`,
    /// `-T`, `--sample-cpu`, ...).
    fn sample_type_bits(&self) -> u64 {
        let mut sample_type = 0;
        let mut bit = |on: bool, sample: u64| {
            if on {
                sample_type |= sample;
            }
        };
        bit(self.data, st::ADDR | st::DATA_SRC);
        bit(self.sample_mem_info, st::DATA_SRC);
        bit(self.phys_data, st::PHYS_ADDR);
        bit(self.data_page_size, st::DATA_PAGE_SIZE);
        bit(self.code_page_size, st::CODE_PAGE_SIZE);
        bit(self.period, st::PERIOD);
        bit(self.timestamp, st::TIME);
        bit(self.raw_samples, st::RAW | st::CPU | st::TIME);
        bit(self.weight, st::WEIGHT_STRUCT);
        bit(self.transaction, st::TRANSACTION);
        bit(self.sample_cpu, st::CPU);
        bit(self.sample_identifier, st::IDENTIFIER);
        bit(self.all_cgroups, st::CGROUP);
        sample_type
    }

    /// The attr flags, read_format bits, `-n` and wakeups the other
    /// options set in `x`.
    fn set_flags(&self, x: &mut ExtraAttr) {
        if self.data || self.data_mmap {
            x.tracking_flags |= flags::MMAP_DATA;
        }
        if self.stat {
            x.flags |= flags::INHERIT_STAT;
        }
        if self.stat || self.running_time {
            x.read_format |= rf::TOTAL_TIME_ENABLED | rf::TOTAL_TIME_RUNNING;
        }
        x.no_samples = self.no_samples;
        if self.all_user {
            x.flags |= flags::EXCLUDE_KERNEL;
            x.flags_off |= flags::EXCLUDE_USER;
        }
        if self.all_kernel {
            x.flags |= flags::EXCLUDE_USER;
            x.flags_off |= flags::EXCLUDE_KERNEL;
        }
        if self.user_callchains {
            x.callchain_flags |= flags::EXCLUDE_CALLCHAIN_KERNEL;
        }
        if self.kernel_callchains {
            x.callchain_flags |= flags::EXCLUDE_CALLCHAIN_USER;
        }
        if self.namespaces {
            x.tracking_flags |= flags::NAMESPACES;
        }
        if self.all_cgroups {
            x.tracking_flags |= flags::CGROUP;
        }
        if self.no_bpf_event {
            x.tracking_flags_off |= flags::BPF_EVENT;
        }
        if self.no_buffering {
            x.wakeup_events = 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_lists_are_perfs_masks() {
        // perf 6.12 on x86_64: `-I` alone 0xff0fff, `--user-regs=AX,BX` 0x3.
        assert_eq!(register_mask("-I", "").unwrap(), 0xff0fff);
        assert_eq!(register_mask("--user-regs", "AX,BX").unwrap(), 0x3);
        assert_eq!(register_mask("-I", "r15,ip").unwrap(), 1 << 23 | 1 << 8);
        assert!(register_mask("-I", "DS").is_err(), "not sampled on x86_64");
        assert!(register_mask("-I", "XYZ").is_err());
        assert_eq!(
            register_list(),
            "available registers: AX BX CX DX SI DI BP SP IP FLAGS CS SS R8 R9 R10 R11 R12 R13 R14 R15 "
        );
    }

    #[test]
    fn branch_filters_are_perfs_bits() {
        let w = |s: &str| vec![s.to_string()];
        assert_eq!(branch_mask(&w("any")).unwrap(), 8);
        assert_eq!(branch_mask(&w("any_call,u")).unwrap(), 16 | 1);
        assert_eq!(branch_mask(&w("u")).unwrap(), 8 | 1, "levels alone: any");
        assert!(branch_mask(&w("sideways")).is_err());
    }
}
