//! Question: does reading arbitrary bytes as a perf.data (file or pipe mode:
//! the header decides) ever panic or allocate without bound? Every record is
//! walked, every SAMPLE decoded, and the stats gathered, as `perfz stat` does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfz::format::{PerfReader, RecordType};

fuzz_target!(|data: &[u8]| {
    let Ok(mut r) = PerfReader::from_bytes(data.to_vec()) else {
        return;
    };
    let _ = r.features.event_desc();
    let _ = r.features.cmdline();
    let _ = r.features.build_ids();
    let _ = r.features.compressed();
    let mut n = 0u64;
    loop {
        match r.next_record() {
            Ok(Some((rec, meta))) => {
                // An AUXTRACE carries its trace after its header's size.
                let size = rec.header.size as usize;
                assert!(size >= 8);
                if rec.header.type_ == RecordType::AUXTRACE {
                    assert!(rec.bytes.len() >= size && (rec.bytes.len() - size) % 8 == 0);
                } else {
                    assert_eq!(rec.bytes.len(), size);
                }
                if rec.header.type_ == RecordType::SAMPLE {
                    let _ = meta.parse_sample(&rec);
                }
                n += 1;
                // Every record consumes at least 8 input bytes or comes out of a
                // decoder bounded by mmap_len: no endless stream from finite input.
                assert!(n < 1 << 24);
            }
            Ok(None) | Err(_) => break,
        }
    }
});
