//! Event names (`-e`) as perf spells them: built-in events, modifiers, groups, call graphs.

use super::error::OptionError;
use crate::format::attr::{OFF_CPU_NAME, TYPE_HARDWARE, TYPE_HW_CACHE, TYPE_RAW, TYPE_SOFTWARE};

/// Software event used when hardware counters are unavailable (as perf does).
pub const SOFTWARE_FALLBACK: &str = "cpu-clock";

const NAMES: &[(&str, u32, u64)] = &[
    ("cpu-clock", TYPE_SOFTWARE, 0),
    ("task-clock", TYPE_SOFTWARE, 1),
    ("page-faults", TYPE_SOFTWARE, 2),
    ("faults", TYPE_SOFTWARE, 2),
    ("context-switches", TYPE_SOFTWARE, 3),
    ("cs", TYPE_SOFTWARE, 3),
    ("cpu-migrations", TYPE_SOFTWARE, 4),
    ("migrations", TYPE_SOFTWARE, 4),
    ("minor-faults", TYPE_SOFTWARE, 5),
    ("major-faults", TYPE_SOFTWARE, 6),
    ("dummy", TYPE_SOFTWARE, 9),
    ("cycles", TYPE_HARDWARE, 0),
    ("cpu-cycles", TYPE_HARDWARE, 0),
    ("instructions", TYPE_HARDWARE, 1),
    ("cache-references", TYPE_HARDWARE, 2),
    ("cache-misses", TYPE_HARDWARE, 3),
    ("branches", TYPE_HARDWARE, 4),
    ("branch-instructions", TYPE_HARDWARE, 4),
    ("branch-misses", TYPE_HARDWARE, 5),
    ("bus-cycles", TYPE_HARDWARE, 6),
    ("ref-cycles", TYPE_HARDWARE, 9),
];

/// The name perf gives an attr of a built-in event (the first of its
/// spellings: what `perf script` prints where a recording names none).
pub fn name_of(type_: u32, config: u64) -> Option<&'static str> {
    NAMES
        .iter()
        .find(|(_, t, c)| *t == type_ && *c == config)
        .map(|(n, _, _)| *n)
}

/// An event's place in a `{a,b}` group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group {
    /// Unique per group in one session.
    pub id: u32,
    /// The group's first event, which the others are opened under.
    pub leader: bool,
    /// `:S`: only the leader samples, reading every member's count.
    pub(crate) sample_read: bool,
}

/// One event of `-e`, as perf spells it (see `parse`): its attr type and
/// config, modifiers, per-event terms, and what else it needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventSpec {
    /// The name as the user wrote it (EVENT_DESC).
    pub name: String,
    /// `perf_event_attr.type` (`PERF_TYPE_*`, or a dynamic PMU's type).
    pub type_: u32,
    /// `perf_event_attr.config`: which event of the type.
    pub config: u64,
    /// `perf_event_attr.config1` (PMU format terms that live there).
    pub config1: u64,
    /// `perf_event_attr.config2` (PMU format terms that live there).
    pub config2: u64,
    /// `exclude_user`: user mode is not counted (`:k` or `:h`, unless `:u` too).
    pub exclude_user: bool,
    /// `exclude_kernel`: kernel mode is not counted (`:u` or `:h`, unless `:k` too; or
    /// set when perf_event_paranoid forbids kernel profiling).
    pub exclude_kernel: bool,
    /// `exclude_hv`: the hypervisor is not counted (`:u` or `:k`, unless `:h` too).
    pub exclude_hv: bool,
    /// `exclude_host`: the host is not counted (`:G`, unless `:H` too).
    pub exclude_host: bool,
    /// perf's default: 1 (`:G` clears it).
    pub exclude_guest: bool,
    /// `:p` count (precise_ip, 0..=3).
    pub(crate) precise: u8,
    /// `:D`: pinned on the PMU.
    pub pinned: bool,
    /// `/period=N/` or `/freq=N/`; tracepoints default to period 1.
    pub sampling: Option<Sampling>,
    /// `sampling` is perf's default for the event kind, which an explicit
    /// -F / -c replaces.
    pub(crate) sampling_is_default: bool,
    /// A tracepoint (`sys:name`): samples carry RAW, the file carries
    /// HEADER_TRACING_DATA.
    pub tracepoint: Option<super::tracefs::Tracepoint>,
    /// `--filter`: the ftrace filter set on a tracepoint.
    pub filter: Option<String>,
    /// `--filter` after a non-tracepoint event: a sample filter in perf's
    /// grammar (transform/sample_filter), applied in the push path.
    pub sample_filter: Option<String>,
    /// `--exclude-perf`: the filter leaves out perfz's own threads.
    pub(crate) exclude_self: bool,
    /// The `{a,b}` group the event is in, if any.
    pub group: Option<Group>,
    /// `--off-cpu`'s event: context-switch samples with their switch
    /// records (`context_switch`), written as perf's `offcpu-time`.
    pub off_cpu: bool,
    /// `-G NAME`: counted only in this cgroup (a system-wide recording),
    /// its path under the perf_event cgroup hierarchy.
    pub cgroup: Option<String>,
    /// `ev/call-graph=...,max-stack=N,.../`: how this event samples where
    /// the session's options say otherwise.
    pub terms: Terms,
}

/// The terms of `-e EVENT/terms/` that set how one event samples, over
/// what the session's options say (perf's config terms, which its
/// evsel__apply_config_terms applies after everything else; see terms.rs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Terms {
    /// `call-graph=fp|dwarf|lbr|no`: this event's call chains (`no`:
    /// [`CallGraph::None`]).
    pub call_graph: Option<CallGraph>,
    /// `stack-size=N`: the user stack a dwarf sample dumps, rounded up to 8
    /// bytes (0: not given).
    pub(crate) stack_size: u32,
    /// `max-stack=N`: `sample_max_stack`, the frames a call chain keeps;
    /// without `call-graph` it means `call-graph=fp` (0: not given).
    pub(crate) max_stack: u16,
    /// `inherit` / `no-inherit`: whether children inherit the event,
    /// whatever `--no-inherit` or the target says.
    pub inherit: Option<bool>,
    /// `ratio-to-prev=R` as written (a ratio above 0): this event's period
    /// over the previous group member's (see ratio.rs).
    pub(crate) ratio_to_prev: Option<String>,
}

impl EventSpec {
    /// A plain event of `type_`/`config` named `name`, perf's defaults.
    pub fn new(name: &str, type_: u32, config: u64) -> EventSpec {
        EventSpec {
            name: name.into(),
            type_,
            config,
            config1: 0,
            config2: 0,
            exclude_user: false,
            exclude_kernel: false,
            exclude_hv: false,
            exclude_host: false,
            exclude_guest: true,
            precise: 0,
            pinned: false,
            sampling: None,
            sampling_is_default: false,
            tracepoint: None,
            filter: None,
            sample_filter: None,
            exclude_self: false,
            group: None,
            off_cpu: false,
            cgroup: None,
            terms: Terms::default(),
        }
    }

    /// `--off-cpu`'s event: every switch-out of the target's threads
    /// sampled (`context-switches`, period 1) with the switch records, in
    /// kernel mode (where the switch happens), named `offcpu-time`.
    pub fn off_cpu() -> EventSpec {
        let mut e = EventSpec::new(OFF_CPU_NAME, TYPE_SOFTWARE, 3);
        e.sampling = Some(Sampling::Period(1));
        e.off_cpu = true;
        e
    }

    /// Looks up a symbolic (hardware or software) event name.
    pub fn symbolic(name: &str) -> Option<(u32, u64)> {
        NAMES
            .iter()
            .find(|(n, ..)| *n == name)
            .map(|&(_, t, c)| (t, c))
    }

    /// The names perfz knows without sysfs or tracefs.
    pub fn symbolic_names() -> Vec<&'static str> {
        NAMES.iter().map(|(n, ..)| *n).collect()
    }

    /// Counted by the CPU's PMU (hardware, cache and raw events).
    pub fn is_hardware(&self) -> bool {
        matches!(self.type_, TYPE_HARDWARE | TYPE_HW_CACHE | TYPE_RAW)
    }

    /// The same modifiers on the software fallback event.
    pub fn software_fallback(&self) -> EventSpec {
        let mut e = EventSpec::new(SOFTWARE_FALLBACK, TYPE_SOFTWARE, 0);
        e.exclude_user = self.exclude_user;
        e.exclude_kernel = self.exclude_kernel;
        e.exclude_hv = self.exclude_hv;
        e.group = self.group;
        e.terms = self.terms.clone();
        e
    }
}

/// `-F HZ` or `-c PERIOD`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// About this many samples per second (`attr.sample_freq` with `freq` set).
    Frequency(u64),
    /// One sample every this many events (`attr.sample_period`).
    Period(u64),
}

/// `-g` / `--call-graph`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallGraph {
    /// No callchains.
    None,
    /// `fp`: the kernel walks frame pointers (PERF_SAMPLE_CALLCHAIN).
    FramePointer,
    /// User registers and this many bytes of user stack per sample.
    Dwarf(u32),
    /// The CPU's last branch records as a call stack (Intel LBR).
    Lbr,
}

impl CallGraph {
    /// Parses a `--call-graph` value: `fp`, `dwarf[,SIZE]` or `lbr` (checking that
    /// this machine can do it).
    pub fn parse(s: &str) -> Result<Self, OptionError> {
        let (mode, size) = s.split_once(',').map_or((s, None), |(m, z)| (m, Some(z)));
        match (mode, size) {
            ("fp", None) => Ok(CallGraph::FramePointer),
            ("lbr", None) => {
                if !lbr_available() {
                    return Err(OptionError::NoLbr);
                }
                Ok(CallGraph::Lbr)
            }
            ("dwarf", None) => {
                user_regs_mask()?;
                Ok(CallGraph::Dwarf(8192))
            }
            ("dwarf", Some(z)) => {
                user_regs_mask()?;
                let n = crate::quantity::parse_size(z)?;
                if n == 0 || n > 65528 || n % 8 != 0 {
                    return Err(OptionError::DwarfStackSize(n));
                }
                Ok(CallGraph::Dwarf(n as u32))
            }
            _ => Err(OptionError::CallGraph(s.into())),
        }
    }
}

/// x86_64 user registers perf asks for with `--call-graph dwarf` (AX..R15 minus segment registers).
pub const DWARF_REGS_X86_64: u64 = 0xff0fff;
/// aarch64: x0..x30, sp, pc (PERF_REG_ARM64_MAX = 33).
pub const DWARF_REGS_AARCH64: u64 = (1 << 33) - 1;
/// riscv64: pc, ra, sp, ..., t6 (PERF_REG_RISCV_MAX = 32).
pub const DWARF_REGS_RISCV64: u64 = (1 << 32) - 1;

/// The user registers `--call-graph dwarf` samples on `arch` (perf's
/// PERF_REGS_MASK for it), or None for an architecture perfz does not know.
pub fn user_regs_mask_for(arch: &str) -> Option<u64> {
    match arch {
        "x86_64" => Some(DWARF_REGS_X86_64),
        "aarch64" => Some(DWARF_REGS_AARCH64),
        "riscv64" => Some(DWARF_REGS_RISCV64),
        _ => None,
    }
}

/// The register mask for this machine: a wrong mask would write samples
/// no unwinder can use, so an unknown architecture is an error.
pub fn user_regs_mask() -> Result<u64, OptionError> {
    let arch = std::env::consts::ARCH;
    user_regs_mask_for(arch).ok_or_else(|| OptionError::DwarfArch(arch.into()))
}

/// Whether the CPU PMU has last branch records (Intel LBR): perf's test,
/// the `branches` capability of the `cpu` PMU.
pub fn lbr_available() -> bool {
    std::fs::read_to_string("/sys/bus/event_source/devices/cpu/caps/branches")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .is_some_and(|n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_names() {
        assert_eq!(EventSpec::parse("cs").unwrap().config, 3);
        assert!(EventSpec::parse("cycles").unwrap().is_hardware());
        let e = EventSpec::parse("cpu-clock:u").unwrap();
        assert!(e.exclude_kernel && !e.exclude_user);
        assert!(EventSpec::parse("nonsense")
            .unwrap_err()
            .to_string()
            .contains("cpu-clock"));
        assert!(EventSpec::parse("cpu-clock:x").is_err());
    }

    #[test]
    fn call_graph_modes_as_perf() {
        assert_eq!(CallGraph::parse("fp"), Ok(CallGraph::FramePointer));
        assert_eq!(CallGraph::parse("dwarf,4096"), Ok(CallGraph::Dwarf(4096)));
        assert!(CallGraph::parse("dwarf,4097").is_err());
        assert_eq!(user_regs_mask_for("x86_64"), Some(0xff0fff));
        assert_eq!(user_regs_mask_for("aarch64"), Some(0x1_ffff_ffff));
        assert_eq!(user_regs_mask_for("mips"), None);
        assert!(OptionError::DwarfArch("mips".into())
            .to_string()
            .contains("use --call-graph fp"));
        match CallGraph::parse("lbr") {
            Ok(CallGraph::Lbr) => assert!(lbr_available()),
            Err(e) => {
                assert!(!lbr_available());
                assert!(
                    e.to_string().contains("use --call-graph fp or dwarf"),
                    "{e}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
