//! Question: does the spec parser ever panic, and does every spec it accepts
//! display to a string that parses back to the same spec?
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfz_codecs::CodecSpec;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(spec) = CodecSpec::parse_grammar(s) {
        let shown = spec.to_string();
        assert_eq!(
            CodecSpec::parse_grammar(&shown).unwrap(),
            spec,
            "{s:?} -> {shown:?}"
        );
    }
});
