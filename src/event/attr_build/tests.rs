//! The attr perf builds for a plain `-g` recording.

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
        with_period: false,
        extra: ExtraAttr::default(),
    };
    let a = build_attr(&ev, &o, true);
    assert_eq!(a.sample_type(), 0x127);
    assert_eq!(a.read_format(), 0x14);
    assert_eq!(a.flags(), 0x61943703);
    assert_eq!(a.raw.len(), 128);
}
