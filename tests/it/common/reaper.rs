//! No process a test starts outlives the test binary, passing or failing
//! (issue 48: a test whose helper panicked before its SIGINT left a root
//! system-wide recorder running for half an hour, copying other jobs'
//! files). As the test binary exits, whatever still descends from it is
//! ended: SIGTERM first (a recorder then finishes its file and ends its
//! workload, as it does for a user), SIGKILL for what is left after 5 s,
//! and its children are reaped. Not a subreaper: orphans would become this
//! binary's zombies while tests look for their /proc entries to go. Tests
//! still end what they start themselves: this is the net under them.

use std::collections::HashMap;
use std::time::{Duration, Instant};

extern "C" fn arm() {
    // SAFETY: atexit takes a function of the right type, called once as the
    // process exits.
    unsafe { libc::atexit(end_descendants) };
}

/// Runs [`arm`] before the test harness starts.
#[used]
#[link_section = ".init_array"]
static ARM: extern "C" fn() = arm;

/// Every process below `root` (children, theirs, ...), from /proc.
fn descendants(root: i32) -> Vec<i32> {
    let mut parent: HashMap<i32, i32> = HashMap::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: the comm may hold spaces and parens.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        if let Some(ppid) = rest.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
            parent.insert(pid, ppid);
        }
    }
    let below = |mut p: i32| {
        while let Some(&up) = parent.get(&p) {
            if up == root {
                return true;
            }
            if up <= 1 {
                return false;
            }
            p = up;
        }
        false
    };
    parent.keys().copied().filter(|&p| below(p)).collect()
}

extern "C" fn end_descendants() {
    let me = std::process::id() as i32;
    let start = Instant::now();
    let mut signal = libc::SIGTERM;
    loop {
        let left = descendants(me);
        // A process that cannot die (in D state) is left, after 10 s.
        if left.is_empty() || start.elapsed() > Duration::from_secs(10) {
            break;
        }
        if start.elapsed() >= Duration::from_secs(5) {
            signal = libc::SIGKILL;
        }
        for p in left {
            // SAFETY: kill has no memory effects; each pid descends from
            // this process, which reaps it below.
            unsafe { libc::kill(p, signal) };
        }
        // SAFETY: waitpid on any child, without blocking.
        while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
        std::thread::sleep(Duration::from_millis(20));
    }
}
