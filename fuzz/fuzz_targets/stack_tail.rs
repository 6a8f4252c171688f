//! Question: whatever bytes a ring region holds, does cutting dwarf samples
//! to their written stack stay inside the region, keep edits in order, never
//! lengthen the stream, and change bytes only inside SAMPLE records whose
//! stack it understood (every other record passes through unchanged)?
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfz::codecs::Input;
use perfz::format::attr::sample_type as st;
use perfz::push::stack_tail::{for_each_piece, Edit, StackTail};

fuzz_target!(|input: (u16, u8, u16, Vec<u8>)| {
    let (wrap, regs, bits, mut data) = input;
    data.truncate(data.len() / 8 * 8);
    // Sample types around the dwarf one: optional id/cpu/callchain/regs.
    let mut stype = st::IP | st::TID | st::TIME | st::PERIOD | st::STACK_USER;
    for (i, b) in [st::ID, st::CPU, st::CALLCHAIN, st::REGS_USER, st::IDENTIFIER]
        .iter()
        .enumerate()
    {
        if bits & (1 << i) != 0 {
            stype |= b;
        }
    }
    let Some(t) = StackTail::for_samples(stype, regs as u64) else {
        return;
    };
    let k = (wrap as usize * 8).min(data.len());
    let region = Input::two(&data[..k], &data[k..]);
    let mut edits = Vec::new();
    let dropped = t.edits(region, &mut edits);
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
    for_each_piece(region, &edits, |p| {
        out.extend_from_slice(p);
        Ok::<(), ()>(())
    })
    .unwrap();
    assert_eq!(out.len() as u64 + dropped, data.len() as u64);
});
