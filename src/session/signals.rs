//! SIGINT / SIGTERM / SIGHUP end a recording cleanly: the handler (signal-hook)
//! only stores the signal number; the poll loop sees it (poll returns EINTR
//! or times out within 100 ms), drains, ends a workload still running with
//! SIGTERM and finalizes.
//!
//! SIGUSR2 sets a flag of its own (`--switch-output=signal`, a flight
//! recorder's snapshot). SIGXFSZ gets a handler that does nothing, so a
//! write past a file-size limit fails with EFBIG and the recording is
//! salvaged instead of killed. Against `kill -9` only checkpoints help: the
//! first is taken right after the side band, so the file is perf-readable
//! up to the last one (docs/FORMAT.md), and `perfz recover` restores the
//! rest.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGUSR2, SIGXFSZ};

/// The signal that asked us to stop; 0 = none yet.
static STOP: OnceLock<Arc<AtomicUsize>> = OnceLock::new();
/// SIGUSR2 arrived (`--switch-output`, perf's default trigger).
static USR2: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Installs the handlers once per process. SIGXFSZ gets a handler that does
/// nothing: a write past RLIMIT_FSIZE must fail with EFBIG, so the recording
/// can be finalized, instead of killing the process.
pub fn install() -> io::Result<()> {
    if STOP.get().is_some() {
        return Ok(());
    }
    let flag = Arc::new(AtomicUsize::new(0));
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        signal_hook::flag::register_usize(sig, Arc::clone(&flag), sig as usize)?;
    }
    signal_hook::flag::register(SIGXFSZ, Arc::new(AtomicBool::new(false)))?;
    let usr2 = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(SIGUSR2, Arc::clone(&usr2))?;
    let _ = USR2.set(usr2);
    let _ = STOP.set(flag);
    Ok(())
}

/// Whether a stop signal arrived, and which.
pub fn stop_requested() -> Option<i32> {
    let sig = STOP.get()?.load(Ordering::Acquire);
    (sig != 0).then_some(sig as i32)
}

/// Whether SIGUSR2 arrived since the last call (and clears it).
pub fn usr2_taken() -> bool {
    USR2.get().is_some_and(|f| f.swap(false, Ordering::AcqRel))
}
