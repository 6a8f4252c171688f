use super::*;
use crate::event::events::EventSpec;

#[test]
fn off_cpu_rings_hold_the_switch_stream_too() {
    let dwarf = RecordOptions {
        call_graph: CallGraph::Dwarf(8192),
        ..Default::default()
    };
    let mut off = dwarf.clone();
    off.events.push(EventSpec::off_cpu());
    let (plain, _) = ring_pages(&dwarf, 2);
    let (with, note) = ring_pages(&off, 2);
    assert_eq!(with, 2 * plain, "{note:?}");
    assert!(note.unwrap().contains("--off-cpu's switch-outs"));
    // Frame pointers: 8x perf's default.
    let mut fp = off.clone();
    fp.call_graph = CallGraph::FramePointer;
    assert_eq!(ring_pages(&fp, 2).0, 8 * ring::default_pages());
}
