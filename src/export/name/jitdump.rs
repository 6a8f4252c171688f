//! jitdump files (`jit-PID.dump`): what a JIT that speaks perf's jitdump
//! format (node --perf-prof, the JVM's and .NET's agents, LLVM's) writes of
//! the code it makes, and mmaps so that the recording names the file. perf
//! reads them through `perf inject --jit`, which turns each code load into
//! an ELF file of one function; perfz names the JIT's frames from the dump
//! itself (tools/perf/util/jitdump.h gives the layout).
//!
//! The dump's code loads name whatever is mapped at their addresses, as
//! after `perf inject --jit`; moves are matched to their loads by code
//! index, and a record too short for its fields is dropped.

use std::path::Path;

use rustc_hash::FxHashMap;

use crate::export::name::table::{Sym, Table, TableBuilder};

/// The header's magic, as the JIT wrote it (its own byte order).
const MAGIC: u32 = 0x4A69_5444;
/// Record ids.
const CODE_LOAD: u32 = 0;
const CODE_MOVE: u32 = 1;

/// Whether a mapped file is a jitdump (perf's jit_detect: `jit-PID.dump`).
pub(crate) fn is_dump(path: &str) -> Option<u32> {
    let name = path.rsplit('/').next()?;
    name.strip_prefix("jit-")?
        .strip_suffix(".dump")?
        .parse()
        .ok()
}

/// The functions a jitdump's code loads (and moves) place: each named as
/// perf names it after `perf inject --jit`. None where the file is missing
/// or not a jitdump.
pub(crate) fn load(path: &Path) -> Option<Table> {
    let bytes = crate::export::files::file::map(path)?;
    Some(functions(&bytes)?.table())
}

/// The code loads and moves of a jitdump's bytes, in one pass. A record
/// cut short ends the reading (a JIT still writing, or killed); one whose
/// fields do not fit in its own size is dropped, as perf drops it.
pub(crate) fn functions(bytes: &[u8]) -> Option<TableBuilder> {
    let magic = u32_at(bytes, 0, false)?;
    let swap = match magic {
        MAGIC => false,
        m if m.swap_bytes() == MAGIC => true,
        _ => return None,
    };
    let header_size = u32_at(bytes, 8, swap)? as usize;
    let mut b = TableBuilder::default();
    // The latest load of each code index (size and name), for the moves
    // that name them: one look-up a move, however many loads came before.
    let mut loads: FxHashMap<u64, (u64, &str)> = FxHashMap::default();
    let mut at = header_size.max(40);
    while let (Some(id), Some(size)) = (u32_at(bytes, at, swap), u32_at(bytes, at + 4, swap)) {
        let size = size as usize;
        let Some(rec) = bytes.get(at..at.checked_add(size)?).filter(|_| size >= 16) else {
            break;
        };
        match id {
            CODE_LOAD => {
                if let Some(l) = code_load(rec, swap) {
                    push(&mut b, l.addr, l.len, l.name);
                    loads.insert(l.index, (l.len, l.name));
                }
            }
            CODE_MOVE => {
                // pid, tid, vma, old_code_addr, new_code_addr, code_size,
                // code_index: a record too short for them is dropped.
                if let (Some(new), Some(index)) = (u64_at(rec, 40, swap), u64_at(rec, 56, swap)) {
                    if let Some(&(len, name)) = loads.get(&index) {
                        push(&mut b, new, len, name);
                    }
                }
            }
            _ => {}
        }
        at += size;
    }
    Some(b)
}

/// A code load's fields that name code.
struct CodeLoad<'a> {
    addr: u64,
    len: u64,
    index: u64,
    name: &'a str,
}

/// A code load record (pid, tid, vma, code_addr, code_size, code_index,
/// name\0, then the code itself); None where its sizes do not fit in the
/// record (a code_size past its end, a name without its NUL, code that
/// wraps the address space), which `perf inject --jit` writes no function
/// for either.
fn code_load(rec: &[u8], swap: bool) -> Option<CodeLoad<'_>> {
    let addr = u64_at(rec, 32, swap)?;
    let len = u64_at(rec, 40, swap)?;
    let index = u64_at(rec, 48, swap)?;
    let rest = rec.get(56..)?;
    let nul = rest.iter().position(|&c| c == 0)?;
    // The code follows the name's NUL, to the record's end.
    let room = (rest.len() - nul - 1) as u64;
    if len > room || addr.checked_add(len).is_none() {
        return None;
    }
    let name = std::str::from_utf8(&rest[..nul]).ok()?;
    Some(CodeLoad {
        addr,
        len,
        index,
        name,
    })
}

fn push(b: &mut TableBuilder, addr: u64, len: u64, name: &str) {
    if len > 0 && !name.is_empty() {
        b.push(Sym {
            start: addr,
            end: addr.saturating_add(len),
            name,
            weak: false,
            global: true,
            ifunc: false,
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
        load_with_code(addr, len, index, name, len as usize)
    }

    /// A code load whose code is `code` bytes long, whatever its code_size.
    fn load_with_code(addr: u64, len: u64, index: u64, name: &str, code: usize) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&1234u32.to_le_bytes());
        v.extend_from_slice(&1234u32.to_le_bytes());
        for x in [addr, addr, len, index] {
            v.extend_from_slice(&x.to_le_bytes());
        }
        v.extend_from_slice(name.as_bytes());
        v.push(0);
        v.extend(std::iter::repeat_n(0xcc, code));
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

    fn move_record(old: u64, new: u64, len: u64, index: u64) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&1234u32.to_le_bytes());
        v.extend_from_slice(&1234u32.to_le_bytes());
        for x in [0u64, old, new, len, index] {
            v.extend_from_slice(&x.to_le_bytes());
        }
        v
    }

    #[test]
    fn a_load_whose_sizes_do_not_fit_its_record_is_dropped() {
        // code_size 4 GB in a record of a few bytes of code: perf inject
        // --jit writes no function for it; taken as given it would cover
        // (and rename) ld.so and the vDSO.
        let huge = load_with_code(0x7f00_0000_0000, 4 << 30, 1, "JS:huge", 8);
        let mut no_nul = load_with_code(0x3000, 0, 3, "JS:nonul", 0);
        no_nul.pop(); // the NUL
        let wraps = load_record(u64::MAX - 4, 8, 4, "JS:wraps");
        let short = load_with_code(0x6000, 0x20, 5, "JS:short", 0x1f);
        let bytes = dump(&[
            (CODE_LOAD, huge),
            (CODE_LOAD, load_record(0x1000, 8, 2, "JS:fits")),
            (CODE_LOAD, no_nul),
            (CODE_LOAD, wraps),
            (CODE_LOAD, short),
            (CODE_MOVE, move_record(0, 0x9000, 4 << 30, 1)),
            (CODE_MOVE, vec![0; 8]), // too short for its fields
            (CODE_MOVE, move_record(0x1000, 0x5000, 8, 2)),
        ]);
        let t = functions(&bytes).unwrap().table();
        assert_eq!(t.lookup(0x7f00_0000_0000), None);
        assert_eq!(t.lookup(0x7f00_1000_0000), None);
        assert_eq!(t.lookup(0x9000), None, "a move of a dropped load");
        assert_eq!(t.lookup(0x3000), None);
        assert_eq!(t.lookup(u64::MAX - 2), None);
        assert_eq!(t.lookup(0x6000), None, "code one byte short");
        assert_eq!(t.lookup(0x1004).as_deref(), Some("JS:fits"));
        assert_eq!(t.lookup(0x5004).as_deref(), Some("JS:fits"));
    }

    #[test]
    fn moves_are_matched_in_linear_time() {
        // 100 000 loads, then a move of each, oldest first: searching the
        // loads for each move took minutes (N^2); an index takes a moment.
        const N: u64 = 100_000;
        let mut recs: Vec<(u32, Vec<u8>)> = (0..N)
            .map(|i| (CODE_LOAD, load_record(0x10_0000 + i * 16, 16, i, "JS:f")))
            .collect();
        recs.extend((0..N).map(|i| (CODE_MOVE, move_record(0, 0x100_0000 + i * 16, 16, i))));
        let bytes = dump(&recs);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let t = functions(&bytes).unwrap().table();
            let _ = tx.send(t.lookup(0x100_0000 + (N - 1) * 16).is_some());
        });
        let named = rx.recv_timeout(std::time::Duration::from_secs(10));
        assert_eq!(named, Ok(true), "the moves were not matched within 10 s");
    }

    #[test]
    fn dumps_are_found_by_their_name() {
        assert_eq!(is_dump("/tmp/x/jit-1690.dump"), Some(1690));
        assert_eq!(is_dump("jit-7.dump"), Some(7));
        assert_eq!(is_dump("/tmp/jit-x.dump"), None);
        assert_eq!(is_dump("/usr/lib/libjit-1.so"), None);
    }
}
