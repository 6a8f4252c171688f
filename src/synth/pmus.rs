//! The PMU sections as perf 6.12 writes them (tools/perf/util/pmus.c,
//! header.c): PMU_MAPPINGS in perf's scan order (core PMUs first, then the
//! others, each sorted by name), CPU_PMU_CAPS, PMU_CAPS and, on hybrid
//! machines, HYBRID_TOPOLOGY. Everything is read under `devices`
//! (`/sys/bus/event_source/devices` on a host).

use std::cmp::Ordering;
use std::path::Path;

use crate::format::feature::write_string;

/// One PMU of sysfs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PmuEntry {
    /// Its directory name (`cpu`, `msr`, `uncore_cha_2`).
    pub name: String,
    /// Its `type` file: the attr type that selects it.
    pub type_: u32,
    /// A core PMU: `cpu`, `cpum_cf`, or one with a `cpus` file (hybrid).
    pub core: bool,
}

/// `PERF_TYPE_RAW`: the type of the placeholder `cpu` PMU perf makes up
/// when sysfs has no core PMU (a VM without a PMU).
const PLACEHOLDER_TYPE: u32 = 4;

/// The length of `name` without a `_<number>` suffix, and the number
/// (perf's `pmu_name_len_no_suffix`: hex suffixes need 3 digits or more).
fn no_suffix(name: &str) -> (usize, u64) {
    let b = name.as_bytes();
    let mut len = b.len();
    let mut hex_letters = false;
    while len > 0 && b[len - 1].is_ascii_hexdigit() {
        hex_letters |= !b[len - 1].is_ascii_digit();
        len -= 1;
    }
    if len > 0 && len != b.len() && b[len - 1] == b'_' && (!hex_letters || b.len() - len > 2) {
        let radix = if hex_letters { 16 } else { 10 };
        let n = u64::from_str_radix(&name[len..], radix).unwrap_or(0);
        return (len - 1, n);
    }
    (b.len(), 0)
}

/// perf's `pmus_cmp`: names without their numeric suffix, then the suffix.
fn pmus_cmp(a: &str, b: &str) -> Ordering {
    let ((la, na), (lb, nb)) = (no_suffix(a), no_suffix(b));
    let n = la.min(lb);
    let c = a.as_bytes()[..n].cmp(&b.as_bytes()[..n]);
    if la != lb || c != Ordering::Equal || la == 0 {
        return c;
    }
    na.cmp(&nb)
}

/// A stable insertion sort by `pmus_cmp` (perf's list_sort is a stable
/// merge sort; the comparison is not a total order, which std's sorts may
/// reject).
fn sort_pmus(v: &mut [PmuEntry]) {
    for i in 1..v.len() {
        let mut j = i;
        while j > 0 && pmus_cmp(&v[j - 1].name, &v[j].name) == Ordering::Greater {
            v.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// Every PMU with a readable `type`, in perf 6.12's scan order, with the
/// placeholder `cpu` PMU where sysfs has no core PMU.
pub fn scan(devices: &Path) -> Vec<PmuEntry> {
    let mut all: Vec<PmuEntry> = std::fs::read_dir(devices)
        .map(|d| {
            d.filter_map(|e| {
                let name = e.ok()?.file_name().to_string_lossy().into_owned();
                let dir = devices.join(&name);
                let type_ = std::fs::read_to_string(dir.join("type"))
                    .ok()?
                    .trim()
                    .parse()
                    .ok()?;
                let core = name == "cpu" || name == "cpum_cf" || dir.join("cpus").exists();
                Some(PmuEntry { name, type_, core })
            })
            .collect()
        })
        .unwrap_or_default();
    if !all.iter().any(|p| p.core) {
        all.push(PmuEntry {
            name: "cpu".into(),
            type_: PLACEHOLDER_TYPE,
            core: true,
        });
    }
    let (mut core, mut other): (Vec<PmuEntry>, Vec<PmuEntry>) =
        all.into_iter().partition(|p| p.core);
    sort_pmus(&mut core);
    sort_pmus(&mut other);
    core.extend(other);
    core
}

/// HEADER_PMU_MAPPINGS: `u32 nr; {u32 type; string name}[nr]`.
pub fn mappings(pmus: &[PmuEntry]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&(pmus.len() as u32).to_le_bytes());
    for p in pmus {
        b.extend_from_slice(&p.type_.to_le_bytes());
        write_string(&mut b, &p.name);
    }
    b
}

/// A PMU's `caps/` files as (name, value), in directory order (perf's
/// `perf_pmu__caps_parse`: an empty file is skipped, the value is its first
/// line).
pub fn caps(devices: &Path, pmu: &str) -> Vec<(String, String)> {
    let Ok(d) = std::fs::read_dir(devices.join(pmu).join("caps")) else {
        return Vec::new();
    };
    d.filter_map(|e| {
        let e = e.ok()?;
        let value = std::fs::read_to_string(e.path()).ok()?;
        let first = value.lines().next()?.to_string();
        Some((e.file_name().to_string_lossy().into_owned(), first))
    })
    .collect()
}

fn write_caps(b: &mut Vec<u8>, caps: &[(String, String)]) {
    b.extend_from_slice(&(caps.len() as u32).to_le_bytes());
    for (name, value) in caps {
        write_string(b, name);
        write_string(b, value);
    }
}

/// HEADER_CPU_PMU_CAPS: the caps of the first core PMU.
pub fn cpu_pmu_caps(devices: &Path, pmus: &[PmuEntry]) -> Option<Vec<u8>> {
    let core = pmus.iter().find(|p| p.core)?;
    let mut b = Vec::new();
    write_caps(&mut b, &caps(devices, &core.name));
    Some(b)
}

/// HEADER_PMU_CAPS: every PMU but `cpu` that has caps, each with its name.
pub fn pmu_caps(devices: &Path, pmus: &[PmuEntry]) -> Vec<u8> {
    let with: Vec<(&PmuEntry, Vec<(String, String)>)> = pmus
        .iter()
        .filter(|p| p.name != "cpu")
        .map(|p| (p, caps(devices, &p.name)))
        .filter(|(_, c)| !c.is_empty())
        .collect();
    let mut b = Vec::new();
    b.extend_from_slice(&(with.len() as u32).to_le_bytes());
    for (p, c) in with {
        write_caps(&mut b, &c);
        write_string(&mut b, &p.name);
    }
    b
}

/// HEADER_HYBRID_TOPOLOGY: each core PMU and its `cpus`, where there is
/// more than one core PMU (`cpu_core` and `cpu_atom`); else `None`.
pub fn hybrid_topology(devices: &Path, pmus: &[PmuEntry]) -> Option<Vec<u8>> {
    let core: Vec<&PmuEntry> = pmus.iter().filter(|p| p.core).collect();
    if core.len() <= 1 {
        return None;
    }
    let mut b = Vec::new();
    b.extend_from_slice(&(core.len() as u32).to_le_bytes());
    for p in core {
        let cpus = std::fs::read_to_string(devices.join(&p.name).join("cpus")).ok()?;
        write_string(&mut b, &p.name);
        write_string(&mut b, cpus.lines().next()?);
    }
    Some(b)
}

#[cfg(test)]
mod tests {
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

    fn names(p: &[PmuEntry]) -> Vec<(&str, u32)> {
        p.iter().map(|p| (p.name.as_str(), p.type_)).collect()
    }

    #[test]
    fn perfs_order_with_the_placeholder_cpu() {
        let t = tree(&[
            ("uprobe/type", "8\n"),
            ("software/type", "1\n"),
            ("msr/type", "9\n"),
            ("tracepoint/type", "2\n"),
            ("breakpoint/type", "5\n"),
            ("notype/format/x", ""),
        ]);
        let p = scan(t.path());
        assert_eq!(
            names(&p),
            [
                ("cpu", 4),
                ("breakpoint", 5),
                ("msr", 9),
                ("software", 1),
                ("tracepoint", 2),
                ("uprobe", 8)
            ]
        );
        assert_eq!(cpu_pmu_caps(t.path(), &p), Some(vec![0, 0, 0, 0]));
        assert_eq!(pmu_caps(t.path(), &p), vec![0, 0, 0, 0]);
        assert_eq!(hybrid_topology(t.path(), &p), None);
        let m = mappings(&p);
        assert_eq!(m.len(), 4 + 6 * (4 + 68));
    }

    #[test]
    fn numbered_pmus_sort_by_number_and_hybrid_cores_come_first() {
        let t = tree(&[
            ("uncore_cha_10/type", "30\n"),
            ("uncore_cha_2/type", "22\n"),
            ("cpu_core/type", "4\n"),
            ("cpu_core/cpus", "0-15\n"),
            ("cpu_atom/type", "10\n"),
            ("cpu_atom/cpus", "16-23\n"),
            ("cpu_atom/caps/branches", "32\n"),
            ("cpu_atom/caps/empty", ""),
            ("cpu_core/caps/pmu_name", "alderlake_hybrid\n"),
        ]);
        let p = scan(t.path());
        assert_eq!(
            names(&p),
            [
                ("cpu_atom", 10),
                ("cpu_core", 4),
                ("uncore_cha_2", 22),
                ("uncore_cha_10", 30)
            ]
        );
        assert_eq!(
            caps(t.path(), "cpu_atom"),
            [("branches".to_string(), "32".to_string())]
        );
        let h = hybrid_topology(t.path(), &p).unwrap();
        assert_eq!(h.len(), 4 + 4 * 68);
        assert_eq!(&h[..4], &2u32.to_le_bytes());
        // Both core PMUs have caps; `cpu` (absent) is never in PMU_CAPS.
        assert_eq!(&pmu_caps(t.path(), &p)[..4], &2u32.to_le_bytes());
    }

    #[test]
    fn suffixes_as_perf_reads_them() {
        assert_eq!(no_suffix("uncore_cha_10"), (10, 10));
        assert_eq!(no_suffix("cpum_cf"), (7, 0));
        assert_eq!(no_suffix("software"), (8, 0));
        assert_eq!(pmus_cmp("uncore_cha_2", "uncore_cha_10"), Ordering::Less);
    }
}
