//! After construction, compressing never allocates — proved with a counting
//! global allocator. libzstd's own allocations are routed through Rust's
//! allocator (zstd-safe's `with-rust-allocator`), so they are counted too.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use crate::util::*;
use perfz_codecs::{Codec, CodecVisitor, Input, MAX_RECORD_PAYLOAD};

struct Counting;

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

fn note() {
    // try_with: the thread-local may already be gone while a thread exits.
    let _ = ARMED.try_with(|armed| {
        if armed.get() {
            let _ = COUNT.try_with(|c| c.set(c.get() + 1));
        }
    });
}

// SAFETY: forwards every call to the system allocator unchanged; the counting
// touches only const-initialised thread-locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: same contract as ours, passed through.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours, passed through.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: same contract as ours, passed through.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Counts the allocations made by this thread while `f` runs.
fn allocations_in(f: impl FnOnce()) -> usize {
    COUNT.with(|c| c.set(0));
    ARMED.with(|a| a.set(true));
    f();
    ARMED.with(|a| a.set(false));
    COUNT.with(|c| c.get())
}

struct PushMany<'a>(&'a [u8]);

impl CodecVisitor for PushMany<'_> {
    type Output = usize;
    fn visit<C: Codec + Send + 'static>(self, mut codec: C) -> usize {
        let mut dst = vec![0u8; MAX_RECORD_PAYLOAD];
        let max_in = codec.max_input(MAX_RECORD_PAYLOAD);
        let data = self.0;
        allocations_in(|| {
            // Varying sizes and wrap points, from 1 byte up to a full record.
            for (i, size) in [1usize, 7, 4096, 33_000, max_in, 100, max_in]
                .iter()
                .enumerate()
            {
                let chunk = &data[i * 1000..i * 1000 + size];
                let k = (i * 977) % chunk.len();
                let n = codec
                    .compress(Input::two(&chunk[..k], &chunk[k..]), &mut dst)
                    .unwrap();
                assert!(n > 0);
            }
            // The output-driven path (streaming zstd): a whole 150 KB push
            // cut into record windows.
            let mut rest = Input::two(&data[..50_000], &data[50_000..150_000]);
            loop {
                let step = codec.stream(rest, &mut dst, true).unwrap();
                rest = rest.split_at(step.consumed).1;
                if step.done {
                    break;
                }
            }
        })
    }
}

#[test]
fn compress_never_allocates_after_construction() {
    let data = perf_like(200_000, 1);
    let random = random_bytes(200_000, 2);
    for spec in all_specs() {
        for input in [&data, &random] {
            let n = spec.visit(PushMany(input)).unwrap();
            assert_eq!(n, 0, "{spec}: {n} allocations while compressing");
        }
    }
}

#[test]
fn the_counter_sees_allocations() {
    // Guards the guard: if counting were broken, the test above would pass vacuously.
    let n = allocations_in(|| {
        let v: Vec<u8> = Vec::with_capacity(100);
        std::hint::black_box(v);
    });
    assert_eq!(n, 1);
    // And it sees libzstd's allocations: a fresh context allocates on first use.
    let n = allocations_in(|| {
        let codec = perfz_codecs::ZstdCodec::new(&perfz_codecs::ZstdParams::level(3)).unwrap();
        std::hint::black_box(codec);
    });
    assert!(n > 0, "zstd context creation was not seen");
}
