//! Errors of the option parsers (`-e`, `--call-graph`, `-m`, sizes, CPU
//! lists): one variant per way an option can be wrong, each saying what to
//! write instead.

/// A command-line option that cannot be used as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// `-e NAME` names no event perfz knows (nor a tracepoint).
    #[error("unknown event {name:?}; there are: {known}")]
    UnknownEvent {
        /// The event as written.
        name: String,
        /// The names that exist, for the message.
        known: String,
    },
    /// An event's `:mods` has a letter perf does not know.
    #[error("unknown modifier {modifier:?} in {event:?}; perf's modifiers are u (user), k (kernel), h (hypervisor), G (guest), H (host), p/pp/ppp (precise), P (max precise), D (pinned), and S on a group")]
    UnknownModifier {
        /// The event as written.
        event: String,
        /// The unknown modifier letter.
        modifier: String,
    },
    /// A `-e` item that does not parse, or asks for something impossible.
    #[error("-e {event:?}: {why}")]
    EventSyntax {
        /// The `-e` item as written.
        event: String,
        /// What is wrong with it.
        why: String,
    },
    /// `--call-graph` names no method perfz knows.
    #[error("--call-graph {0:?}: use fp, dwarf[,SIZE] or lbr")]
    CallGraph(String),
    /// `--call-graph lbr` on a machine without last branch records.
    #[error("--call-graph lbr needs the CPU's last branch records (Intel LBR), and this machine's PMU has none (no /sys/bus/event_source/devices/cpu/caps/branches); use --call-graph fp or dwarf")]
    NoLbr,
    /// `--call-graph dwarf` on an architecture whose user registers perfz
    /// does not know.
    #[error("--call-graph dwarf: perfz does not know which user registers to sample on {0} (it knows x86_64, aarch64, riscv64); use --call-graph fp")]
    DwarfArch(String),
    /// The dwarf stack dump size is not a multiple of 8 in 8..=65528.
    #[error("dwarf stack size {0} must be a multiple of 8 in 8..=65528")]
    DwarfStackSize(u64),
    /// A size or duration that does not parse.
    #[error(transparent)]
    Quantity(#[from] crate::quantity::QuantityError),
    /// `-m` is not a power-of-two number of pages up to 2^20.
    #[error(
        "-m {input}: the ring needs a power-of-two number of pages (1..=1048576), got {pages}"
    )]
    MmapPages {
        /// The `-m` value as written (pages, or a size).
        input: String,
        /// The pages it came to.
        pages: u64,
    },
    /// A CPU list (`-C`, or one read from sysfs) with a part that is not `N` or `N-M`.
    #[error("bad CPU list {list:?}: {part:?} is not N or N-M")]
    CpuList {
        /// The list as written.
        list: String,
        /// The part that is wrong.
        part: String,
    },
}
