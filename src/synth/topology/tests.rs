use super::*;

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (p, text) in files {
        let p = d.path().join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    d
}

fn strings(b: &[u8], at: &mut usize) -> Vec<String> {
    let n = u32::from_le_bytes(b[*at..*at + 4].try_into().unwrap());
    *at += 4;
    (0..n).map(|_| string(b, at)).collect()
}

fn string(b: &[u8], at: &mut usize) -> String {
    let len = u32::from_le_bytes(b[*at..*at + 4].try_into().unwrap()) as usize;
    let s = &b[*at + 4..*at + 4 + len];
    *at += 4 + len;
    String::from_utf8_lossy(&s[..s.iter().position(|&c| c == 0).unwrap()]).into_owned()
}

fn u32_at(b: &[u8], at: &mut usize) -> u32 {
    *at += 4;
    u32::from_le_bytes(b[*at - 4..*at].try_into().unwrap())
}

fn u64_at(b: &[u8], at: &mut usize) -> u64 {
    *at += 8;
    u64::from_le_bytes(b[*at - 8..*at].try_into().unwrap())
}

#[test]
fn lists_read_as_sysfs_writes_them() {
    assert_eq!(parse_list("0-2,5\n"), Some(vec![0, 1, 2, 5]));
    assert_eq!(parse_list("0"), Some(vec![0]));
    assert_eq!(parse_list("\n"), Some(vec![]));
    assert_eq!(parse_list("3-1"), None);
    assert_eq!(parse_list("x"), None);
}

#[test]
fn node_meminfo_takes_total_and_free() {
    let text = "Node 0 MemTotal:       13854536 kB\nNode 0 MemFree:         4092664 kB\n\
                Node 0 MemUsed:         9761872 kB\n";
    assert_eq!(node_meminfo(text), Some((13854536, 4092664)));
    assert_eq!(node_meminfo("Node x MemTotal: 1 kB\n"), None);
    assert_eq!(node_meminfo("\n"), Some((0, 0)));
}

fn two_cpus() -> Vec<(&'static str, &'static str)> {
    let mut v = vec![
        ("devices/system/cpu/online", "0-1\n"),
        ("devices/system/cpu/present", "0-1\n"),
        ("devices/system/cpu/possible", "0-1\n"),
    ];
    for (cpu, core) in [("cpu0", "0\n"), ("cpu1", "1\n")] {
        let p = |f: &str| -> &'static str {
            Box::leak(format!("devices/system/cpu/{cpu}/topology/{f}").into_boxed_str())
        };
        v.push((p("package_cpus_list"), "0-1\n"));
        v.push((p("die_cpus_list"), "0-1\n"));
        v.push((
            p("core_cpus_list"),
            if cpu == "cpu0" { "0\n" } else { "1\n" },
        ));
        v.push((p("core_id"), core));
        v.push((p("physical_package_id"), "0\n"));
        v.push((p("die_id"), "0\n"));
    }
    v
}

#[test]
fn cpu_topology_has_siblings_ids_and_dies() {
    let t = tree(&two_cpus());
    let b = cpu_topology(t.path(), 2, "x86_64").unwrap();
    let mut at = 0;
    assert_eq!(strings(&b, &mut at), ["0-1"]);
    assert_eq!(strings(&b, &mut at), ["0", "1"]);
    let ids: Vec<u32> = (0..4).map(|_| u32_at(&b, &mut at)).collect();
    assert_eq!(ids, [0, 0, 1, 0]);
    assert_eq!(strings(&b, &mut at), ["0-1"]);
    assert_eq!((u32_at(&b, &mut at), u32_at(&b, &mut at)), (0, 0));
    assert_eq!(at, b.len());
    // No dies off x86_64 and s390x; a CPU without ids says -1.
    let b = cpu_topology(t.path(), 3, "aarch64").unwrap();
    assert_eq!(b.len(), 4 + 68 + 4 + 2 * 68 + 3 * 8);
    assert_eq!(&b[b.len() - 8..], &[0xff; 8]);
}

#[test]
fn cpu_topology_left_out_without_sysfs() {
    let t = tree(&[("devices/system/cpu/online", "0\n")]);
    assert_eq!(cpu_topology(t.path(), 1, "x86_64"), None);
    assert_eq!(cpu_topology(Path::new("/nonexistent"), 1, "x86_64"), None);
}

#[test]
fn numa_nodes_with_memory_and_cpus() {
    let t = tree(&[
        ("devices/system/node/online", "0\n"),
        (
            "devices/system/node/node0/meminfo",
            "Node 0 MemTotal: 100 kB\nNode 0 MemFree: 40 kB\n",
        ),
        ("devices/system/node/node0/cpulist", "0-1\n"),
    ]);
    let b = numa_topology(t.path()).unwrap();
    let mut at = 0;
    assert_eq!(u32_at(&b, &mut at), 1);
    assert_eq!(u32_at(&b, &mut at), 0);
    assert_eq!((u64_at(&b, &mut at), u64_at(&b, &mut at)), (100, 40));
    assert_eq!(string(&b, &mut at), "0-1");
    assert_eq!(at, b.len());
    std::fs::remove_file(t.path().join("devices/system/node/node0/cpulist")).unwrap();
    assert_eq!(numa_topology(t.path()), None);
}

/// A sysfs tree of two CPUs, each with its own L1 data and instruction
/// and L2 caches, and one L3 they share.
fn two_cpu_caches() -> tempfile::TempDir {
    let mut files = vec![("devices/system/cpu/possible", "0-1\n")];
    let indexes = [
        ("index0", "1", "Data", "32K", "0"),
        ("index1", "1", "Instruction", "32K", "0"),
        ("index2", "2", "Unified", "1024K", "0"),
        ("index3", "3", "Unified", "32768K", "0-1"),
    ];
    for cpu in ["cpu0", "cpu1"] {
        for (idx, level, kind, size, map) in indexes {
            let map = if map == "0" && cpu == "cpu1" {
                "1"
            } else {
                map
            };
            for (f, v) in [
                ("level", level),
                ("coherency_line_size", "64"),
                ("number_of_sets", "64"),
                ("ways_of_associativity", "8"),
                ("type", kind),
                ("size", size),
                ("shared_cpu_list", map),
            ] {
                let p = format!("devices/system/cpu/{cpu}/cache/{idx}/{f}");
                files.push((
                    Box::leak(p.into_boxed_str()),
                    Box::leak(format!("{v}\n").into_boxed_str()),
                ));
            }
        }
    }
    tree(&files)
}

#[test]
fn caches_deduplicated_and_sorted_by_level() {
    let t = two_cpu_caches();
    let b = caches(t.path()).unwrap();
    let mut at = 0;
    assert_eq!((u32_at(&b, &mut at), u32_at(&b, &mut at)), (1, 7));
    let mut seen = Vec::new();
    for _ in 0..7 {
        let level = u32_at(&b, &mut at);
        let nums = (0..3).map(|_| u32_at(&b, &mut at)).collect::<Vec<_>>();
        assert_eq!(nums, [64, 64, 8]);
        let (kind, size, map) = (
            string(&b, &mut at),
            string(&b, &mut at),
            string(&b, &mut at),
        );
        seen.push(format!("L{level} {kind} {size} [{map}]"));
    }
    assert_eq!(
        seen,
        [
            "L1 Data 32K [0]",
            "L1 Instruction 32K [0]",
            "L1 Data 32K [1]",
            "L1 Instruction 32K [1]",
            "L2 Unified 1024K [0]",
            "L2 Unified 1024K [1]",
            "L3 Unified 32768K [0-1]",
        ]
    );
    assert_eq!(at, b.len());
    std::fs::remove_file(t.path().join("devices/system/cpu/cpu1/cache/index2/size")).unwrap();
    assert_eq!(
        caches(t.path()),
        None,
        "a cache that can't be read leaves the section out"
    );
}

#[test]
fn memory_blocks_of_each_node() {
    let t = tree(&[
        ("devices/system/memory/block_size_bytes", "8000000\n"),
        ("devices/system/node/online", "0-1\n"),
        ("devices/system/node/node1/memory64/x", ""),
        ("devices/system/node/node1/memory_failure/x", ""),
        ("devices/system/node/node0/memory0/x", ""),
        ("devices/system/node/node0/memory2/x", ""),
    ]);
    let b = mem_topology(t.path()).unwrap();
    let mut at = 0;
    let head: Vec<u64> = (0..3).map(|_| u64_at(&b, &mut at)).collect();
    assert_eq!(head, [1, 0x8000000, 2]);
    let node0: Vec<u64> = (0..4).map(|_| u64_at(&b, &mut at)).collect();
    assert_eq!(node0, [0, 3, 3, 0b101]);
    let node1: Vec<u64> = (0..5).map(|_| u64_at(&b, &mut at)).collect();
    assert_eq!(node1, [1, 65, 65, 0, 1]);
    assert_eq!(at, b.len());
    assert_eq!(mem_topology(Path::new("/nonexistent")), None);
}
