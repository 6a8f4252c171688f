//! The event's own terms on its attr, as perf 7.3 records them (each case
//! checked against `perf evlist -v` of perf 7.3's recording; the
//! integration test tests/it/event_terms.rs does it on this machine).

use super::*;
use crate::event::events::Terms;
use crate::format::attr::TYPE_TRACEPOINT;

fn options(call_graph: CallGraph) -> AttrOptions {
    AttrOptions {
        sampling: Sampling::Frequency(4000),
        call_graph,
        with_id: false,
        with_cpu: true,
        inherit: true,
        enable_on_exec: true,
        switch_events: false,
        build_id: false,
        sampling_explicit: false,
        clockid: None,
        with_period: false,
        extra: ExtraAttr::default(),
    }
}

fn switch(terms: Terms) -> EventSpec {
    let mut e = EventSpec::new("sched:sched_switch", TYPE_TRACEPOINT, 0x174);
    e.sampling = Some(Sampling::Period(1));
    e.sampling_is_default = true;
    e.tracepoint = Some(crate::event::tracefs::Tracepoint {
        sys: "sched".into(),
        name: "sched_switch".into(),
        id: 0x174,
    });
    e.terms = terms;
    e
}

fn max_stack(a: &Attr) -> u16 {
    u16::from_le_bytes([a.raw[108], a.raw[109]])
}

const TP: u64 = st::IP | st::TID | st::TIME | st::CPU | st::PERIOD | st::RAW;

#[test]
fn max_stack_alone_is_a_frame_pointer_chain_of_that_depth() {
    let ev = switch(Terms {
        max_stack: 3,
        ..Terms::default()
    });
    let a = build_attr(&ev, &options(CallGraph::None), true);
    assert_eq!(a.sample_type(), TP | st::CALLCHAIN);
    assert_eq!(max_stack(&a), 3);
    assert_eq!(a.raw[110..112], [0, 0], "the reserved u16 after it");
}

#[test]
fn a_dwarf_term_samples_registers_stack_and_addresses() {
    let ev = switch(Terms {
        call_graph: Some(CallGraph::Dwarf(8192)),
        stack_size: 4096,
        max_stack: 8,
        ..Terms::default()
    });
    let o = options(CallGraph::None);
    let a = build_attr(&ev, &o, true);
    let dwarf = st::CALLCHAIN | st::REGS_USER | st::STACK_USER | st::ADDR | st::DATA_SRC;
    assert_eq!(a.sample_type(), TP | dwarf);
    assert_eq!(
        (a.sample_regs_user(), a.sample_stack_user()),
        (0xff0fff, 4096)
    );
    assert_eq!(max_stack(&a), 8);
    assert_ne!(a.flags() & flags::EXCLUDE_CALLCHAIN_USER, 0);
    assert_ne!(
        a.flags() & flags::MMAP_DATA,
        0,
        "data mmaps on the tracking event"
    );
    let b = build_attr(&ev, &o, false);
    assert_eq!(b.flags() & flags::MMAP_DATA, 0, "and on it only");
}

#[test]
fn the_sessions_call_graph_gives_way_as_perfs_does() {
    // -g with stack-size alone: no call chain at all (perf's param stays
    // disabled once the term is seen).
    let ev = switch(Terms {
        stack_size: 4096,
        ..Terms::default()
    });
    let a = build_attr(&ev, &options(CallGraph::FramePointer), true);
    assert_eq!(a.sample_type() & st::CALLCHAIN, 0);
    // --call-graph dwarf with call-graph=fp: the chain stays, the
    // registers and stack go; perf leaves the register mask, the dump size,
    // exclude_callchain_user and ADDR|DATA_SRC set.
    let ev = switch(Terms {
        call_graph: Some(CallGraph::FramePointer),
        ..Terms::default()
    });
    let a = build_attr(&ev, &options(CallGraph::Dwarf(8192)), true);
    assert_eq!(a.sample_type() & (st::REGS_USER | st::STACK_USER), 0);
    assert_ne!(a.sample_type() & st::CALLCHAIN, 0);
    assert_eq!(
        (a.sample_regs_user(), a.sample_stack_user()),
        (0xff0fff, 8192)
    );
    // call-graph=no: none, whatever -g says.
    let ev = switch(Terms {
        call_graph: Some(CallGraph::None),
        ..Terms::default()
    });
    let a = build_attr(&ev, &options(CallGraph::FramePointer), true);
    assert_eq!(a.sample_type(), TP);
}

#[test]
fn inherit_terms_win_over_the_session() {
    let mut o = options(CallGraph::None);
    o.inherit = false;
    let on = switch(Terms {
        inherit: Some(true),
        ..Terms::default()
    });
    assert_ne!(build_attr(&on, &o, true).flags() & flags::INHERIT, 0);
    o.inherit = true;
    let off = switch(Terms {
        inherit: Some(false),
        ..Terms::default()
    });
    assert_eq!(build_attr(&off, &o, true).flags() & flags::INHERIT, 0);
}

#[test]
fn events_whose_ids_would_sit_apart_sample_identifier() {
    let mut o = options(CallGraph::None);
    o.with_id = true;
    let plain = EventSpec::parse("cpu-clock").unwrap();
    let dwarf = switch(Terms {
        call_graph: Some(CallGraph::Dwarf(8192)),
        ..Terms::default()
    });
    let fp = switch(Terms {
        max_stack: 3,
        ..Terms::default()
    });
    assert!(ids_apart(&[plain.clone(), dwarf.clone()], &o, false));
    assert!(
        ids_apart(std::slice::from_ref(&dwarf), &o, true),
        "the tracking dummy's is elsewhere"
    );
    assert!(!ids_apart(&[dwarf.clone(), dwarf], &o, false));
    assert!(!ids_apart(&[plain.clone(), fp], &o, true));
    o.extra.sample_type |= st::IDENTIFIER;
    let a = build_attr(&plain, &o, true);
    assert_eq!(
        a.sample_type() & (st::ID | st::IDENTIFIER),
        st::IDENTIFIER,
        "one or the other, as perf's"
    );
}
