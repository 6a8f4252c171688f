// Build: rustc -O -g -C force-frame-pointers=yes -o rust rust.rs   Run: ./rust SECONDS
// The export tests' Rust workload: generics, closures, traits and std
// collections, busy until the process has used SECONDS of CPU time
// (however busy the machine).
use std::collections::{BTreeMap, HashMap};
use std::hint::black_box;
use std::time::Duration;

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

fn cpu_time() -> Duration {
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { clock_gettime(2, &mut ts) }; // CLOCK_PROCESS_CPUTIME_ID
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

trait Shape {
    fn area(&self, n: u32) -> f64;
}
struct Square(f64);
impl Shape for Square {
    #[inline(never)]
    fn area(&self, n: u32) -> f64 {
        (0..n).map(|i| self.0 * self.0 + i as f64).sum()
    }
}

#[inline(never)]
fn sort_it<T: Ord + Copy, F: Fn(&T, &T) -> std::cmp::Ordering>(v: &mut [T], f: F) {
    v.sort_by(f);
}

#[inline(never)]
fn fill<K: Ord + From<u32>>(n: u32) -> usize {
    let mut m = BTreeMap::new();
    for i in 0..n {
        m.insert(K::from(i * 7919 % 1000), i.to_string());
    }
    m.len()
}

#[inline(never)]
fn hash_words(n: u32) -> usize {
    let mut h = HashMap::new();
    for i in 0..n {
        *h.entry(format!("w{}", i % 97)).or_insert(0u32) += 1;
    }
    h.len()
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let limit = Duration::from_secs_f64(secs);
    let shapes: Vec<Box<dyn Shape>> = (0..8).map(|i| Box::new(Square(i as f64)) as Box<dyn Shape>).collect();
    let mut round = 0u32;
    let work = |r: u32| {
        let mut v: Vec<u32> = (0..2000u32).map(|i| i.wrapping_mul(2654435761).wrapping_add(r) % 10007).collect();
        sort_it(&mut v, |a, b| b.cmp(a));
        fill::<u64>(500) + hash_words(300) + shapes.iter().map(|s| s.area(200)).sum::<f64>() as usize
    };
    while cpu_time() < limit {
        black_box(work(round));
        round += 1;
    }
}
