//! Serializes, searches and compresses until the process has used SECONDS
//! of CPU time (however busy the machine): `rustapp SECONDS`.
use std::io::Write;
use std::time::Duration;

fn cpu_time() -> Duration {
    let mut ts = libc_timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { clock_gettime(2, &mut ts) }; // CLOCK_PROCESS_CPUTIME_ID
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

#[repr(C)]
struct libc_timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut libc_timespec) -> i32;
}

#[inline(never)]
fn serialize(n: usize) -> String {
    let v: Vec<serde_json::Value> = (0..n)
        .map(|i| serde_json::json!({"id": i, "name": format!("item-{i}"), "tags": ["a", "b"]}))
        .collect();
    serde_json::to_string(&v).unwrap()
}

#[inline(never)]
fn search(text: &str, re: &regex::Regex) -> usize {
    re.find_iter(text).count()
}

#[inline(never)]
fn compress(text: &str) -> usize {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text.as_bytes()).unwrap();
    e.finish().unwrap().len()
}

fn main() {
    let seconds: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let limit = Duration::from_secs_f64(seconds);
    let re = regex::Regex::new(r#""name":"item-[0-9]*7""#).unwrap();
    let mut sink = 0;
    while cpu_time() < limit {
        let text = serialize(2000);
        sink += search(&text, &re);
        sink += compress(&text);
    }
    std::hint::black_box(sink);
}
