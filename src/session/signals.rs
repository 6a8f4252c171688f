//! SIGINT / SIGTERM / SIGHUP end a recording cleanly: the handler only sets a
//! flag; the poll loop sees it (poll returns EINTR), drains and finalizes.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // Async-signal-safe: two atomic stores.
    SIGNAL.store(sig, Ordering::Relaxed);
    STOP.store(true, Ordering::Release);
}

/// Installs the handlers (without SA_RESTART, so a blocked poll wakes up),
/// and ignores SIGXFSZ: a write past RLIMIT_FSIZE must fail with EFBIG, so
/// the recording can be finalized, not kill the process.
pub fn install() {
    // SAFETY: setting a signal to SIG_IGN has no memory effects.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: sigaction is zero-initialisable; the handler is an
        // `extern "C" fn(c_int)` that only touches atomics.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Whether a stop signal arrived, and which.
pub fn stop_requested() -> Option<i32> {
    STOP.load(Ordering::Acquire)
        .then(|| SIGNAL.load(Ordering::Relaxed))
}
