//! Question: whatever head/tail positions and buffer size the ring reader is
//! given (wrapping counters, a reader behind by more than the buffer, sizes
//! that are not powers of two), are the regions it computes always inside the
//! buffer and never longer than it?
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfz::event::ring::split;

fuzz_target!(|steps: Vec<(u64, u64, u16)>| {
    for (tail, head, size) in steps {
        let size = size as usize;
        let (start, first, second) = split(tail, head, size);
        if size == 0 || !size.is_power_of_two() {
            assert_eq!((start, first, second), (0, 0, 0));
            continue;
        }
        assert!(start < size, "start {start} outside {size}");
        assert!(start + first <= size, "first piece runs past the end");
        assert!(second <= start || first + second <= size, "pieces overlap");
        assert!(first + second <= size, "region longer than the buffer");
        assert_eq!(
            (first + second) as u64,
            head.wrapping_sub(tail).min(size as u64)
        );
        if second > 0 {
            assert_eq!(
                start + first,
                size,
                "a wrapped region's first piece ends at the buffer end"
            );
        }
    }
});
