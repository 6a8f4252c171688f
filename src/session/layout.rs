//! `--threads[=SPEC]`: which drain thread owns which ring, and where each
//! thread runs. perf's spellings: `cpu` (one thread per CPU, the default),
//! `core`, `package`, `numa`, or masks `CPUS/AFFINITY:CPUS/AFFINITY:...`
//! (CPU lists; `/AFFINITY` may be left out and then equals CPUS). perfz adds
//! `N`: N threads, the rings split into N contiguous, even groups.
//!
//! `cpu` pins each thread to its ring's CPU; `core`, `package` and `numa`
//! group the rings by sysfs topology and pin each thread to its group's
//! CPUs; `N` pins each thread to its rings' CPUs. Per-thread rings
//! (`--per-thread`) have no CPU: they are split evenly over N threads (else
//! one per online CPU), unpinned; masks are refused there.
//!
//! For big machines the shape is one thread per node (`numa` or `package`):
//! its rings and memory local, a few threads rather than one per CPU. One
//! core's codec keeps up with a few GB/s of a dwarf stream and under 1 GB/s
//! of others, where small records cost per record (docs/BENCHMARKS.md,
//! "Every codec on one recording", "Push paths"): 10 GB/s of trace needs a
//! handful to a few tens of threads, not 256; masks give a node whose trace
//! exceeds one core 2–4 threads. Each thread costs a wakeup source, a codec
//! state (megabytes at zstd:3, more at higher levels: that table's `state`)
//! and its async buffers. One `data.N` per thread keeps each file
//! sequential (one writer, no shared offset); perf's reader merges them by
//! time, its queue growing with the spread in time between files, and each
//! thread flushes what its codec holds within 100 ms, so no file lags far
//! behind. zstd's own workers (`ZSTD_c_nbWorkers`) would split one stream
//! over cores, but in jobs of at least 512 KiB with buffers of their own
//! (more copies, a job's latency per record); a context per thread scales
//! the same work without that. Each thread polls only its rings' fds and
//! its mailbox: flat from 1 to 64 rings (docs/BENCHMARKS.md, "Parallel
//! streaming"); at thousands of fds a thread, epoll would make an idle
//! wakeup O(ready) instead of O(fds).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use crate::event::cpus::{format_list, parse_list};
use crate::event::open::ANY_CPU;

/// How rings are grouped into drain threads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ThreadSpec {
    /// `cpu`: one thread per ring, run on the ring's CPU (the default).
    Cpu,
    /// `core`: one thread per core, for the rings of its SMT siblings.
    Core,
    /// `package`: one thread per package (socket), for the rings of its CPUs.
    Package,
    /// `numa`: one thread per NUMA node, for the rings of its CPUs.
    Numa,
    /// `N` (1..=4096): N threads, the rings split into N contiguous, even groups.
    Count(usize),
    /// (CPUs whose rings the thread drains, CPUs it may run on).
    Masks(Vec<(Vec<u32>, Vec<u32>)>),
}

impl FromStr for ThreadSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "" | "cpu" => ThreadSpec::Cpu,
            "core" => ThreadSpec::Core,
            "package" => ThreadSpec::Package,
            "numa" => ThreadSpec::Numa,
            n if n.bytes().all(|b| b.is_ascii_digit()) => match n.parse::<usize>() {
                Ok(n @ 1..=4096) => ThreadSpec::Count(n),
                _ => return Err(format!("--threads={n}: give 1 to 4096 threads")),
            },
            masks => {
                let mut out = Vec::new();
                for part in masks.split(':') {
                    let (cpus, aff) = part.split_once('/').unwrap_or((part, part));
                    let bad = |e: String| {
                        format!(
                            "--threads={masks}: {e}; use cpu, core, package, numa, a number of threads, or CPUS/AFFINITY masks such as 0-1/0-1:2-3/2-3"
                        )
                    };
                    let cpus = parse_list(cpus).map_err(|e| bad(e.to_string()))?;
                    let aff = parse_list(aff).map_err(|e| bad(e.to_string()))?;
                    if cpus.is_empty() || aff.is_empty() {
                        return Err(bad(format!("{part:?} has an empty CPU list")));
                    }
                    // perf's rule: each mask its own CPUs.
                    for (what, mine, i) in [("maps", &cpus, 0), ("affinity", &aff, 1)] {
                        let earlier = out
                            .iter()
                            .map(|m: &(Vec<u32>, Vec<u32>)| if i == 0 { &m.0 } else { &m.1 });
                        if let Some(c) = earlier.flatten().find(|c| mine.contains(c)) {
                            return Err(bad(format!(
                                "the {what} mask of {part:?} intersects an earlier one (CPU {c})"
                            )));
                        }
                    }
                    out.push((cpus, aff));
                }
                ThreadSpec::Masks(out)
            }
        })
    }
}

impl fmt::Display for ThreadSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ThreadSpec::Cpu => f.write_str("cpu"),
            ThreadSpec::Core => f.write_str("core"),
            ThreadSpec::Package => f.write_str("package"),
            ThreadSpec::Numa => f.write_str("numa"),
            ThreadSpec::Count(n) => write!(f, "{n}"),
            ThreadSpec::Masks(m) => {
                let parts: Vec<String> = m
                    .iter()
                    .map(|(c, a)| format!("{}/{}", format_list(c), format_list(a)))
                    .collect();
                f.write_str(&parts.join(":"))
            }
        }
    }
}

/// One drain thread: the rings it owns (indices into the session's rings)
/// and the CPUs it is pinned to (empty: not pinned).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DrainGroup {
    pub rings: Vec<usize>,
    pub affinity: Vec<u32>,
}

/// Which CPUs share a core, a package or a NUMA node with a CPU.
pub trait Topology {
    fn siblings(&self, cpu: u32, level: Level) -> Vec<u32>;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Core,
    Package,
    Numa,
}

/// The running machine's topology, from sysfs.
pub struct SysTopology;

impl Topology for SysTopology {
    fn siblings(&self, cpu: u32, level: Level) -> Vec<u32> {
        let read = |p: String| {
            std::fs::read_to_string(p)
                .ok()
                .and_then(|s| parse_list(&s).ok())
        };
        let base = format!("/sys/devices/system/cpu/cpu{cpu}/topology");
        let found = match level {
            Level::Core => read(format!("{base}/core_cpus_list"))
                .or_else(|| read(format!("{base}/thread_siblings_list"))),
            Level::Package => read(format!("{base}/package_cpus_list"))
                .or_else(|| read(format!("{base}/core_siblings_list"))),
            Level::Numa => std::fs::read_dir(format!("/sys/devices/system/cpu/cpu{cpu}"))
                .ok()
                .and_then(|d| {
                    d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                        .find_map(|n| n.strip_prefix("node")?.parse::<u32>().ok())
                })
                .and_then(|node| read(format!("/sys/devices/system/node/node{node}/cpulist"))),
        };
        // A CPU the kernel says nothing about is a group of its own.
        found
            .filter(|l| l.contains(&cpu))
            .unwrap_or_else(|| vec![cpu])
    }
}

/// Splits `n` items into `k` contiguous groups of sizes differing by at most one.
fn even_split(n: usize, k: usize) -> Vec<Vec<usize>> {
    let k = k.clamp(1, n.max(1));
    (0..k)
        .map(|g| (g * n / k..(g + 1) * n / k).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .collect()
}

/// Groups `ring_cpus` (each ring's CPU, or [`ANY_CPU`] for a per-thread ring)
/// into drain threads. Per-thread rings have no CPU to group by: every
/// spelling but a count gives one thread per online CPU, unpinned.
pub fn layout(
    spec: &ThreadSpec,
    ring_cpus: &[u32],
    online: usize,
    topo: &dyn Topology,
) -> Result<Vec<DrainGroup>, String> {
    if ring_cpus.is_empty() {
        return Ok(Vec::new());
    }
    if ring_cpus.contains(&ANY_CPU) {
        let k = match spec {
            ThreadSpec::Count(n) => *n,
            ThreadSpec::Masks(_) => {
                return Err("--threads masks name CPUs, but --per-thread rings belong to no CPU: use --threads=N".into())
            }
            _ => online,
        };
        return Ok(even_split(ring_cpus.len(), k)
            .into_iter()
            .map(|rings| DrainGroup {
                rings,
                affinity: Vec::new(),
            })
            .collect());
    }
    let by_level = |level: Level| {
        let mut groups: BTreeMap<Vec<u32>, Vec<usize>> = BTreeMap::new();
        for (i, &cpu) in ring_cpus.iter().enumerate() {
            groups.entry(topo.siblings(cpu, level)).or_default().push(i);
        }
        groups
            .into_iter()
            .map(|(affinity, rings)| DrainGroup { rings, affinity })
            .collect()
    };
    Ok(match spec {
        ThreadSpec::Cpu => ring_cpus
            .iter()
            .enumerate()
            .map(|(i, &cpu)| DrainGroup {
                rings: vec![i],
                affinity: vec![cpu],
            })
            .collect(),
        ThreadSpec::Core => by_level(Level::Core),
        ThreadSpec::Package => by_level(Level::Package),
        ThreadSpec::Numa => by_level(Level::Numa),
        ThreadSpec::Count(n) => even_split(ring_cpus.len(), *n)
            .into_iter()
            .map(|rings| {
                let affinity = rings.iter().map(|&i| ring_cpus[i]).collect();
                DrainGroup { rings, affinity }
            })
            .collect(),
        ThreadSpec::Masks(masks) => by_masks(masks, ring_cpus)?,
    })
}

/// `--threads` masks: each mask's group takes the rings of its CPUs not
/// taken by an earlier mask; every ring must be taken.
fn by_masks(masks: &[(Vec<u32>, Vec<u32>)], ring_cpus: &[u32]) -> Result<Vec<DrainGroup>, String> {
    let mut taken = vec![false; ring_cpus.len()];
    let mut out = Vec::new();
    for (cpus, affinity) in masks {
        let rings: Vec<usize> = (0..ring_cpus.len())
            .filter(|&i| !taken[i] && cpus.contains(&ring_cpus[i]))
            .collect();
        for &i in &rings {
            taken[i] = true;
        }
        if !rings.is_empty() {
            out.push(DrainGroup {
                rings,
                affinity: affinity.clone(),
            });
        }
    }
    if let Some(i) = taken.iter().position(|t| !t) {
        return Err(format!(
            "CPU {} is recorded but in no --threads mask: add it to one (or record fewer CPUs with -C)",
            ring_cpus[i]
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 8 CPUs: cores of 2 (SMT), packages of 4, NUMA nodes of 4.
    struct Fake;
    impl Topology for Fake {
        fn siblings(&self, cpu: u32, level: Level) -> Vec<u32> {
            let w = match level {
                Level::Core => 2,
                Level::Package | Level::Numa => 4,
            };
            let base = cpu / w * w;
            (base..base + w).collect()
        }
    }

    fn rings_of(groups: &[DrainGroup]) -> Vec<Vec<usize>> {
        groups.iter().map(|g| g.rings.clone()).collect()
    }

    #[test]
    fn spellings_parse_like_perf() {
        assert_eq!("".parse(), Ok(ThreadSpec::Cpu));
        assert_eq!("cpu".parse(), Ok(ThreadSpec::Cpu));
        assert_eq!("numa".parse(), Ok(ThreadSpec::Numa));
        assert_eq!("3".parse(), Ok(ThreadSpec::Count(3)));
        assert_eq!(
            "0-1/0-1:2,3/2".parse(),
            Ok(ThreadSpec::Masks(vec![
                (vec![0, 1], vec![0, 1]),
                (vec![2, 3], vec![2])
            ]))
        );
        assert_eq!(
            "4:5".parse(),
            Ok(ThreadSpec::Masks(vec![
                (vec![4], vec![4]),
                (vec![5], vec![5])
            ]))
        );
        for bad in ["0", "x", "1-", "0-1/", "2/x"] {
            assert!(bad.parse::<ThreadSpec>().is_err(), "{bad}");
        }
        let s: ThreadSpec = "0-3/0-3:4-7/4".parse().unwrap();
        assert_eq!(s.to_string(), "0-3/0-3:4-7/4");
    }

    #[test]
    fn levels_group_rings_by_topology() {
        let cpus: Vec<u32> = (0..8).collect();
        let g = layout(&ThreadSpec::Cpu, &cpus, 8, &Fake).unwrap();
        assert_eq!(g.len(), 8);
        assert_eq!(g[3].affinity, vec![3]);
        let g = layout(&ThreadSpec::Core, &cpus, 8, &Fake).unwrap();
        assert_eq!(
            rings_of(&g),
            vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]]
        );
        assert_eq!(g[1].affinity, vec![2, 3]);
        let g = layout(&ThreadSpec::Package, &cpus, 8, &Fake).unwrap();
        assert_eq!(rings_of(&g), vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
        // Recording CPUs 1, 5, 6 only: ring indices follow the recorded CPUs.
        let g = layout(&ThreadSpec::Numa, &[1, 5, 6], 8, &Fake).unwrap();
        assert_eq!(rings_of(&g), vec![vec![0], vec![1, 2]]);
        assert_eq!(g[1].affinity, vec![4, 5, 6, 7]);
    }

    #[test]
    fn counts_split_evenly_and_masks_must_cover_every_ring() {
        let cpus: Vec<u32> = (0..5).collect();
        let g = layout(&ThreadSpec::Count(2), &cpus, 5, &Fake).unwrap();
        assert_eq!(rings_of(&g), vec![vec![0, 1], vec![2, 3, 4]]);
        assert_eq!(g[0].affinity, vec![0, 1]);
        let g = layout(&ThreadSpec::Count(9), &cpus, 5, &Fake).unwrap();
        assert_eq!(g.len(), 5);
        let m: ThreadSpec = "0-2/7:3-4/6".parse().unwrap();
        let g = layout(&m, &cpus, 8, &Fake).unwrap();
        assert_eq!(rings_of(&g), vec![vec![0, 1, 2], vec![3, 4]]);
        assert_eq!(g[0].affinity, vec![7]);
        let m: ThreadSpec = "0-2/0".parse().unwrap();
        let e = layout(&m, &cpus, 8, &Fake).unwrap_err();
        assert!(
            e.contains("CPU 3 is recorded but in no --threads mask"),
            "{e}"
        );
    }

    #[test]
    fn per_thread_rings_split_over_threads_unpinned() {
        let rings = vec![ANY_CPU; 64];
        let g = layout(&ThreadSpec::Cpu, &rings, 2, &Fake).unwrap();
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].rings.len() + g[1].rings.len(), 64);
        assert!(g[0].affinity.is_empty());
        let g = layout(&ThreadSpec::Count(3), &rings[..1], 2, &Fake).unwrap();
        assert_eq!(rings_of(&g), vec![vec![0]]);
        assert!(layout(&"0/0".parse().unwrap(), &rings, 2, &Fake).is_err());
    }
}
