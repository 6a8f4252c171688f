//! jitdump files (`jit-PID.dump`): what a JIT that speaks perf's jitdump
//! format (node --perf-prof, the JVM's and .NET's agents, LLVM's) writes of
//! the code it makes, and mmaps so that the recording names the file. perf
//! reads them through `perf inject --jit`, which turns each code load into
//! an ELF file of one function; perfz names the JIT's frames from the dump
//! itself (tools/perf/util/jitdump.h gives the layout).

use std::path::Path;

use super::table::{Sym, Table, TableBuilder};

/// The header's magic, as the JIT wrote it (its own byte order).
const MAGIC: u32 = 0x4A69_5444;
/// Record ids.
const CODE_LOAD: u32 = 0;
const CODE_MOVE: u32 = 1;

/// Whether a mapped file is a jitdump (perf's jit_detect: `jit-PID.dump`).
pub fn is_dump(path: &str) -> Option<u32> {
    let name = path.rsplit('/').next()?;
    name.strip_prefix("jit-")?
        .strip_suffix(".dump")?
        .parse()
        .ok()
}

/// The functions a jitdump's code loads (and moves) place: each named as
/// perf names it after `perf inject --jit`. None where the file is missing
/// or not a jitdump.
pub(super) fn load(path: &Path) -> Option<Table> {
    let bytes = super::file::map(path)?;
    Some(functions(&bytes)?.table())
}

/// The code loads and moves of a jitdump's bytes. A record cut short ends
/// the reading (a JIT still writing, or killed).
pub(super) fn functions(bytes: &[u8]) -> Option<TableBuilder> {
    let magic = u32_at(bytes, 0, false)?;
    let swap = match magic {
        MAGIC => false,
        m if m.swap_bytes() == MAGIC => true,
        _ => return None,
    };
    let header_size = u32_at(bytes, 8, swap)? as usize;
    let mut b = TableBuilder::default();
    // Loads by code index, for the moves that name them.
    let mut loads: Vec<(u64, u64, String)> = Vec::new();
    let mut at = header_size.max(40);
    while let (Some(id), Some(size)) = (u32_at(bytes, at, swap), u32_at(bytes, at + 4, swap)) {
        let size = size as usize;
        let Some(rec) = bytes.get(at..at.checked_add(size)?).filter(|_| size >= 16) else {
            break;
        };
        match id {
            CODE_LOAD => {
                // pid, tid, vma, code_addr, code_size, code_index, name\0, code.
                let (Some(addr), Some(len), Some(index)) = (
                    u64_at(rec, 32, swap),
                    u64_at(rec, 40, swap),
                    u64_at(rec, 48, swap),
                ) else {
                    break;
                };
                let name = rec.get(56..).and_then(|n| n.split(|&c| c == 0).next());
                if let Some(name) = name.and_then(|n| std::str::from_utf8(n).ok()) {
                    push(&mut b, addr, len, name);
                    loads.push((index, len, name.to_string()));
                }
            }
            CODE_MOVE => {
                // pid, tid, vma, old_code_addr, new_code_addr, code_size, code_index.
                let (Some(new), Some(index)) = (u64_at(rec, 40, swap), u64_at(rec, 56, swap))
                else {
                    break;
                };
                if let Some((_, len, name)) = loads.iter().rev().find(|l| l.0 == index) {
                    push(&mut b, new, *len, name);
                }
            }
            _ => {}
        }
        at += size;
    }
    Some(b)
}

fn push(b: &mut TableBuilder, addr: u64, len: u64, name: &str) {
    if len > 0 && !name.is_empty() {
        b.push(Sym {
            start: addr,
            end: addr.saturating_add(len),
            name,
            weak: false,
            global: true,
        });
    }
}

fn u32_at(b: &[u8], at: usize, swap: bool) -> Option<u32> {
    let v = u32::from_le_bytes(b.get(at..at.checked_add(4)?)?.try_into().ok()?);
    Some(if swap { v.swap_bytes() } else { v })
}

fn u64_at(b: &[u8], at: usize, swap: bool) -> Option<u64> {
    let v = u64::from_le_bytes(b.get(at..at.checked_add(8)?)?.try_into().ok()?);
    Some(if swap { v.swap_bytes() } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A jitdump as perf's jitdump.h lays it out, little-endian.
    fn dump(records: &[(u32, Vec<u8>)]) -> Vec<u8> {
        let mut v = Vec::new();
        for x in [MAGIC, 1, 40, 62, 0, 1234] {
            v.extend_from_slice(&x.to_le_bytes());
        }
        v.extend_from_slice(&0u64.to_le_bytes()); // timestamp
        v.extend_from_slice(&0u64.to_le_bytes()); // flags
        for (id, body) in records {
            v.extend_from_slice(&id.to_le_bytes());
            v.extend_from_slice(&(16 + body.len() as u32).to_le_bytes());
            v.extend_from_slice(&0u64.to_le_bytes());
            v.extend_from_slice(body);
        }
        v
    }

    fn load_record(addr: u64, len: u64, index: u64, name: &str) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&1234u32.to_le_bytes());
        v.extend_from_slice(&1234u32.to_le_bytes());
        for x in [addr, addr, len, index] {
            v.extend_from_slice(&x.to_le_bytes());
        }
        v.extend_from_slice(name.as_bytes());
        v.push(0);
        v.extend_from_slice(&[0xcc; 8]); // the code
        v
    }

    #[test]
    fn code_loads_and_moves_name_the_code() {
        let mut mv = Vec::new();
        mv.extend_from_slice(&1234u32.to_le_bytes());
        mv.extend_from_slice(&1234u32.to_le_bytes());
        for x in [0u64, 0x1000, 0x9000, 0x20, 7] {
            mv.extend_from_slice(&x.to_le_bytes());
        }
        let bytes = dump(&[
            (CODE_LOAD, load_record(0x1000, 0x20, 7, "JS:*fib a.js:1:1")),
            (2, vec![0; 24]), // DEBUG_INFO: passed over
            (
                CODE_LOAD,
                load_record(0x2000, 0x10, 8, "Builtin:CompileLazy"),
            ),
            (CODE_MOVE, mv),
        ]);
        let t = functions(&bytes).unwrap().table();
        assert_eq!(t.lookup(0x1010).as_deref(), Some("JS:*fib a.js:1:1"));
        assert_eq!(t.lookup(0x200f).as_deref(), Some("Builtin:CompileLazy"));
        assert_eq!(t.lookup(0x9004).as_deref(), Some("JS:*fib a.js:1:1"));
        assert_eq!(t.lookup(0x3000), None);
        // Cut anywhere: what was whole is read, nothing panics.
        for cut in 0..bytes.len() {
            let _ = functions(&bytes[..cut]).map(TableBuilder::table);
        }
        assert!(functions(b"not a dump at all, no").is_none());
    }

    #[test]
    fn dumps_are_found_by_their_name() {
        assert_eq!(is_dump("/tmp/x/jit-1690.dump"), Some(1690));
        assert_eq!(is_dump("jit-7.dump"), Some(7));
        assert_eq!(is_dump("/tmp/jit-x.dump"), None);
        assert_eq!(is_dump("/usr/lib/libjit-1.so"), None);
    }
}
