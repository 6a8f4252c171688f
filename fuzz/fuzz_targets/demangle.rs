//! Question: whatever a symbol's name holds (an ELF symbol's, a line of a
//! JIT's /tmp/perf-PID.map: any bytes, read lossily as export reads
//! them), does `export::demangle` end without a panic, its text no longer
//! than the name itself or the 16 KiB bound on demangled text (with
//! `@plt`)?
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let name = String::from_utf8_lossy(data);
    let d = perfz::demangle(&name);
    assert!(
        d.len() <= name.len().max((16 << 10) + "@plt".len()),
        "{} bytes of name demangled to {} bytes",
        name.len(),
        d.len()
    );
});
