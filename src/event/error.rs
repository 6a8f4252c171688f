//! Errors of the option parsers (`-e`, `--call-graph`, `-m`, sizes, CPU
//! lists): one variant per way an option can be wrong, each saying what to
//! write instead.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    #[error("unknown event {name:?}; there are: {known}")]
    UnknownEvent { name: String, known: String },
    #[error("unknown modifier {modifier:?} in {event:?}; perf's modifiers are u (user), k (kernel), h (hypervisor), G (guest), H (host), p/pp/ppp (precise), P (max precise), D (pinned), and S on a group")]
    UnknownModifier { event: String, modifier: String },
    #[error("-e {event:?}: {why}")]
    EventSyntax { event: String, why: String },
    #[error("--call-graph {0:?}: use fp, dwarf[,SIZE] or lbr")]
    CallGraph(String),
    #[error("--call-graph lbr needs the CPU's last branch records (Intel LBR), and this machine's PMU has none (no /sys/bus/event_source/devices/cpu/caps/branches); use --call-graph fp or dwarf")]
    NoLbr,
    #[error("--call-graph dwarf: perfz does not know which user registers to sample on {0} (it knows x86_64, aarch64, riscv64); use --call-graph fp")]
    DwarfArch(String),
    #[error("dwarf stack size {0} must be a multiple of 8 in 8..=65528")]
    DwarfStackSize(u64),
    #[error(transparent)]
    Unit(#[from] crate::units::UnitError),
    #[error(
        "-m {input}: the ring needs a power-of-two number of pages (1..=1048576), got {pages}"
    )]
    MmapPages { input: String, pages: u64 },
    #[error("bad CPU list {list:?}: {part:?} is not N or N-M")]
    CpuList { list: String, part: String },
}
