//! The perf_event_attr entries a perf.data file holds, read by this test's
//! own few lines (not perfz's reader: the file is what is judged), as the
//! values perf's attr hook would have written for them.
//!
//! Layout (docs/perf-data-format.md; linux include/uapi/linux/perf_event.h):
//! the header is magic "PERFILE2", size, attr_size, then the sections
//! attrs, data, event_types ({u64 offset, u64 size} each) and 256 feature
//! bits; attrs holds attr_size-byte entries, each a perf_event_attr then
//! the {offset, size} of its ids; the feature sections' index table starts
//! at data.offset + data.size, one {offset, size} per set bit.

use std::collections::BTreeMap;
use std::path::Path;

use super::attr_file::{resolve_groups, Event};

/// perf_event_attr's one-bit (and the two-bit precise_ip) flags: name, bit.
const FLAG_BITS: &[(&str, u32, u32)] = &[
    ("disabled", 0, 1),
    ("inherit", 1, 1),
    ("pinned", 2, 1),
    ("exclusive", 3, 1),
    ("exclude_user", 4, 1),
    ("exclude_kernel", 5, 1),
    ("exclude_hv", 6, 1),
    ("exclude_idle", 7, 1),
    ("mmap", 8, 1),
    ("comm", 9, 1),
    ("freq", 10, 1),
    ("inherit_stat", 11, 1),
    ("enable_on_exec", 12, 1),
    ("task", 13, 1),
    ("watermark", 14, 1),
    ("precise_ip", 15, 2),
    ("mmap_data", 17, 1),
    ("sample_id_all", 18, 1),
    ("exclude_host", 19, 1),
    ("exclude_guest", 20, 1),
    ("exclude_callchain_kernel", 21, 1),
    ("exclude_callchain_user", 22, 1),
    ("mmap2", 23, 1),
    ("comm_exec", 24, 1),
    ("use_clockid", 25, 1),
    ("context_switch", 26, 1),
    ("write_backward", 27, 1),
    ("namespaces", 28, 1),
];

/// Fixed fields: name, offset, width in bytes.
const FIELDS: &[(&str, usize, usize)] = &[
    ("type", 0, 4),
    ("size", 4, 4),
    ("config", 8, 8),
    ("sample_period", 16, 8),
    ("sample_type", 24, 8),
    ("read_format", 32, 8),
    ("wakeup_events", 48, 4),
    ("bp_type", 52, 4),
    ("config1", 56, 8),
    ("config2", 64, 8),
    ("branch_sample_type", 72, 8),
    ("sample_regs_user", 80, 8),
    ("sample_stack_user", 88, 4),
];

const HEADER_GROUP_DESC: u32 = 17;

fn u32_at(b: &[u8], at: usize) -> Result<u32, String> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes(s.try_into().unwrap()))
        .ok_or_else(|| format!("file ends before byte {}", at + 4))
}

fn u64_at(b: &[u8], at: usize) -> Result<u64, String> {
    b.get(at..at + 8)
        .map(|s| u64::from_le_bytes(s.try_into().unwrap()))
        .ok_or_else(|| format!("file ends before byte {}", at + 8))
}

/// The attr entries of `path` as events named `event-N` (N from 1, file
/// order). `fd` is N; `group_fd` comes from HEADER_GROUP_DESC where the
/// file has one (else each event leads itself). What the file cannot hold
/// -- the open flags and the cpu, arguments of perf_event_open rather than
/// attr fields -- is `*`.
pub fn read_events(path: &Path) -> Result<BTreeMap<String, Event>, String> {
    let b = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if b.get(..8) != Some(b"PERFILE2") {
        return Err(format!(
            "{} does not start with PERFILE2 (a little-endian perf.data)",
            path.display()
        ));
    }
    let header_size = u64_at(&b, 8)?;
    if header_size != 104 {
        return Err(format!(
            "header size {header_size}, not 104: not a perf.data file (16 is pipe mode)"
        ));
    }
    let attr_size = u64_at(&b, 16)? as usize;
    let (attrs_off, attrs_size) = (u64_at(&b, 24)? as usize, u64_at(&b, 32)? as usize);
    if attr_size < 16 + 64 || attrs_size % attr_size != 0 {
        return Err(format!(
            "attr_size {attr_size} with attrs size {attrs_size}: no whole entries"
        ));
    }
    let mut raw = Vec::new();
    for i in 0..attrs_size / attr_size {
        let at = attrs_off + i * attr_size;
        let a = b
            .get(at..at + attr_size - 16)
            .ok_or_else(|| format!("attr {i} lies past the end of the file"))?;
        // An older, shorter attr reads as zeros past its end, as the
        // kernel and perf read it.
        let mut full = a.to_vec();
        full.resize(full.len().max(128), 0);
        raw.push(full);
    }
    let leaders = group_leaders(&b, raw.len())?;
    let mut events = BTreeMap::new();
    for (i, a) in raw.iter().enumerate() {
        let mut values = BTreeMap::new();
        for &(name, off, width) in FIELDS {
            let v = if width == 4 {
                u32_at(a, off)? as u64
            } else {
                u64_at(a, off)?
            };
            values.insert(name.to_string(), v.to_string());
        }
        let flags = u64_at(a, 40)?;
        for &(name, bit, width) in FLAG_BITS {
            let v = (flags >> bit) & ((1 << width) - 1);
            values.insert(name.to_string(), v.to_string());
        }
        for k in ["cpu", "flags"] {
            values.insert(k.to_string(), "*".to_string());
        }
        values.insert("fd".into(), (i + 1).to_string());
        let gfd = match leaders[i] {
            l if l == i => "-1".to_string(),
            l => (l + 1).to_string(),
        };
        values.insert("group_fd".into(), gfd);
        events.insert(
            format!("event-{}", i + 1),
            Event {
                values,
                group: String::new(),
            },
        );
    }
    resolve_groups(&mut events);
    Ok(events)
}

/// Each attr's leader index: from HEADER_GROUP_DESC ({u32 nr; then per
/// group a header string name, u32 leader_idx, u32 nr_members}: the
/// leader and the members after it), else itself.
fn group_leaders(b: &[u8], n: usize) -> Result<Vec<usize>, String> {
    let mut leaders: Vec<usize> = (0..n).collect();
    let features: Vec<u64> = (0..4)
        .map(|w| u64_at(b, 72 + 8 * w))
        .collect::<Result<_, _>>()?;
    let set = |bit: u32| features[bit as usize / 64] >> (bit % 64) & 1 == 1;
    if !set(HEADER_GROUP_DESC) {
        return Ok(leaders);
    }
    let before = (0..HEADER_GROUP_DESC).filter(|&f| set(f)).count();
    let table = (u64_at(b, 40)? + u64_at(b, 48)?) as usize;
    let mut at = u64_at(b, table + 16 * before)? as usize;
    let nr = u32_at(b, at)?;
    at += 4;
    for _ in 0..nr {
        let len = u32_at(b, at)? as usize;
        at += 4 + len;
        let (leader, members) = (u32_at(b, at)? as usize, u32_at(b, at + 4)? as usize);
        at += 8;
        if leader + members > n {
            return Err(format!(
                "HEADER_GROUP_DESC: a group of {members} from attr {leader} among {n}"
            ));
        }
        for l in &mut leaders[leader..leader + members] {
            *l = leader;
        }
    }
    Ok(leaders)
}
