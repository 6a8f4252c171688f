//! Question: whatever bytes a mapped file holds (a truncated, hostile or
//! non-ELF file), does reading its build id from the ELF notes end without
//! a panic, read nothing out of bounds, and give at most 20 bytes?
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfz::build_id::{from_notes, of_bytes, MAX_SIZE};

fuzz_target!(|data: &[u8]| {
    if let Some(id) = of_bytes(data) {
        assert!(!id.is_empty() && id.len() <= MAX_SIZE);
    }
    for big in [false, true] {
        if let Some(id) = from_notes(data, big) {
            assert!(!id.is_empty() && id.len() <= MAX_SIZE);
        }
    }
});
