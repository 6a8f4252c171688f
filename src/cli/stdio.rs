//! Whether standard output was open when perfz started. Rust's runtime
//! opens /dev/null over a closed fd 0, 1 or 2 before `main`, so `perfz
//! record -o - >&-` would write its recording into /dev/null and say it
//! captured it; this looks at fd 1 before the runtime does (an
//! `.init_array` entry runs before `main`'s runtime set-up), so the
//! recording fails as perf's does.

use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

extern "C" fn look_at_stdout() {
    // SAFETY: fcntl(F_GETFD) only reads the descriptor table; -1 with
    // EBADF means fd 1 is not open.
    let closed = unsafe { libc::fcntl(1, libc::F_GETFD) } == -1;
    STDOUT_CLOSED.store(closed, Ordering::Relaxed);
}

/// Runs [`look_at_stdout`] before `main` and before Rust's runtime opens
/// /dev/null over closed standard fds.
#[used]
#[link_section = ".init_array"]
static LOOK_AT_STDOUT: extern "C" fn() = look_at_stdout;

/// Whether fd 1 was closed when the process started (`>&-`).
pub fn stdout_was_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}
