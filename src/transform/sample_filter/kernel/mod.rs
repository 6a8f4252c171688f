//! The sample filter in the kernel: perfz's BPF program
//! (bpf/sample_filter.bpf.c, its object included here) loaded once per
//! filtered event with that event's filter in its `filter` map, and
//! attached to each of the event's fds (`PERF_EVENT_IOC_SET_BPF`, as perf
//! does), before the events are enabled. The kernel then runs it at each
//! overflow: a sample it drops is never written to the ring, and it counts
//! the drop in its per-CPU `dropped` map, read at the end (perf writes that
//! count as a LOST_SAMPLES record marked PERF_RECORD_MISC_LOST_SAMPLES_BPF;
//! so does perfz).
//!
//! The loader is aya (pure Rust: building perfz needs no libelf, no
//! clang). Where the program cannot run a filter (a field it cannot read,
//! BPF not permitted, [`PUSH_PATH_ENV`] set), [`load`] says why and the
//! filter runs in the push path.

mod entries;

use std::os::fd::{AsFd, BorrowedFd};

use aya::maps::{Array, PerCpuArray};
use aya::programs::PerfEvent;
use aya::{Ebpf, EbpfLoader};

use super::Compiled;
pub use entries::{entries, FilterValue, Machine};

/// Set (to anything), this environment variable keeps the sample filter in
/// the push path (tests and benches compare the two).
pub const PUSH_PATH_ENV: &str = "PERFZ_SAMPLE_FILTER_IN_PUSH_PATH";

/// The program's object, built by bpf/build.sh from the source beside it.
pub static OBJECT: &[u8] = aya::include_bytes_aligned!("../bpf/sample_filter.bpf.o");

/// The program built for this architecture's registers.
const PROGRAM: Option<&str> = if cfg!(target_arch = "x86_64") {
    Some("sample_filter_x86_64")
} else if cfg!(target_arch = "aarch64") {
    Some("sample_filter_aarch64")
} else {
    None
};

/// The programs loaded for a recording's filtered events.
pub struct KernelFilter {
    /// (event index, its program and maps).
    loaded: Vec<(usize, Ebpf)>,
}

impl std::fmt::Debug for KernelFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let events: Vec<usize> = self.loaded.iter().map(|(i, _)| *i).collect();
        f.debug_struct("KernelFilter")
            .field("events", &events)
            .finish()
    }
}

/// What this machine lets the program read as samples have it.
pub fn machine() -> Machine {
    use std::os::unix::fs::MetadataExt;
    // The initial pid namespace's inode is fixed (PROC_PID_INIT_INO).
    let ns = std::fs::metadata("/proc/self/ns/pid").map(|m| m.ino());
    Machine {
        initial_pid_ns: ns.is_ok_and(|i| i == 0xEFFF_FFFC),
        cgroup_v2: cgroup_v2(),
    }
}

/// /sys/fs/cgroup is a cgroup2 mount (no v1 perf_event hierarchy).
fn cgroup_v2() -> bool {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let types = |t: &str| mounts.lines().any(|l| l.split(' ').nth(2) == Some(t));
    types("cgroup2") && !types("cgroup")
}

/// Loads the program for each event of `per_event` with a filter and
/// attaches it to that event's fds among `fds` (event index, fd). Every
/// filter runs in the kernel (no reason returned) or none does: the
/// reason why not comes back with the programs attached before it came up
/// (their fds filter in the kernel too, which the push path agrees with;
/// their drops are counted).
pub fn load(
    per_event: &[Option<Compiled>],
    fds: &[(usize, BorrowedFd<'_>)],
) -> (KernelFilter, Option<String>) {
    load_from(OBJECT, per_event, fds)
}

/// `load` with another build of the program's object (the test that
/// rebuilds it from its source loads the rebuilt one).
pub fn load_from(
    object: &[u8],
    per_event: &[Option<Compiled>],
    fds: &[(usize, BorrowedFd<'_>)],
) -> (KernelFilter, Option<String>) {
    let mut k = KernelFilter { loaded: Vec::new() };
    let why = k.load_all(object, per_event, fds).err();
    (k, why)
}

impl KernelFilter {
    fn load_all(
        &mut self,
        object: &[u8],
        per_event: &[Option<Compiled>],
        fds: &[(usize, BorrowedFd<'_>)],
    ) -> Result<(), String> {
        if std::env::var_os(PUSH_PATH_ENV).is_some() {
            return Err(format!("{PUSH_PATH_ENV} is set"));
        }
        let program = PROGRAM.ok_or("perfz has no BPF program for this architecture")?;
        let m = machine();
        let values: Vec<(usize, FilterValue)> = per_event
            .iter()
            .enumerate()
            .filter_map(|(i, c)| Some((i, c.as_ref()?)))
            .map(|(i, c)| entries(c, m).map(|v| (i, v)))
            .collect::<Result<_, _>>()?;
        for (i, v) in values {
            let ebpf = load_one(object, program, &v)?;
            self.loaded.push((i, ebpf));
            let ebpf = &mut self.loaded.last_mut().expect("just pushed").1;
            let prog: &mut PerfEvent = ebpf
                .program_mut(program)
                .and_then(|p| p.try_into().ok())
                .ok_or("the BPF object lacks its program")?;
            let prog_fd = prog.fd().map_err(|e| e.to_string())?.as_fd();
            for (_, fd) in fds.iter().filter(|(k, _)| *k == i) {
                crate::event::sys::set_bpf(*fd, prog_fd)
                    .map_err(|e| format!("attaching the BPF program to an event: {e}"))?;
            }
        }
        Ok(())
    }
}

/// The object loaded with `v` in its filter map, `program` loaded.
fn load_one(object: &[u8], program: &str, v: &FilterValue) -> Result<Ebpf, String> {
    let denied = |e: &dyn std::fmt::Display| {
        let s = e.to_string();
        let os = std::io::Error::last_os_error();
        if os.raw_os_error() == Some(libc::EPERM) || s.contains("Operation not permitted") {
            format!("BPF not permitted: {s} (it needs root, or CAP_BPF and CAP_PERFMON)")
        } else {
            format!("the kernel refused the BPF program: {s}")
        }
    };
    // No kernel BTF: the program has no CO-RE relocations.
    let mut ebpf = EbpfLoader::new()
        .btf(None)
        .load(object)
        .map_err(|e| denied(&e))?;
    let map = ebpf
        .map_mut("filter")
        .ok_or("the BPF object lacks its filter map")?;
    let mut filter: Array<_, FilterValue> = Array::try_from(map).map_err(|e| e.to_string())?;
    filter.set(0, v, 0).map_err(|e| denied(&e))?;
    let prog: &mut PerfEvent = ebpf
        .program_mut(program)
        .and_then(|p| p.try_into().ok())
        .ok_or("the BPF object lacks its program")?;
    prog.load().map_err(|e| denied(&verifier_error(e)))?;
    Ok(ebpf)
}

/// A load error with the verifier's log, where it gave one.
fn verifier_error(e: aya::programs::ProgramError) -> String {
    match e {
        aya::programs::ProgramError::LoadError {
            io_error,
            verifier_log,
        } => {
            format!("{io_error}: {verifier_log}")
        }
        e => e.to_string(),
    }
}

impl KernelFilter {
    /// Samples each filtered event's program dropped so far: (event
    /// index, count).
    pub fn dropped(&self) -> Vec<(usize, u64)> {
        self.loaded
            .iter()
            .map(|(i, ebpf)| (*i, dropped_by(ebpf)))
            .collect()
    }
}

/// What one program's per-CPU `dropped` map counts, summed.
fn dropped_by(ebpf: &Ebpf) -> u64 {
    let Some(map) = ebpf.map("dropped") else {
        return 0;
    };
    let Ok(a) = PerCpuArray::<_, u64>::try_from(map) else {
        return 0;
    };
    a.get(&0, 0).map_or(0, |v| v.iter().sum())
}
