//! COMM / FORK / MMAP2 for processes that exist before the recording, read
//! from /proc the way perf does (format notes 7.2).

use super::{cstr8, record};
use crate::format::record::{misc, RecordType};

/// `Name:` of /proc/PID/task/TID/status.
pub fn comm_of(pid: i32, tid: i32) -> Option<String> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("Name:"))
        .map(|n| n.trim().to_string())
}

/// `PPid:` of /proc/PID/status.
fn ppid_of(pid: i32) -> i32 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("PPid:"))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// A COMM record naming thread `tid` of `pid` (the name cut to 15 bytes),
/// with a zeroed sample_id trailer of `trailer` bytes.
pub fn comm_record(pid: i32, tid: i32, comm: &str, trailer: usize) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&(pid as u32).to_le_bytes());
    body.extend_from_slice(&(tid as u32).to_le_bytes());
    cstr8(&mut body, &comm.as_bytes()[..comm.len().min(15)]);
    record(RecordType::COMM.0, 0, &body, trailer)
}

/// A FORK record of thread `tid` of `pid`, forked from `ptid` of `ppid`
/// (time 0), with a zeroed sample_id trailer of `trailer` bytes.
pub fn fork_record(pid: i32, ppid: i32, tid: i32, ptid: i32, trailer: usize) -> Vec<u8> {
    let mut body = Vec::new();
    for v in [pid, ppid, tid, ptid] {
        body.extend_from_slice(&(v as u32).to_le_bytes());
    }
    body.extend_from_slice(&0u64.to_le_bytes());
    record(RecordType::FORK.0, 0, &body, trailer)
}

/// MMAP2 records for the executable mappings of a /proc/PID/maps text, and
/// with `data` the others too (perf's `mmap_data`, needed to unwind dwarf
/// stacks: .eh_frame_hdr is not executable).
pub fn mmap2_records(pid: i32, maps: &str, data: bool, trailer: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for line in maps.lines() {
        if let Some(rec) = mmap2_record(pid, line, data, trailer) {
            out.push(rec);
        }
    }
    out
}

/// The MMAP2 record of one /proc/PID/maps line; `None` for a line that is
/// not a mapping, or a mapping that is not executable without `data`.
fn mmap2_record(pid: i32, line: &str, data: bool, trailer: usize) -> Option<Vec<u8>> {
    let mut it = line.split_whitespace();
    let (Some(range), Some(perms), Some(off), Some(dev), Some(ino)) =
        (it.next(), it.next(), it.next(), it.next(), it.next())
    else {
        return None;
    };
    let path: String = it.collect::<Vec<_>>().join(" ");
    let exec = perms.contains('x');
    if !exec && !data {
        return None;
    }
    let (start, end) = range.split_once('-')?;
    let (Ok(start), Ok(end), Ok(off)) = (
        u64::from_str_radix(start, 16),
        u64::from_str_radix(end, 16),
        u64::from_str_radix(off, 16),
    ) else {
        return None;
    };
    let (maj, min) = dev.split_once(':').map_or((0, 0), |(a, b)| {
        (
            u32::from_str_radix(a, 16).unwrap_or(0),
            u32::from_str_radix(b, 16).unwrap_or(0),
        )
    });
    let ino: u64 = ino.parse().unwrap_or(0);
    let prot = perms
        .bytes()
        .zip([1u32, 2, 4])
        .filter(|(c, _)| *c != b'-')
        .map(|(_, p)| p)
        .sum::<u32>();
    let flags: u32 = if perms.ends_with('s') { 1 } else { 2 };
    let name = if path.is_empty() {
        "//anon"
    } else {
        path.as_str()
    };
    let mut body = Vec::new();
    body.extend_from_slice(&(pid as u32).to_le_bytes());
    body.extend_from_slice(&(pid as u32).to_le_bytes());
    body.extend_from_slice(&start.to_le_bytes());
    body.extend_from_slice(&(end - start).to_le_bytes());
    body.extend_from_slice(&off.to_le_bytes());
    let has_build_id = push_file_id(&mut body, &path, maj, min, ino);
    body.extend_from_slice(&prot.to_le_bytes());
    body.extend_from_slice(&flags.to_le_bytes());
    cstr8(&mut body, name.as_bytes());
    let mut misc = if exec {
        misc::USER
    } else {
        misc::USER | misc::MMAP_DATA
    };
    if has_build_id {
        misc |= misc::MMAP_BUILD_ID;
    }
    Some(record(RecordType::MMAP2.0, misc, &body, trailer))
}

/// Appends the file part of an MMAP2 body for the file at `path`: its build
/// id where it has one (as the kernel writes MMAP2 with attr.build_id), else
/// device and inode. Whether it was the build id.
fn push_file_id(body: &mut Vec<u8>, path: &str, maj: u32, min: u32, ino: u64) -> bool {
    let build_id = path
        .starts_with('/')
        .then(|| super::build_id::cached(path))
        .flatten();
    match &build_id {
        Some(id) => {
            body.push(id.len() as u8);
            body.extend_from_slice(&[0, 0, 0]);
            body.extend_from_slice(id);
            body.resize(body.len() + super::build_id::MAX_SIZE - id.len(), 0);
        }
        None => {
            body.extend_from_slice(&maj.to_le_bytes());
            body.extend_from_slice(&min.to_le_bytes());
            body.extend_from_slice(&ino.to_le_bytes());
            body.extend_from_slice(&0u64.to_le_bytes()); // ino_generation
        }
    }
    build_id.is_some()
}

/// What to write of one process that exists at the start.
#[derive(Clone, Copy, Debug)]
pub struct Describe {
    /// FORK per thread (system-wide mode, like perf).
    pub fork: bool,
    /// NAMESPACES per thread (`--namespaces`).
    pub namespaces: bool,
    /// MMAP2 of its mappings (not with `--synth task`).
    pub maps: bool,
    /// Data mappings too (dwarf stacks, `-d`).
    pub data_mmaps: bool,
    /// How long its maps may take to read (`--proc-map-timeout`).
    pub map_timeout: std::time::Duration,
    /// Bytes of the zeroed sample_id trailer of each record.
    pub trailer: usize,
}

/// Records for one process: optionally FORK per thread, COMM (and
/// NAMESPACES) per thread, MMAP2 of the process's mappings, and whether its
/// maps took longer than the timeout (the rest are left out, as perf).
/// A process that vanished meanwhile yields nothing.
pub fn process_records(pid: i32, d: &Describe) -> (Vec<Vec<u8>>, bool) {
    let (with_fork, trailer) = (d.fork, d.trailer);
    let mut out = Vec::new();
    let Ok(tids) = crate::event::target::threads_of(pid) else {
        return (out, false);
    };
    for tid in tids {
        let Some(comm) = comm_of(pid, tid) else {
            continue;
        };
        if with_fork {
            let (ppid, ptid) = if tid == pid {
                (ppid_of(pid), ppid_of(pid))
            } else {
                (pid, pid)
            };
            out.push(fork_record(pid, ppid, tid, ptid, trailer));
        }
        out.push(comm_record(pid, tid, &comm, trailer));
        if d.namespaces {
            out.push(super::ns_cgroup::namespaces_record(pid, tid, trailer));
        }
    }
    if !d.maps {
        return (out, false);
    }
    let (maps, late) = read_maps(pid, d.map_timeout);
    out.extend(mmap2_records(pid, &maps, d.data_mmaps, trailer));
    (out, late)
}

/// /proc/PID/maps, line by line until `timeout` has passed (perf's
/// --proc-map-timeout); whether it ran out.
fn read_maps(pid: i32, timeout: std::time::Duration) -> (String, bool) {
    use std::io::BufRead;
    let Ok(f) = std::fs::File::open(format!("/proc/{pid}/task/{pid}/maps")) else {
        return (String::new(), false);
    };
    let start = std::time::Instant::now();
    let mut text = String::new();
    let mut r = std::io::BufReader::new(f);
    loop {
        if start.elapsed() > timeout {
            return (text, true);
        }
        match r.read_line(&mut text) {
            Ok(0) | Err(_) => return (text, false),
            Ok(_) => {}
        }
    }
}

/// Every process under /proc, in pid order.
pub fn all_pids() -> Vec<i32> {
    let mut pids: Vec<i32> = std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    pids.sort_unstable();
    pids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mmap2_from_a_maps_line() {
        let maps = "56499e898000-56499e8a6000 r-xp 00002000 fe:00 247085                     /nonexistent/dd\n\
                    7ffd1000-7ffd2000 rw-p 00000000 00:00 0 [stack]\n";
        let r = mmap2_records(42, maps, false, 24);
        assert_eq!(r.len(), 1, "only executable maps");
        let rec = &r[0];
        assert_eq!(u32::from_le_bytes(rec[0..4].try_into().unwrap()), 10);
        assert_eq!(
            u64::from_le_bytes(rec[24..32].try_into().unwrap()),
            0xe000,
            "len"
        );
        assert_eq!(
            u64::from_le_bytes(rec[32..40].try_into().unwrap()),
            0x2000,
            "pgoff"
        );
        assert_eq!(
            u32::from_le_bytes(rec[40..44].try_into().unwrap()),
            0xfe,
            "maj"
        );
        assert_eq!(
            u64::from_le_bytes(rec[48..56].try_into().unwrap()),
            247085,
            "ino"
        );
        assert_eq!(
            u32::from_le_bytes(rec[64..68].try_into().unwrap()),
            5,
            "prot r-x"
        );
        assert_eq!(
            u32::from_le_bytes(rec[68..72].try_into().unwrap()),
            2,
            "MAP_PRIVATE"
        );
        assert_eq!(&rec[72..87], b"/nonexistent/dd");
        assert_eq!(rec.len(), 72 + 16 + 24, "size 112 + 24-byte trailer");
    }

    #[test]
    fn mmap2_of_an_elf_file_carries_its_build_id() {
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let Some(id) = crate::synth::build_id::of_file(&exe) else {
            panic!("{} has no build id: the test binary should", exe.display());
        };
        let maps = format!("1000-2000 r-xp 00000000 fe:00 1 {}\n", exe.display());
        let rec = &mmap2_records(1, &maps, false, 0)[0];
        let misc = u16::from_le_bytes(rec[4..6].try_into().unwrap());
        assert_ne!(misc & misc::MMAP_BUILD_ID, 0);
        assert_eq!(rec[40] as usize, id.len(), "build_id_size");
        assert_eq!(&rec[44..44 + id.len()], &id[..]);
    }

    #[test]
    fn this_process_has_comm_and_maps() {
        let pid = std::process::id() as i32;
        let mut d = Describe {
            fork: true,
            namespaces: true,
            maps: true,
            data_mmaps: true,
            map_timeout: std::time::Duration::from_secs(60),
            trailer: 0,
        };
        let (recs, late) = process_records(pid, &d);
        assert!(!late);
        assert!(recs.iter().any(|r| r[0] == 3), "a COMM");
        assert!(recs.iter().any(|r| r[0] == 7), "a FORK");
        assert!(recs.iter().any(|r| r[0] == 16), "a NAMESPACES");
        assert!(recs.iter().any(|r| r[0] == 10), "an MMAP2");
        // --synth task: no maps; a timeout of zero: maps cut, and said.
        d.maps = false;
        assert!(!process_records(pid, &d).0.iter().any(|r| r[0] == 10));
        d.maps = true;
        d.map_timeout = std::time::Duration::ZERO;
        let (recs, late) = process_records(pid, &d);
        assert!(late, "a zero timeout runs out");
        assert!(!recs.iter().any(|r| r[0] == 10));
    }
}
