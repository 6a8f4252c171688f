//! The attr perfz opens for an event: built as perf 6.1 builds it, from the
//! event's spec and what every event of the session shares.
//!
//! Checked against the fixtures with `perf evlist -v`: tracepoints sample
//! RAW, CPU and PERIOD; a `:S` group's leader samples READ with
//! read_format GROUP, its members have sample_period 0 and are not
//! disabled (they start with the leader, which event/open.rs passes as
//! their group_fd); inherit is off for leader sampling, as perf 6.1 has it.

use super::events::{user_regs_mask, CallGraph, EventSpec, Sampling};
use crate::format::attr::{flags, read_format as rf, sample_type as st, Attr};
use crate::format::sample::id_offset;

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
    /// `--off-cpu`: every sample carries its period (the off-CPU samples'
    /// nanoseconds), so every event's samples keep one layout.
    pub with_period: bool,
    /// What perf record's sample and attr options add to every event.
    pub extra: ExtraAttr,
}

/// What `perf record`'s options add to every event's attr, as perf 6.12's
/// `evsel__config` adds it: sample fields (`-d`, `-P`, `-R`, `-W`,
/// `--sample-cpu`, ...), attr flags (`-s`, `--all-user`, ...), the tracking
/// event's records (`--namespaces`, `--all-cgroups`, `--no-bpf-event`) and
/// wake-ups (`--no-buffering`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExtraAttr {
    /// `sample_type` bits every event adds.
    pub sample_type: u64,
    /// Attr flags every event adds.
    pub flags: u64,
    /// Attr flags every event drops (`--all-kernel` drops `exclude_kernel`).
    pub(crate) flags_off: u64,
    /// Attr flags every event with call chains adds (`--user-callchains`).
    pub(crate) callchain_flags: u64,
    /// Attr flags the tracking event adds.
    pub(crate) tracking_flags: u64,
    /// Attr flags the tracking event drops (`--no-bpf-event`).
    pub(crate) tracking_flags_off: u64,
    /// `read_format` bits every event adds (`--running-time`).
    pub read_format: u64,
    /// `--no-buffering`: wake the reader at every record (`wakeup_events`).
    pub wakeup_events: u32,
    /// `--user-regs`: the user registers samples carry.
    pub sample_regs_user: u64,
    /// `-I`/`--intr-regs`: the registers at the interrupt samples carry.
    pub(crate) sample_regs_intr: u64,
    /// `-b`/`-j`: the branches a sample's branch stack holds.
    pub branch_sample_type: u64,
    /// `-n`: events count but never sample (period 0).
    pub(crate) no_samples: bool,
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
    let mut fl = flags::SAMPLE_ID_ALL | modifier_flags(ev, member);
    let (sampling_type, sampling_flags) = set_sampling(&mut a, ev, o, member && sample_read);
    sample_type |= sampling_type;
    fl |= sampling_flags;
    if ev.tracepoint.is_some() {
        // perf's tracepoint defaults: the raw payload, its CPU and period.
        sample_type |= st::RAW | st::CPU | st::PERIOD;
    }
    if sample_read {
        sample_type |= st::READ;
    }
    let (cg_sample_type, cg_flags) = set_call_graph(&mut a, o.call_graph);
    sample_type |= cg_sample_type;
    fl |= cg_flags;
    sample_type |= options_sample_type(o);
    fl = add_extra(&mut a, o, fl);
    fl |= off_cpu_flags(ev, o);
    a.set_u64(24, sample_type);
    a.set_u64(
        32,
        rf::ID | rf::LOST | if sample_read { rf::GROUP } else { 0 } | o.extra.read_format,
    );
    // perf 6.1 turns inherit off for leader sampling (kernels before 6.12
    // refuse inherit with PERF_SAMPLE_READ).
    if o.inherit && !sample_read {
        fl |= flags::INHERIT;
    }
    if o.enable_on_exec && !member {
        fl |= flags::ENABLE_ON_EXEC;
    }
    if tracking {
        fl = (fl | tracking_flags(o) | o.extra.tracking_flags) & !o.extra.tracking_flags_off;
    }
    if let Some(c) = o.clockid {
        fl |= flags::USE_CLOCKID;
        a.set_u32(92, c as u32);
    }
    a.set_u64(40, fl);
    apply_terms(&mut a, ev, o, tracking);
    a
}

/// `ev`'s sampling (its own, or the options' where it has none or only
/// the default while `-c`/`-F` was given) set in `a`: the period or
/// frequency (0 with `-n`). Returns the sample type and flag bits it adds;
/// `leader_samples`: a member of a leader-sampling group, which does not
/// sample.
fn set_sampling(a: &mut Attr, ev: &EventSpec, o: &AttrOptions, leader_samples: bool) -> (u64, u64) {
    let sampling = match ev.sampling {
        Some(s) if !ev.sampling_is_default || !o.sampling_explicit => s,
        _ => o.sampling,
    };
    match sampling {
        // In a leader-sampling group the members do not sample.
        _ if leader_samples => (st::PERIOD, 0),
        Sampling::Frequency(hz) => {
            // -n: no samples (perf zeroes the period; freq stays).
            a.set_u64(16, if o.extra.no_samples { 0 } else { hz });
            (st::PERIOD, flags::FREQ)
        }
        Sampling::Period(p) => {
            a.set_u64(16, if o.extra.no_samples { 0 } else { p });
            (0, 0)
        }
    }
}

/// The sample type bits the options add to every event: its id, CPU and
/// period where asked, and the extra bits.
fn options_sample_type(o: &AttrOptions) -> u64 {
    let mut sample_type = 0;
    // IDENTIFIER names the event where the samples carry it (as perf's
    // evsel__set_sample_id: one or the other).
    if o.with_id && o.extra.sample_type & st::IDENTIFIER == 0 {
        sample_type |= st::ID;
    }
    if o.with_cpu {
        sample_type |= st::CPU;
    }
    if o.with_period {
        sample_type |= st::PERIOD;
    }
    sample_type | o.extra.sample_type
}

/// Whether the events' samples (with a tracking `dummy` after them, where
/// `dummy`) would carry their id at different places: a per-event dwarf
/// call graph puts ADDR before it. Then they all sample IDENTIFIER first,
/// as perf's do where its events' sample types differ.
pub fn ids_apart(events: &[EventSpec], o: &AttrOptions, dummy: bool) -> bool {
    let plain = EventSpec::new("dummy", crate::format::attr::TYPE_SOFTWARE, 9);
    let mut at = events
        .iter()
        .chain(dummy.then_some(&plain))
        .map(|e| id_offset(build_attr(e, o, false).sample_type()));
    let first = at.next();
    o.with_id && at.any(|x| Some(x) != first)
}

/// `--off-cpu`'s event: its switch records, and user frames only with
/// fp, as perf's --off-cpu (the kernel part is the scheduler's, the same
/// for every wait).
fn off_cpu_flags(ev: &EventSpec, o: &AttrOptions) -> u64 {
    if !ev.off_cpu {
        return 0;
    }
    let fp = o.call_graph == CallGraph::FramePointer;
    flags::CONTEXT_SWITCH
        | if fp {
            flags::EXCLUDE_CALLCHAIN_KERNEL
        } else {
            0
        }
}

/// The event's own terms (`ev/call-graph=dwarf,max-stack=8/`) over what
/// the session set, as perf's evsel__apply_config_terms: `inherit` /
/// `no-inherit` decide inherit; a call-graph term (`max-stack` alone is
/// `call-graph=fp`, `stack-size` alone none) takes the session's call
/// chain bits off, leaving its registers, stack size and flags as perf
/// leaves them, and puts the event's on, `max-stack` as sample_max_stack
/// and, in dwarf mode, ADDR, DATA_SRC and (on the tracking event) data
/// mmaps.
fn apply_terms(a: &mut Attr, ev: &EventSpec, o: &AttrOptions, tracking: bool) {
    let t = &ev.terms;
    let mut fl = a.flags();
    match t.inherit {
        Some(true) => fl |= flags::INHERIT,
        Some(false) => fl &= !flags::INHERIT,
        None => {}
    }
    a.set_u64(40, fl);
    if t.call_graph.is_none() && t.stack_size == 0 && t.max_stack == 0 {
        return;
    }
    let mode = match (t.call_graph, t.max_stack) {
        (Some(CallGraph::Dwarf(_)), _) if t.stack_size > 0 => CallGraph::Dwarf(t.stack_size),
        (Some(cg), _) => cg,
        (None, 0) => CallGraph::None,
        (None, _) => CallGraph::FramePointer,
    };
    let mut sample_type = a.sample_type();
    sample_type &= !match o.call_graph {
        CallGraph::None => 0,
        CallGraph::FramePointer => st::CALLCHAIN,
        CallGraph::Dwarf(_) => st::CALLCHAIN | st::REGS_USER | st::STACK_USER,
        CallGraph::Lbr => {
            // USER, CALL_STACK and HW_INDEX: perf leaves the rest.
            a.set_u64(72, a.branch_sample_type() & !(1 | 1 << 11 | 1 << 17));
            st::CALLCHAIN | st::BRANCH_STACK
        }
    };
    if mode != CallGraph::None {
        sample_type |= st::CALLCHAIN;
        // sample_max_stack is the u16 at 108; the u16 after it is reserved.
        a.set_u32(108, u32::from(t.max_stack));
        fl |= o.extra.callchain_flags;
    }
    match mode {
        CallGraph::Lbr => {
            sample_type |= st::BRANCH_STACK;
            a.set_u64(72, LBR_BRANCH_SAMPLE_TYPE);
        }
        CallGraph::Dwarf(size) => {
            sample_type |= st::REGS_USER | st::STACK_USER | st::ADDR | st::DATA_SRC;
            // Checked when the term was parsed.
            a.set_u64(80, a.sample_regs_user() | user_regs_mask().unwrap_or(0));
            a.set_u32(88, size);
            fl |= flags::EXCLUDE_CALLCHAIN_USER;
            fl = if tracking {
                fl | flags::MMAP_DATA
            } else {
                fl & !flags::MMAP_DATA
            };
        }
        CallGraph::None | CallGraph::FramePointer => {}
    }
    a.set_u64(24, sample_type);
    a.set_u64(40, fl);
}

/// Sets the fields perf record's options ask of every event
/// ([`ExtraAttr`]); returns `fl` with their flags.
fn add_extra(a: &mut Attr, o: &AttrOptions, fl: u64) -> u64 {
    let x = &o.extra;
    let mut fl = (fl | x.flags) & !x.flags_off;
    if o.call_graph != CallGraph::None {
        fl |= x.callchain_flags;
    }
    if x.sample_regs_user != 0 {
        a.set_u64(80, a.sample_regs_user() | x.sample_regs_user);
    }
    if x.sample_regs_intr != 0 {
        a.set_u64(96, x.sample_regs_intr);
    }
    if x.branch_sample_type != 0 {
        a.set_u64(72, x.branch_sample_type);
    }
    if x.wakeup_events != 0 {
        a.set_u32(48, x.wakeup_events);
    }
    fl
}

/// The attr flags of an event's modifiers (`:u`, `:k`, `:p`, ...); group
/// members start with their leader, so only a leader starts disabled.
fn modifier_flags(ev: &EventSpec, member: bool) -> u64 {
    let mut fl = 0;
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
    if ev.exclude_user {
        fl |= 1 << 4;
    }
    if ev.exclude_kernel {
        fl |= 1 << 5;
    }
    fl | (ev.precise.min(3) as u64) << 15
}

/// The flags of the event that tracks the side band: maps, names, tasks
/// (and context switches, build ids, where asked).
fn tracking_flags(o: &AttrOptions) -> u64 {
    let mut fl = flags::MMAP
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
    fl
}

/// Sets the attr's fields for call graph `cg`; returns the sample_type
/// bits and the flags it needs.
fn set_call_graph(a: &mut Attr, cg: CallGraph) -> (u64, u64) {
    match cg {
        CallGraph::None => (0, 0),
        CallGraph::FramePointer => (st::CALLCHAIN, 0),
        CallGraph::Dwarf(size) => {
            // Checked when --call-graph was parsed.
            a.set_u64(80, user_regs_mask().unwrap_or(0));
            a.set_u32(88, size);
            // Unwinding reads .eh_frame_hdr, which sits in a non-executable
            // mapping: perf asks for data mmaps in dwarf mode, and so do we;
            // perf's dwarf mode samples addresses too (`-d`: ADDR, DATA_SRC).
            (
                st::CALLCHAIN | st::REGS_USER | st::STACK_USER | st::ADDR | st::DATA_SRC,
                flags::EXCLUDE_CALLCHAIN_USER | flags::MMAP_DATA,
            )
        }
        CallGraph::Lbr => {
            a.set_u64(72, LBR_BRANCH_SAMPLE_TYPE);
            (st::CALLCHAIN | st::BRANCH_STACK, 0)
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod terms_tests;
