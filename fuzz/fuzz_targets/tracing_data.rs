//! Question: whatever bytes a file's HEADER_TRACING_DATA (or a pipe's
//! tracing data record) holds, does walking its layout end without a panic,
//! and never claim to end past the bytes it was given?
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfz::format::tracing_data::{length, systems_of};

fuzz_target!(|data: &[u8]| {
    if let Some(n) = length(data) {
        assert!(n <= data.len());
    }
    if let Some(s) = systems_of(data) {
        assert_eq!(length(data), Some(data.len()));
        assert!(s.len() <= data.len());
    }
});
