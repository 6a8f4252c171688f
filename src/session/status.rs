//! The live status line on a terminal: elapsed time, trace rate, bytes
//! written, ratio, losses. Redrawn at most every 250 ms from the poll loop,
//! never from the push path; off when stderr is not a terminal or with -q.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::push::unit::UnitReport;

pub struct StatusLine {
    bar: ProgressBar,
    started: Instant,
    last: Instant,
    last_ring: u64,
}

const EVERY: Duration = Duration::from_millis(250);

impl StatusLine {
    pub fn new() -> StatusLine {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
        bar.set_style(
            ProgressStyle::with_template("{spinner} perfz record: {msg}")
                .expect("a valid template"),
        );
        let now = Instant::now();
        StatusLine {
            bar,
            started: now,
            last: now,
            last_ring: 0,
        }
    }

    /// Whether a redraw is due (cheap: one clock read).
    pub fn due(&self) -> bool {
        self.last.elapsed() >= EVERY
    }

    pub fn update(&mut self, r: &UnitReport, lost: u64) {
        let now = Instant::now();
        let dt = now.duration_since(self.last).as_secs_f64().max(1e-3);
        let rate = (r.ring_bytes - self.last_ring) as f64 / dt / 1e6;
        let ratio = if r.compressed_bytes > 0 {
            format!(
                ", ratio {:.1}",
                r.ring_bytes as f64 / r.compressed_bytes as f64
            )
        } else {
            String::new()
        };
        self.bar.set_message(format!(
            "{:.1} s, trace {rate:.1} MB/s, written {:.1} MB{ratio}, lost {lost}",
            now.duration_since(self.started).as_secs_f64(),
            r.bytes_written as f64 / 1e6,
        ));
        self.bar.tick();
        self.last = now;
        self.last_ring = r.ring_bytes;
    }

    pub fn clear(self) {
        self.bar.finish_and_clear();
    }
}
