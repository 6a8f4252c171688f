//! The header features of a recording, gathered like perf does (format notes
//! 3.2): host facts, the command line and the event descriptions.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

use super::topology;
use crate::event::events::EventSpec;
use crate::event::tracefs::Tracepoint;
use crate::format::feature::{write_string, write_string_list};
use crate::format::{feat, AttrEntry, CompressedInfo, FeatureSet};
use crate::transform::scan::SampleTimes;

/// This host's (nodename, release, machine).
pub(crate) fn uname() -> Option<(String, String, String)> {
    // SAFETY: utsname is plain data; uname fills it in.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: passes a valid pointer to a local struct.
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    let s = |f: &[libc::c_char]| -> String {
        let b: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&b).into_owned()
    };
    Some((s(&u.nodename), s(&u.release), s(&u.machine)))
}

fn cpuinfo_field(info: &str, key: &str) -> Option<String> {
    info.lines()
        .find(|l| l.split(':').next().map(str::trim) == Some(key))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Features known at the start of a session.
pub fn session_features(attrs: &[AttrEntry], argv: &[OsString]) -> FeatureSet {
    let mut f = FeatureSet::default();
    if let Some((host, release, machine)) = uname() {
        f.set_string(feat::HOSTNAME, &host);
        f.set_string(feat::OSRELEASE, &release);
        f.set_string(feat::ARCH, &machine);
    }
    f.set_string(feat::VERSION, concat!("perfz-", env!("CARGO_PKG_VERSION")));
    let sys = Path::new("/sys");
    let online = crate::event::cpus::online().map(|c| c.len()).unwrap_or(1) as u32;
    // perf's nr_cpus_avail: one past the highest present CPU.
    let avail = topology::max_present_cpu(sys)
        .or_else(|| crate::event::cpus::possible().ok().map(|c| c.len() as u32))
        .unwrap_or(online);
    f.set(
        feat::NRCPUS,
        [avail.to_le_bytes(), online.to_le_bytes()].concat(),
    );
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    if let Some(model) = cpuinfo_field(&info, "model name") {
        f.set_string(feat::CPUDESC, &model);
    }
    if let (Some(v), Some(fam), Some(m), Some(s)) = (
        cpuinfo_field(&info, "vendor_id"),
        cpuinfo_field(&info, "cpu family"),
        cpuinfo_field(&info, "model"),
        cpuinfo_field(&info, "stepping"),
    ) {
        f.set_string(feat::CPUID, &format!("{v},{fam},{m},{s}"));
    }
    if let Some(kb) = mem_total_kb() {
        f.set(feat::TOTAL_MEM, kb.to_le_bytes().to_vec());
    }
    // CMDLINE: the binary's absolute path, then the arguments after it,
    // their bytes as given.
    let exe = std::fs::read_link("/proc/self/exe").unwrap_or_else(|_| "perfz".into());
    let mut cmd = vec![exe.into_os_string().into_vec()];
    cmd.extend(argv.iter().skip(1).map(|a| a.as_bytes().to_vec()));
    let mut b = Vec::new();
    write_string_list(&mut b, &cmd);
    f.set(feat::CMDLINE, b);
    f.set(feat::EVENT_DESC, event_desc(attrs));
    host_features(&mut f, sys, avail);
    f
}

/// The host facts perf 6.12 writes beside the basic ones: the CPU, NUMA,
/// cache and memory topology (each left out where sysfs cannot say it, as
/// perf does), and the BPF sections (perfz keeps no BPF program info:
/// empty, as perf writes them where none are loaded).
fn host_features(f: &mut FeatureSet, sys: &Path, nr_avail: u32) {
    let machine = uname().map(|u| u.2).unwrap_or_default();
    let sections = [
        (
            feat::CPU_TOPOLOGY,
            topology::cpu_topology(sys, nr_avail, &machine),
        ),
        (feat::NUMA_TOPOLOGY, topology::numa_topology(sys)),
        (feat::CACHE, topology::caches(sys)),
        (feat::MEM_TOPOLOGY, topology::mem_topology(sys)),
        (feat::BPF_PROG_INFO, Some(0u32.to_le_bytes().to_vec())),
        (feat::BPF_BTF, Some(0u32.to_le_bytes().to_vec())),
    ];
    for (bit, payload) in sections {
        if let Some(p) = payload {
            f.set(bit, p);
        }
    }
}

/// HEADER_SAMPLE_TIME: the first and last sample times of an output (both
/// 0 where it has no sample, as perf writes them then).
pub fn set_sample_time(f: &mut FeatureSet, times: SampleTimes) {
    let (first, last) = times.range().unwrap_or((0, 0));
    f.set(
        feat::SAMPLE_TIME,
        [first.to_le_bytes(), last.to_le_bytes()].concat(),
    );
}

/// What the events add: HEADER_TRACING_DATA for tracepoints, GROUP_DESC
/// for `{...}` groups (as `{anon_group}`, leader index, members), and the
/// PMU sections (PMU_MAPPINGS, CPU_PMU_CAPS, PMU_CAPS, HYBRID_TOPOLOGY),
/// as perf 6.12 writes them.
pub fn event_features(f: &mut FeatureSet, specs: &[EventSpec]) -> std::io::Result<()> {
    let tps: Vec<&Tracepoint> = specs.iter().filter_map(|e| e.tracepoint.as_ref()).collect();
    if !tps.is_empty() {
        let root = crate::event::tracefs::root()?;
        f.set(
            feat::TRACING_DATA,
            super::tracing::tracing_data(&root, &tps)?,
        );
    }
    let mut groups: Vec<(u32, u32, u32)> = Vec::new(); // (id, leader idx, members)
    for (i, e) in specs.iter().enumerate() {
        if let Some(g) = e.group {
            match groups.iter_mut().find(|(id, ..)| *id == g.id) {
                Some(entry) => entry.2 += 1,
                None => groups.push((g.id, i as u32, 1)),
            }
        }
    }
    if !groups.is_empty() {
        let mut b = Vec::new();
        b.extend_from_slice(&(groups.len() as u32).to_le_bytes());
        for (_, leader, n) in groups {
            write_string(&mut b, "{anon_group}");
            b.extend_from_slice(&leader.to_le_bytes());
            b.extend_from_slice(&n.to_le_bytes());
        }
        f.set(feat::GROUP_DESC, b);
    }
    let devices = Path::new("/sys/bus/event_source/devices");
    let pmus = super::pmus::scan(devices);
    f.set(feat::PMU_MAPPINGS, super::pmus::mappings(&pmus));
    if let Some(b) = super::pmus::cpu_pmu_caps(devices, &pmus) {
        f.set(feat::CPU_PMU_CAPS, b);
    }
    f.set(feat::PMU_CAPS, super::pmus::pmu_caps(devices, &pmus));
    if let Some(b) = super::pmus::hybrid_topology(devices, &pmus) {
        f.set(feat::HYBRID_TOPOLOGY, b);
    }
    Ok(())
}

/// EVENT_DESC: where perf report gets event names.
pub fn event_desc(attrs: &[AttrEntry]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&(attrs.len() as u32).to_le_bytes());
    let size = attrs.first().map_or(128, |a| a.attr.raw.len()) as u32;
    b.extend_from_slice(&size.to_le_bytes());
    for a in attrs {
        b.extend_from_slice(&a.attr.raw);
        b.extend_from_slice(&(a.ids.len() as u32).to_le_bytes());
        write_string(&mut b, a.name.as_deref().unwrap_or("unknown"));
        for id in &a.ids {
            b.extend_from_slice(&id.to_le_bytes());
        }
    }
    b
}

/// /proc/meminfo's MemTotal, in kB.
pub fn mem_total_kb() -> Option<u64> {
    let mem = std::fs::read_to_string("/proc/meminfo").ok()?;
    mem.lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
}

/// The features of a `--threads` directory's `data`: the recording's,
/// with HEADER_DIR_FORMAT and HEADER_COMPRESSED (over every stream).
pub fn dir_features(features: &FeatureSet, compressed: Option<CompressedInfo>) -> FeatureSet {
    let mut f = features.with_compressed(compressed);
    f.set(feat::DIR_FORMAT, 1u64.to_le_bytes().to_vec());
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_read_back() {
        let attrs = vec![AttrEntry {
            attr: crate::format::Attr::new(),
            ids: vec![5, 6],
            name: Some("cpu-clock".into()),
        }];
        let f = session_features(&attrs, &["perfz".into(), "record".into(), "-g".into()]);
        assert!(f.string(feat::HOSTNAME).is_some());
        assert_eq!(
            f.cmdline().unwrap()[1..],
            ["record".to_string(), "-g".to_string()]
        );
        assert_eq!(
            f.event_desc().unwrap(),
            vec![("cpu-clock".to_string(), vec![5, 6])]
        );
        assert!(f.total_mem_kb().unwrap() > 0);
    }
}
