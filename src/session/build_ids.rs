//! The end-of-recording build-id pass, as perf does without `-z` (perfz does
//! it with every codec). perf reads the whole recording back for it; perfz
//! gathers what it needs while draining ([`Hits`]: the code pages samples
//! hit, per process, and the MMAP/MMAP2/FORK records), so the pass costs no
//! second read. At the end every page is resolved against the maps its
//! process (or an ancestor it forked from) ever had, the DSOs hit (or all,
//! `--buildid-all`) are written as HEADER_BUILD_ID and put into perf's
//! build-id cache (`~/.debug`, unless `-N`) so `perf report` still
//! symbolizes the recording after the binaries change.
//!
//! The cache is laid out as `perf buildid-cache` lays it out:
//! `<path>/<id>/elf` (hard-linked, or copied across file systems),
//! `.build-id/xx/rest` symlinks, `[kernel.kallsyms]/<id>/kallsyms`. Entries
//! are created exclusively under a random name and linked in; an existing
//! entry is left alone (tests/it/hostile_surroundings.rs). Measured on 1 GB of dwarf
//! trace, gathering while draining added no recorder CPU; a version that
//! read the recording back cost 0.2 s more.

use std::collections::HashMap;
use std::path::Path;

use super::dso_capture::cache::{cache_kallsyms, link_build_id};
use crate::format::record::misc;
use crate::format::record::KERNEL_MAPS;
use crate::format::side_band::SideBand;
use crate::format::RecordType;
use crate::notes::Notes;
use crate::synth::build_id;
use crate::transform::scan::Hits;

/// One mapped object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dso {
    pub name: String,
    pub build_id: Option<Vec<u8>>,
    pub kernel: bool,
    pub hit: bool,
}

#[derive(Clone, Copy)]
struct Map {
    start: u64,
    end: u64,
    dso: usize,
}

/// What the pass found.
#[derive(Default)]
pub struct Dsos {
    pub dsos: Vec<Dso>,
    by_key: HashMap<(String, Option<Vec<u8>>), usize>,
    /// Every map each process ever had (kernel: pid u32::MAX).
    maps: HashMap<u32, Vec<Map>>,
    /// The process each one was forked from.
    parent: HashMap<u32, u32>,
}

impl Dsos {
    fn dso(&mut self, name: &str, build_id: Option<Vec<u8>>, kernel: bool) -> usize {
        let key = (name.to_string(), build_id.clone());
        if let Some(&i) = self.by_key.get(&key) {
            return i;
        }
        self.dsos.push(Dso {
            name: name.into(),
            build_id,
            kernel,
            hit: false,
        });
        self.by_key.insert(key, self.dsos.len() - 1);
        self.dsos.len() - 1
    }

    fn map(&mut self, pid: u32, start: u64, len: u64, dso: usize) {
        self.maps.entry(pid).or_default().push(Map {
            start,
            end: start.saturating_add(len),
            dso,
        });
    }

    /// Feeds one MMAP / MMAP2 / FORK record (header included), decoded by
    /// `format::side_band` (as `perfz export` reads them).
    fn record(&mut self, rec: &[u8]) {
        let Some(h) = rec.get(..8) else {
            return;
        };
        let type_ = RecordType(u32::from_le_bytes(h[..4].try_into().unwrap()));
        let misc = u16::from_le_bytes([h[4], h[5]]);
        match SideBand::parse(type_, misc, &rec[8..]) {
            Some(SideBand::Map {
                pid,
                start,
                len,
                path,
                build_id,
                kernel,
                ..
            }) => {
                if kernel {
                    // The kernel image (its modules are not looked up).
                    if path.starts_with(KERNEL_MAPS) {
                        let d = self.dso(KERNEL_MAPS, build_id::of_kernel(), true);
                        self.map(u32::MAX, start, len, d);
                    }
                } else {
                    let d = self.dso(&path, build_id, false);
                    self.map(pid, start, len, d);
                }
            }
            Some(SideBand::Fork { pid, ppid, .. }) if ppid != pid => {
                self.parent.insert(pid, ppid);
            }
            _ => {}
        }
    }

    /// Marks the DSO mapped at page `page` of process `pid`: its own maps,
    /// latest first, then those of the processes it was forked from.
    fn hit(&mut self, pid: u32, page: u64) {
        let addr = page << 12;
        let mut p = pid;
        for _ in 0..64 {
            if let Some(m) = self
                .maps
                .get(&p)
                .and_then(|maps| maps.iter().rev().find(|m| m.start <= addr && addr < m.end))
            {
                self.dsos[m.dso].hit = true;
                return;
            }
            match self.parent.get(&p) {
                Some(&pp) => p = pp,
                None => return,
            }
        }
    }

    /// Resolves what the drain gathered.
    pub fn from_hits(hits: &Hits) -> Dsos {
        let mut d = Dsos::default();
        let mut at = 0;
        while at + 8 <= hits.maps.len() {
            let size = u16::from_le_bytes([hits.maps[at + 6], hits.maps[at + 7]]) as usize;
            if size < 8 || at + size > hits.maps.len() {
                break;
            }
            d.record(&hits.maps[at..at + size]);
            at += size;
        }
        for &(pid, page) in &hits.pages {
            d.hit(pid, page);
        }
        d
    }

    /// The DSOs to list: hit ones (or all), with a build id (read from the
    /// file where the map did not carry one); anonymous and special maps
    /// other than the kernel are left out, as perf does.
    pub fn table(&mut self, all: bool) -> Vec<Dso> {
        let mut out = Vec::new();
        for d in &mut self.dsos {
            if !(d.hit || all) || !(d.kernel || d.name.starts_with('/')) {
                continue;
            }
            if d.build_id.is_none() && !d.kernel {
                d.build_id =
                    build_id::cached(&d.name).or_else(|| super::dso_capture::build_id_of(&d.name));
            }
            if d.build_id.is_some()
                && !out
                    .iter()
                    .any(|o: &Dso| o.name == d.name && o.build_id == d.build_id)
            {
                out.push(d.clone());
            }
        }
        out
    }
}

/// HEADER_BUILD_ID: one entry per DSO (format notes 3.3).
pub fn feature(dsos: &[Dso]) -> Vec<u8> {
    let mut b = Vec::new();
    for d in dsos {
        let id = d.build_id.as_deref().unwrap_or_default();
        // The recorded path's bytes (not UTF-8 ones too), as perf writes them.
        let name = crate::format::side_band::path_bytes(&d.name);
        let name_len = (name.len() + 1).div_ceil(64) * 64;
        let size = 36 + name_len;
        b.extend_from_slice(&0u32.to_le_bytes());
        let misc = if d.kernel { misc::KERNEL } else { misc::USER } | misc::BUILD_ID_SIZE;
        b.extend_from_slice(&misc.to_le_bytes());
        b.extend_from_slice(&(size as u16).to_le_bytes());
        b.extend_from_slice(&(-1i32).to_le_bytes());
        let mut idb = [0u8; 24];
        idb[..id.len()].copy_from_slice(id);
        idb[20] = id.len() as u8;
        b.extend_from_slice(&idb);
        let at = b.len();
        b.extend_from_slice(&name);
        b.resize(at + name_len, 0);
    }
    b
}

/// Adds `dsos` to the cache as `perf buildid-cache -a` lays it out:
/// `DIR/<path>/<id>/elf` (a hard link to a file of root's or the
/// recorder's, else a copy within the capture's limits: both of the file
/// opened once and checked, [`super::dso_capture::keep_named`]), an empty
/// `probes`, and `DIR/.build-id/<id[..2]>/<id[2..]>` linking to
/// `../../<path>/<id>`; the kernel as `DIR/[kernel.kallsyms]/<id>/kallsyms`.
/// Returns how many were added, and the first failure.
pub fn add_to_cache(dir: &Path, dsos: &[Dso]) -> (usize, Option<String>) {
    let (mut n, mut first_err) = (0, None);
    for d in dsos {
        let Some(id) = d.build_id.as_deref() else {
            continue;
        };
        let hexid = build_id::hex(id);
        let rel = d.name.trim_start_matches('/');
        let at = dir.join(rel).join(&hexid);
        let r = if d.kernel && !d.name.starts_with('/') {
            std::fs::create_dir_all(&at)
                .and_then(|()| cache_kallsyms(&at))
                .and_then(|()| link_build_id(dir, Path::new(rel), &hexid))
                .map_err(|e| e.to_string())
        } else {
            super::dso_capture::keep_named(dir, &d.name, id)
        };
        match r {
            Ok(()) => n += 1,
            Err(e) => {
                first_err.get_or_insert(format!("{}: {e}", d.name));
            }
        }
    }
    (n, first_err)
}

/// The pass at the end of a recording: sets BUILD_ID in `features` and
/// fills the cache; problems become notes (a recording is never failed for
/// its build ids).
/// With `vmlinux` (`--vmlinux`, checked to be the running kernel's), the
/// kernel's entry is that file, in the table and the cache, as perf's.
pub fn add(
    features: &mut crate::format::FeatureSet,
    hits: &Hits,
    o: &super::options::BuildIdOptions,
    vmlinux: Option<&Path>,
    notes: &mut Notes,
) {
    // What the capture still copies belongs in this table and cache.
    super::dso_capture::settle();
    let mut table = Dsos::from_hits(hits).table(o.all);
    if let Some(v) = vmlinux {
        for d in table.iter_mut().filter(|d| d.kernel) {
            d.name = v.display().to_string();
        }
    }
    if table.is_empty() {
        return;
    }
    features.set(crate::format::feat::BUILD_ID, feature(&table));
    if o.cache {
        if let Some(dir) = build_id::cache_dir() {
            if let (_, Some(e)) = add_to_cache(&dir, &table) {
                notes.push(format!(
                    "build-id cache {}: {e} (-N skips the cache)",
                    dir.display()
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_matches_perfs_entry_layout() {
        let d = Dso {
            name: "/usr/bin/dd".into(),
            build_id: Some(vec![0xe5; 20]),
            kernel: false,
            hit: true,
        };
        let b = feature(&[d]);
        assert_eq!(b.len(), 100, "36 + 64, as perf's plain-cmd fixture");
        assert_eq!(u16::from_le_bytes([b[4], b[5]]), 0x8002);
        assert_eq!(u16::from_le_bytes([b[6], b[7]]), 100);
        assert_eq!(i32::from_le_bytes(b[8..12].try_into().unwrap()), -1);
        assert_eq!(&b[12..32], &[0xe5; 20]);
        assert_eq!(b[32], 20);
        assert_eq!(&b[36..47], b"/usr/bin/dd");
    }

    #[test]
    fn pages_hit_the_maps_of_their_process_or_its_ancestors() {
        let mmap2 = |pid: u32, start: u64, name: &str| {
            let mut b = vec![10, 0, 0, 0, 2, 0, 0, 0];
            b.extend_from_slice(&pid.to_le_bytes());
            b.extend_from_slice(&pid.to_le_bytes());
            b.extend_from_slice(&start.to_le_bytes());
            b.extend_from_slice(&0x1000u64.to_le_bytes());
            b.extend_from_slice(&[0; 8 + 24 + 8]);
            b.extend_from_slice(name.as_bytes());
            b.resize(b.len().div_ceil(8) * 8 + 8, 0);
            let n = b.len() as u16;
            b[6..8].copy_from_slice(&n.to_le_bytes());
            b
        };
        let mut fork = vec![7, 0, 0, 0, 0, 0, 48, 0];
        for v in [11u32, 10, 11, 10] {
            fork.extend_from_slice(&v.to_le_bytes());
        }
        fork.resize(48, 0);
        let mut h = Hits::default();
        // The fork arrives before the parent's map (another ring): no matter.
        h.maps.extend(fork);
        h.maps.extend(mmap2(10, 0x1000, "/bin/a"));
        h.maps.extend(mmap2(12, 0x1000, "/bin/b"));
        h.pages.insert((11, 1));
        let d = Dsos::from_hits(&h);
        assert_eq!(d.dsos.len(), 2);
        assert!(d.dsos[0].hit, "the child hits its parent's map");
        assert!(!d.dsos[1].hit, "another process's map is not hit");
    }
}
