//! Question: does the dwarf stack cutter (`push::stack_cut`) cut exactly as
//! the reference model does, and, whatever bytes a ring region holds, never
//! panic, keep its edits in order and inside the region, and never lengthen
//! the stream?
//!
//! Half of each input seeds the model of tests/it/stack_cut/model.rs (events
//! of random layouts, their samples as the kernel writes them and as the cut
//! must leave them), whose bytes are then damaged by the other half: where
//! nothing was damaged the output must equal the model's cut exactly.
#![no_main]

#[path = "../../tests/it/stack_cut/model.rs"]
mod model;

use libfuzzer_sys::fuzz_target;
use perfz::codecs::Input;
use perfz::{for_each_slice, Edit, StackCut};

fuzz_target!(|input: (u64, u8, u16, Vec<(u16, u64)>)| {
    let (seed, n, wrap, damage) = input;
    let mut rng = model::Rng(seed);
    let events = model::events(&mut rng);
    let attrs = model::attrs(&events);
    let Ok(Some(t)) = StackCut::for_attrs(&attrs) else {
        return;
    };
    let model = model::stream(&mut rng, &events, 1 + n as usize % 16);
    let mut data = model.whole.concat();
    let mut damaged = false;
    for &(at, v) in damage.iter().take(8) {
        let at = at as usize / 8 * 8;
        if at + 8 <= data.len() {
            data[at..at + 8].copy_from_slice(&v.to_le_bytes());
            damaged = true;
        }
    }
    let k = (wrap as usize * 8).min(data.len());
    let region = Input::two(&data[..k], &data[k..]);
    let mut edits = Vec::new();
    let walked = t.edits(region, &mut edits);
    let mut at = 0;
    for e in &edits {
        let (from, len) = match *e {
            Edit::Replace { at, .. } => (at, 8),
            Edit::Skip { at, len } => (at, len),
        };
        assert!(from >= at, "edits out of order or overlapping");
        at = from + len;
        assert!(at <= data.len(), "edit past the region");
    }
    let mut out = Vec::new();
    for_each_slice(region, &edits, |p| {
        out.extend_from_slice(p);
        Ok::<(), ()>(())
    })
    .unwrap();
    assert_eq!(out.len() as u64 + walked.dropped, data.len() as u64);
    if !damaged {
        assert!(model.accepts_all(&out), "the cut differs from the model's");
    }
});
