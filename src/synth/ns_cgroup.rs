//! NAMESPACES records of tasks that exist at the start (`--namespaces`) and
//! CGROUP records of the cgroups that exist (`--all-cgroups`), made as perf's
//! `perf_event__synthesize_namespaces` and `perf_event__synthesize_cgroups`
//! make them.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{cstr8, record};

/// `PERF_RECORD_NAMESPACES`.
const NAMESPACES: u32 = 16;
/// `PERF_RECORD_CGROUP`.
const CGROUP: u32 = 19;

/// The namespaces a NAMESPACES record lists, in the kernel's order
/// (`NET_NS_INDEX` .. `CGROUP_NS_INDEX`).
const NAMESPACE_LINKS: [&str; 7] = ["net", "uts", "ipc", "pid", "user", "mnt", "cgroup"];

/// A NAMESPACES record of thread `tid` of `pid`: each namespace's device and
/// inode (0 where /proc does not show it), with a zeroed trailer.
pub fn namespaces_record(pid: i32, tid: i32, trailer: usize) -> Vec<u8> {
    let mut body = Vec::with_capacity(16 + 16 * NAMESPACE_LINKS.len());
    body.extend_from_slice(&(pid as u32).to_le_bytes());
    body.extend_from_slice(&(tid as u32).to_le_bytes());
    body.extend_from_slice(&(NAMESPACE_LINKS.len() as u64).to_le_bytes());
    for ns in NAMESPACE_LINKS {
        let (dev, ino) = std::fs::metadata(format!("/proc/{pid}/task/{tid}/ns/{ns}"))
            .map_or((0, 0), |m| (m.dev(), m.ino()));
        body.extend_from_slice(&dev.to_le_bytes());
        body.extend_from_slice(&ino.to_le_bytes());
    }
    record(NAMESPACES, 0, &body, trailer)
}

/// Where the cgroup v2 hierarchy (whose ids PERF_SAMPLE_CGROUP carries) is
/// mounted: /sys/fs/cgroup, or /sys/fs/cgroup/unified on hybrid systems.
pub fn cgroup2_root() -> Option<std::path::PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    mounts.lines().find_map(|l| {
        let mut f = l.split(' ');
        let (_, at, fs) = (f.next()?, f.next()?, f.next()?);
        (fs == "cgroup2").then(|| std::path::PathBuf::from(at.replace("\\040", " ")))
    })
}

/// The kernel's id of the cgroup at `dir`: its file handle (what
/// PERF_SAMPLE_CGROUP carries), as perf reads it.
fn cgroup_id(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    #[repr(C)]
    struct CgroupHandle {
        bytes: u32,
        kind: i32,
        id: [u8; 8],
    }
    let mut h = CgroupHandle {
        bytes: 8,
        kind: 0,
        id: [0; 8],
    };
    let mut mount_id = 0;
    // SAFETY: `h` is a file_handle header with room for the 8 bytes it
    // announces; path is NUL-terminated; mount_id is a local int.
    let r = unsafe {
        libc::name_to_handle_at(
            libc::AT_FDCWD,
            path.as_ptr(),
            (&mut h as *mut CgroupHandle).cast(),
            &mut mount_id,
            0,
        )
    };
    (r == 0 && h.bytes == 8).then(|| u64::from_le_bytes(h.id))
}

/// CGROUP records of every cgroup under the v2 hierarchy (root first),
/// each named by its path under the mount ("/" for the root), at most
/// `limit` of them.
pub fn cgroup_records(trailer: usize, limit: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let Some(root) = cgroup2_root() else {
        return out;
    };
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        if out.len() >= limit {
            break;
        }
        let Some(id) = cgroup_id(&dir) else { continue };
        let rel = dir.strip_prefix(&root).unwrap_or(&dir);
        let name = format!("/{}", rel.display());
        let mut body = id.to_le_bytes().to_vec();
        cstr8(&mut body, name.as_bytes());
        out.push(record(CGROUP, 0, &body, trailer));
        if let Ok(rd) = std::fs::read_dir(&dir) {
            let mut subs: Vec<_> = rd
                .filter_map(|e| e.ok())
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect();
            subs.sort_unstable_by(|a, b| b.cmp(a));
            dirs.extend(subs);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespaces_record_lists_seven_namespaces() {
        let me = std::process::id() as i32;
        let r = namespaces_record(me, me, 0);
        assert_eq!(u32::from_le_bytes(r[0..4].try_into().unwrap()), NAMESPACES);
        assert_eq!(r.len(), 8 + 16 + 7 * 16);
        assert_eq!(u64::from_le_bytes(r[16..24].try_into().unwrap()), 7);
        let mnt = std::fs::metadata(format!("/proc/{me}/ns/mnt")).unwrap();
        let at = 24 + 5 * 16;
        assert_eq!(
            u64::from_le_bytes(r[at + 8..at + 16].try_into().unwrap()),
            mnt.ino()
        );
    }

    #[test]
    fn the_root_cgroup_comes_first_with_its_id() {
        assert!(
            cgroup2_root().is_some_and(|r| r.join("cgroup.procs").exists()),
            "this test reads the cgroup v2 hierarchy: mount it (mount -t cgroup2 none /sys/fs/cgroup)"
        );
        let recs = cgroup_records(0, 4);
        let r = &recs[0];
        assert_eq!(u32::from_le_bytes(r[0..4].try_into().unwrap()), CGROUP);
        assert_eq!(&r[16..18], b"/\0");
        assert_ne!(u64::from_le_bytes(r[8..16].try_into().unwrap()), 0);
    }
}
