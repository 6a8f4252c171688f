//! The host's CPU, NUMA, cache and memory facts as perf 6.12 reads them
//! from sysfs (tools/perf/util/cputopo.c, header.c), laid out as its
//! CPU_TOPOLOGY, NUMA_TOPOLOGY, CACHE and MEM_TOPOLOGY sections. Each
//! returns `None` where perf's writer fails, so the feature is left out.
//! Every path is under `sys` (`/sys` on a host; a made-up tree in tests).

use std::path::Path;

use crate::format::feature::write_string;

fn read(sys: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(sys.join(rel)).ok()
}

/// The first line of a file, without its newline (perf's getline).
fn first_line(sys: &Path, rel: &str) -> Option<String> {
    let s = read(sys, rel)?;
    if s.is_empty() {
        return None;
    }
    Some(s.lines().next().unwrap_or("").to_string())
}

/// The numbers of a sysfs list (`0-3,8,10-11`); `None` if malformed.
pub fn parse_list(s: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
                if a > b || b - a > 1 << 16 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

/// perf's `cpu__max_present_cpu`: one past the highest present CPU.
pub fn max_present_cpu(sys: &Path) -> Option<u32> {
    max_of(sys, "devices/system/cpu/present")
}

/// perf's `cpu__max_cpu`: one past the highest possible CPU.
pub fn max_cpu(sys: &Path) -> Option<u32> {
    max_of(sys, "devices/system/cpu/possible")
}

fn max_of(sys: &Path, rel: &str) -> Option<u32> {
    parse_list(&read(sys, rel)?)?
        .into_iter()
        .max()
        .map(|m| m + 1)
}

fn push_new(lists: &mut Vec<String>, s: String) {
    if !lists.contains(&s) {
        lists.push(s);
    }
}

/// A topology file of `cpu` as an integer, or -1 (perf's `cpu__get_*_id`).
fn topology_id(sys: &Path, cpu: u32, name: &str) -> i32 {
    read(sys, &format!("devices/system/cpu/cpu{cpu}/topology/{name}"))
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(-1)
}

/// HEADER_CPU_TOPOLOGY: package and core sibling lists of the online CPUs,
/// core and socket ids of `nr_avail` CPUs (NRCPUS' first number), then die
/// lists and ids where the machine has dies (x86_64 and s390x).
pub fn cpu_topology(sys: &Path, nr_avail: u32, machine: &str) -> Option<Vec<u8>> {
    let online = parse_list(&read(sys, "devices/system/cpu/online")?)?;
    let has_die = (machine.starts_with("x86_64") || machine.starts_with("s390x"))
        && sys
            .join("devices/system/cpu/cpu0/topology/die_cpus_list")
            .exists();
    let (mut packages, mut dies, mut cores) = (Vec::new(), Vec::new(), Vec::new());
    let topo = |cpu: u32, name: &str| format!("devices/system/cpu/cpu{cpu}/topology/{name}");
    let newer_or_older = |cpu: u32, new: &str, old: &str| {
        if sys.join(topo(cpu, new)).exists() {
            topo(cpu, new)
        } else {
            topo(cpu, old)
        }
    };
    for cpu in (0..nr_avail).filter(|c| online.contains(c)) {
        let mut any = false;
        let package = newer_or_older(cpu, "package_cpus_list", "core_siblings_list");
        if let Some(s) = first_line(sys, &package) {
            push_new(&mut packages, s);
            any = true;
        }
        if has_die {
            if let Some(s) = first_line(sys, &topo(cpu, "die_cpus_list")) {
                push_new(&mut dies, s);
                any = true;
            }
        }
        let core = newer_or_older(cpu, "core_cpus_list", "thread_siblings_list");
        if let Some(s) = first_line(sys, &core) {
            push_new(&mut cores, s);
            any = true;
        }
        if !any {
            return None;
        }
    }
    let mut b = Vec::new();
    for lists in [&packages, &cores] {
        b.extend_from_slice(&(lists.len() as u32).to_le_bytes());
        lists.iter().for_each(|s| write_string(&mut b, s));
    }
    for cpu in 0..nr_avail {
        b.extend_from_slice(&topology_id(sys, cpu, "core_id").to_le_bytes());
        b.extend_from_slice(&topology_id(sys, cpu, "physical_package_id").to_le_bytes());
    }
    if !dies.is_empty() {
        b.extend_from_slice(&(dies.len() as u32).to_le_bytes());
        dies.iter().for_each(|s| write_string(&mut b, s));
        for cpu in 0..nr_avail {
            b.extend_from_slice(&topology_id(sys, cpu, "die_id").to_le_bytes());
        }
    }
    Some(b)
}

/// MemTotal and MemFree (kB) of a node's `meminfo` ("Node 0 MemTotal:
/// 13854536 kB"); `None` where a line with a colon does not read as perf's
/// `%*s %*d %31s %lu`.
pub fn node_meminfo(text: &str) -> Option<(u64, u64)> {
    let (mut total, mut free) = (0, 0);
    for line in text.lines().filter(|l| l.contains(':')) {
        let mut w = line.split_whitespace();
        w.next()?;
        w.next()?.parse::<i64>().ok()?;
        let field = w.next()?;
        let value: u64 = w.next()?.parse().ok()?;
        match field {
            "MemTotal:" => total = value,
            "MemFree:" => free = value,
            _ => {}
        }
        if total != 0 && free != 0 {
            break;
        }
    }
    Some((total, free))
}

/// HEADER_NUMA_TOPOLOGY: for each online node, its memory and its cpus.
pub fn numa_topology(sys: &Path) -> Option<Vec<u8>> {
    let nodes = parse_list(&first_line(sys, "devices/system/node/online")?)?;
    let mut b = Vec::new();
    b.extend_from_slice(&(nodes.len() as u32).to_le_bytes());
    for n in nodes {
        let (total, free) =
            node_meminfo(&read(sys, &format!("devices/system/node/node{n}/meminfo"))?)?;
        let cpus = first_line(sys, &format!("devices/system/node/node{n}/cpulist"))?;
        b.extend_from_slice(&n.to_le_bytes());
        b.extend_from_slice(&total.to_le_bytes());
        b.extend_from_slice(&free.to_le_bytes());
        write_string(&mut b, &cpus);
    }
    Some(b)
}

/// One cache of `cpu/cache/indexN`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cache {
    /// `level`: 1, 2, 3.
    pub level: u32,
    /// `coherency_line_size`, in bytes.
    pub line_size: u32,
    /// `number_of_sets`.
    pub sets: u32,
    /// `ways_of_associativity`.
    pub ways: u32,
    /// `type`: Data, Instruction, Unified.
    pub kind: String,
    /// `size`, as sysfs says it (`32K`).
    pub size: String,
    /// `shared_cpu_list`: the CPUs sharing it.
    pub map: String,
}

/// perf's `sysfs__read_int`: atoi of the file (leading number, else 0).
fn atoi(s: &str) -> u32 {
    let t = s.trim_start();
    let end = t
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
        .map_or(t.len(), |(i, _)| i);
    t[..end].parse::<i64>().unwrap_or(0) as u32
}

/// The caches of one CPU, index0 up to the first missing one (at most 4,
/// perf's MAX_CACHE_LVL). `Err` where an index exists but a file of it
/// cannot be read: perf leaves the whole section out then.
fn cpu_caches(sys: &Path, cpu: u32) -> Result<Vec<Cache>, ()> {
    let mut out = Vec::new();
    for i in 0..4 {
        let dir = format!("devices/system/cpu/cpu{cpu}/cache/index{i}");
        if !sys.join(&dir).exists() {
            break;
        }
        let f = |name: &str| read(sys, &format!("{dir}/{name}")).ok_or(());
        out.push(Cache {
            level: atoi(&f("level")?),
            line_size: atoi(&f("coherency_line_size")?),
            sets: atoi(&f("number_of_sets")?),
            ways: atoi(&f("ways_of_associativity")?),
            kind: f("type")?.trim().to_string(),
            size: f("size")?.trim().to_string(),
            map: f("shared_cpu_list")?.trim().to_string(),
        });
    }
    Ok(out)
}

/// HEADER_CACHE (version 1): every distinct cache of CPUs 0 to
/// `cpu__max_cpu`, in a stable sort by level.
pub fn caches(sys: &Path) -> Option<Vec<u8>> {
    let mut all: Vec<Cache> = Vec::new();
    for cpu in 0..max_cpu(sys)? {
        for c in cpu_caches(sys, cpu).ok()? {
            if !all.contains(&c) {
                all.push(c);
            }
        }
    }
    all.sort_by_key(|c| c.level);
    let mut b = Vec::new();
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(&(all.len() as u32).to_le_bytes());
    for c in &all {
        for v in [c.level, c.line_size, c.sets, c.ways] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        for s in [&c.kind, &c.size, &c.map] {
            write_string(&mut b, s);
        }
    }
    Some(b)
}

/// The number after `prefix` in a directory entry's name (`node3`,
/// `memory17`), as perf's `sscanf(name, "prefix%u")` takes it.
fn numbered(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

fn numbered_entries(dir: &Path, prefix: &str) -> Option<Vec<u32>> {
    Some(
        std::fs::read_dir(dir)
            .ok()?
            .filter_map(|e| numbered(&e.ok()?.file_name().to_string_lossy(), prefix))
            .collect(),
    )
}

/// HEADER_MEM_TOPOLOGY (version 1): the memory block size, then for each
/// node (by number) the bitmap of the memory blocks it holds.
pub fn mem_topology(sys: &Path) -> Option<Vec<u8>> {
    let bsize = u64::from_str_radix(
        read(sys, "devices/system/memory/block_size_bytes")?
            .trim()
            .trim_start_matches("0x"),
        16,
    )
    .ok()?;
    let mut nodes = numbered_entries(&sys.join("devices/system/node"), "node")?;
    nodes.sort_unstable();
    let mut b = Vec::new();
    for v in [1, bsize, nodes.len() as u64] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    for n in nodes {
        let blocks = numbered_entries(&sys.join(format!("devices/system/node/node{n}")), "memory")?;
        let size = blocks.iter().max().map_or(0, |&m| m as u64) + 1;
        let mut words = vec![0u64; size.div_ceil(64) as usize];
        for m in blocks {
            words[m as usize / 64] |= 1 << (m % 64);
        }
        for v in [n as u64, size, size] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        words
            .iter()
            .for_each(|w| b.extend_from_slice(&w.to_le_bytes()));
    }
    Some(b)
}

#[cfg(test)]
mod tests;
