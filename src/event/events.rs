//! Event names (`-e`) and the attrs perfz opens for them, built like perf's.

use super::error::OptionError;
use crate::format::attr::{flags, read_format as rf, sample_type as st, Attr};
use crate::format::attr::{TYPE_HARDWARE, TYPE_HW_CACHE, TYPE_RAW, TYPE_SOFTWARE};

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
    pub sample_read: bool,
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
    pub precise: u8,
    /// `:D`: pinned on the PMU.
    pub pinned: bool,
    /// `/period=N/` or `/freq=N/`; tracepoints default to period 1.
    pub sampling: Option<Sampling>,
    /// `sampling` is perf's default for the event kind, which an explicit
    /// -F / -c replaces.
    pub sampling_is_default: bool,
    /// A tracepoint (`sys:name`): samples carry RAW, the file carries
    /// HEADER_TRACING_DATA.
    pub tracepoint: Option<super::tracefs::Tracepoint>,
    /// `--filter`: the ftrace filter set on a tracepoint.
    pub filter: Option<String>,
    /// The `{a,b}` group the event is in, if any.
    pub group: Option<Group>,
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
            group: None,
        }
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
                let n = crate::units::parse_size(z)?;
                if n == 0 || n > 65528 || n % 8 != 0 {
                    return Err(OptionError::DwarfStackSize(n));
                }
                Ok(CallGraph::Dwarf(n as u32))
            }
            _ => Err(OptionError::CallGraph(s.into())),
        }
    }
}

/// What every event of a session shares.
#[derive(Clone, Copy, Debug)]
pub struct AttrOptions {
    /// How often every event samples (`-F` or `-c`), unless the event says.
    pub sampling: Sampling,
    /// Which callchains samples carry (`-g` / `--call-graph`).
    pub call_graph: CallGraph,
    /// Several events: samples carry their id.
    pub with_id: bool,
    /// Per-CPU recording of everything (-a / -C): samples carry the CPU.
    pub with_cpu: bool,
    /// Follow children (workload and -p).
    pub inherit: bool,
    /// Start disabled and enable on exec (forked workload).
    pub enable_on_exec: bool,
    /// `--switch-events`: ask for context switch records (`context_switch`).
    pub switch_events: bool,
    /// Ask for MMAP2 records carrying build ids.
    pub build_id: bool,
    /// -F or -c was given: it replaces per-kind defaults (tracepoints'
    /// period 1), not per-event terms.
    pub sampling_explicit: bool,
    /// `-k`: the clock samples are timed by (the kernel's perf clock if
    /// none).
    pub clockid: Option<i32>,
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

/// branch_sample_type of `--call-graph lbr`, as perf 6.1 sets it: user
/// call stack, without cycles and flags, with hw_idx.
pub const LBR_BRANCH_SAMPLE_TYPE: u64 = 1 | (1 << 11) | (1 << 14) | (1 << 15) | (1 << 17);

/// Builds the 128-byte attr perf 6.1 would build. `tracking` marks the event
/// that carries mmap/comm/task records (the first one).
pub fn build_attr(ev: &EventSpec, o: &AttrOptions, tracking: bool) -> Attr {
    let mut a = Attr::new();
    a.set_u32(0, ev.type_);
    a.set_u64(8, ev.config);
    a.set_u64(56, ev.config1);
    a.set_u64(64, ev.config2);
    let mut sample_type = st::IP | st::TID | st::TIME;
    let member = ev.group.is_some_and(|g| !g.leader);
    let sample_read = ev.group.is_some_and(|g| g.sample_read);
    // Group members start with their leader: only the leader is disabled.
    let mut fl = flags::SAMPLE_ID_ALL;
    if !member {
        fl |= flags::DISABLED;
    }
    if ev.exclude_guest {
        fl |= flags::EXCLUDE_GUEST;
    }
    if ev.exclude_host {
        fl |= 1 << 19;
    }
    if ev.exclude_hv {
        fl |= 1 << 6;
    }
    if ev.pinned {
        fl |= 1 << 2;
    }
    fl |= (ev.precise.min(3) as u64) << 15;
    let sampling = match ev.sampling {
        Some(s) if !ev.sampling_is_default || !o.sampling_explicit => s,
        _ => o.sampling,
    };
    match sampling {
        // In a leader-sampling group the members do not sample.
        _ if member && sample_read => sample_type |= st::PERIOD,
        Sampling::Frequency(hz) => {
            a.set_u64(16, hz);
            fl |= flags::FREQ;
            sample_type |= st::PERIOD;
        }
        Sampling::Period(p) => a.set_u64(16, p),
    }
    if ev.tracepoint.is_some() {
        // perf's tracepoint defaults: the raw payload, its CPU and period.
        sample_type |= st::RAW | st::CPU | st::PERIOD;
    }
    if sample_read {
        sample_type |= st::READ;
    }
    match o.call_graph {
        CallGraph::None => {}
        CallGraph::FramePointer => sample_type |= st::CALLCHAIN,
        CallGraph::Dwarf(size) => {
            sample_type |= st::CALLCHAIN | st::REGS_USER | st::STACK_USER;
            // Unwinding reads .eh_frame_hdr, which sits in a non-executable
            // mapping: perf asks for data mmaps in dwarf mode, and so do we.
            fl |= flags::EXCLUDE_CALLCHAIN_USER | flags::MMAP_DATA;
            // Checked when --call-graph was parsed.
            a.set_u64(80, user_regs_mask().unwrap_or(0));
            a.set_u32(88, size);
        }
        CallGraph::Lbr => {
            sample_type |= st::CALLCHAIN | st::BRANCH_STACK;
            a.set_u64(72, LBR_BRANCH_SAMPLE_TYPE);
        }
    }
    if o.with_id {
        sample_type |= st::ID;
    }
    if o.with_cpu {
        sample_type |= st::CPU;
    }
    a.set_u64(24, sample_type);
    a.set_u64(
        32,
        rf::ID | rf::LOST | if sample_read { rf::GROUP } else { 0 },
    );
    // perf 6.1 turns inherit off for leader sampling (kernels before 6.12
    // refuse inherit with PERF_SAMPLE_READ).
    if o.inherit && !sample_read {
        fl |= flags::INHERIT;
    }
    if o.enable_on_exec && !member {
        fl |= flags::ENABLE_ON_EXEC;
    }
    if ev.exclude_user {
        fl |= 1 << 4;
    }
    if ev.exclude_kernel {
        fl |= 1 << 5;
    }
    if tracking {
        fl |= flags::MMAP
            | flags::COMM
            | flags::TASK
            | flags::MMAP2
            | flags::COMM_EXEC
            | flags::KSYMBOL
            | flags::BPF_EVENT;
        if o.switch_events {
            fl |= flags::CONTEXT_SWITCH;
        }
        if o.build_id {
            fl |= flags::BUILD_ID;
        }
    }
    if let Some(c) = o.clockid {
        fl |= flags::USE_CLOCKID;
        a.set_u32(92, c as u32);
    }
    a.set_u64(40, fl);
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfs_default_attr_for_cpu_clock_with_g() {
        // perf record -e cpu-clock -F 999 -g -- cmd  (format notes 2.3)
        let ev = EventSpec::parse("cpu-clock").unwrap();
        let o = AttrOptions {
            sampling: Sampling::Frequency(999),
            call_graph: CallGraph::FramePointer,
            with_id: false,
            with_cpu: false,
            inherit: true,
            enable_on_exec: true,
            switch_events: false,
            build_id: false,
            sampling_explicit: true,
            clockid: None,
        };
        let a = build_attr(&ev, &o, true);
        assert_eq!(a.sample_type(), 0x127);
        assert_eq!(a.read_format(), 0x14);
        assert_eq!(a.flags(), 0x61943703);
        assert_eq!(a.raw.len(), 128);
    }

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
