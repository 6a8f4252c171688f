//! How long a drain thread waited for its CPU before it found samples lost:
//! woken, runnable, while another task held the CPU (a kernel thread that
//! does not yield, a busier task). That wait is the kernel's run delay of
//! the thread (`/proc/thread-self/schedstat`, its second field, in ns;
//! `CONFIG_SCHED_INFO`).
//!
//! A recording that loses nothing never reads it: the first loss arms the
//! probe, which from then on reads the run delay when the loop goes to
//! sleep, at most once a millisecond ([`MARK_EVERY`]; a read costs about
//! 2 µs). When a pass finds more losses, the wait since the second last of
//! those reads is the wait around the overflow: the kernel reports a loss
//! in a LOST record only once the drain has freed space, a pass or a sleep
//! after the drain came back. It includes the few µs each wake-up waits in
//! between, well under the half ring a wait must reach to matter. The
//! first loss of a recording is never measured.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

/// The least time between two reads of the run delay at sleeps.
pub const MARK_EVERY: Duration = Duration::from_millis(1);

/// Waits kept: a recording that loses this often has its answer already.
const WAITS_KEPT: usize = 4096;

/// Adds the waits of a later loop (or another drain thread) of the same
/// recording to `waits`, keeping the first [`WAITS_KEPT`].
pub fn add_waits(waits: &mut Vec<u64>, more: &[u64]) {
    let room = WAITS_KEPT.saturating_sub(waits.len());
    waits.extend(more.iter().take(room));
}

/// Where the run delay comes from: the thread's schedstat, or a test's.
pub trait RunDelay {
    /// The thread's run delay so far (ns), or None where it cannot be read.
    fn read(&mut self) -> Option<u64>;
}

/// This thread's `/proc/thread-self/schedstat`, opened on first use by the
/// thread that reads it (the drain thread).
#[derive(Default)]
pub struct SchedStat {
    file: Option<File>,
    failed: bool,
}

impl RunDelay for SchedStat {
    fn read(&mut self) -> Option<u64> {
        if self.failed {
            return None;
        }
        if self.file.is_none() {
            match File::open("/proc/thread-self/schedstat") {
                Ok(f) => self.file = Some(f),
                Err(_) => {
                    self.failed = true;
                    return None;
                }
            }
        }
        let mut buf = [0u8; 96];
        let n = self.file.as_ref()?.read_at(&mut buf, 0).ok()?;
        let v = parse_run_delay(&buf[..n]);
        self.failed = v.is_none();
        v
    }
}

/// The second field of a schedstat line ("run_ns wait_ns slices").
pub fn parse_run_delay(line: &[u8]) -> Option<u64> {
    std::str::from_utf8(line)
        .ok()?
        .split_ascii_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// The probe of one drain loop.
pub struct CpuWait<R: RunDelay = SchedStat> {
    source: R,
    armed: bool,
    /// The run delay read at the last two marks (older first), and when the
    /// last was read.
    marks: [u64; 2],
    marked: Option<Instant>,
    /// How long the drain had waited for its CPU before each pass that
    /// found new losses and was timed (ns; the first [`WAITS_KEPT`]).
    pub waits: Vec<u64>,
}

impl Default for CpuWait<SchedStat> {
    fn default() -> Self {
        CpuWait::new(SchedStat::default())
    }
}

impl<R: RunDelay> CpuWait<R> {
    pub fn new(source: R) -> Self {
        CpuWait {
            source,
            armed: false,
            marks: [0; 2],
            marked: None,
            waits: Vec::new(),
        }
    }

    /// The loop is about to sleep, at `at`.
    pub fn sleeping(&mut self, at: Instant) {
        if !self.armed
            || self
                .marked
                .is_some_and(|m| at.duration_since(m) < MARK_EVERY)
        {
            return;
        }
        if let Some(now) = self.source.read() {
            self.marks = [self.marks[1], now];
            self.marked = Some(at);
        }
    }

    /// A pass found new losses.
    pub fn lost(&mut self) {
        let Some(now) = self.source.read() else {
            return;
        };
        if !self.armed {
            self.armed = true;
        } else {
            add_waits(&mut self.waits, &[now.saturating_sub(self.marks[0])]);
        }
        self.marks = [now, now];
        self.marked = None;
    }
}

/// CPU time the calling thread has used, in seconds.
pub fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run delay the test sets.
    struct Given(std::rc::Rc<std::cell::Cell<u64>>);

    impl RunDelay for Given {
        fn read(&mut self) -> Option<u64> {
            Some(self.0.get())
        }
    }

    #[test]
    fn parses_the_second_field() {
        assert_eq!(parse_run_delay(b"372880 1500 3\n"), Some(1500));
        assert_eq!(parse_run_delay(b"372880\n"), None);
        assert_eq!(parse_run_delay(b""), None);
    }

    #[test]
    fn reads_this_threads_schedstat() {
        // Linux with CONFIG_SCHED_INFO (this machine and CI): it reads, and
        // the run delay never goes back.
        let mut s = SchedStat::default();
        let a = s
            .read()
            .expect("/proc/thread-self/schedstat has a run delay");
        std::thread::yield_now();
        assert!(s.read().expect("a second read") >= a);
    }

    #[test]
    fn the_first_loss_arms_and_later_ones_measure_since_the_second_last_mark() {
        let delay = std::rc::Rc::new(std::cell::Cell::new(1_000));
        let mut p = CpuWait::new(Given(delay.clone()));
        let t0 = Instant::now();
        let at = |ms: f64| t0 + Duration::from_secs_f64(ms / 1e3);
        // Not armed: sleeping reads nothing, and nothing is measured.
        p.sleeping(at(0.0));
        delay.set(50_000);
        p.lost();
        assert!(p.waits.is_empty());
        // Armed at 50 µs. Marks at sleeps 1 ms apart; a sleep 0.5 ms after
        // a mark reads nothing.
        delay.set(60_000);
        p.sleeping(at(1.0));
        delay.set(65_000);
        p.sleeping(at(1.5));
        assert_eq!(p.marks, [50_000, 60_000]);
        delay.set(70_000);
        p.sleeping(at(2.0));
        // Then the drain waits 8 ms for its CPU; it marks a sleep once
        // back, and its next pass sees the loss.
        delay.set(8_080_000);
        p.sleeping(at(11.0));
        delay.set(8_090_000);
        p.lost();
        // Since the second last mark (70 µs): the 8 ms wait and what followed.
        assert_eq!(p.waits, [8_020_000]);
        // A later loss with no wait: 10 µs since the loss before.
        delay.set(8_100_000);
        p.lost();
        assert_eq!(p.waits, [8_020_000, 10_000]);
        // Another drain thread's waits add up to the cap.
        let mut all = Vec::new();
        add_waits(&mut all, &p.waits);
        add_waits(&mut all, &[1; WAITS_KEPT]);
        assert_eq!(all.len(), WAITS_KEPT);
        assert_eq!(all[..2], [8_020_000, 10_000]);
    }
}
