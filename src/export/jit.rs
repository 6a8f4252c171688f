//! JIT symbol maps: `/tmp/perf-PID.map`, which a JIT (node
//! --perf-basic-prof, the JVM's perf-map-agent) writes for the code it
//! places in anonymous memory, and perf names that code from.

use std::path::PathBuf;

use super::table::{Sym, Table, TableBuilder};

/// Where a JIT writes process `pid`'s symbols, as perf looks for them.
pub fn map_path(pid: u32) -> PathBuf {
    PathBuf::from(format!("/tmp/perf-{pid}.map"))
}

/// Whether a mapping is anonymous memory, whose code perf names from the
/// process's JIT map (util/map.c, is_anon_memory).
pub fn is_anon(path: &str) -> bool {
    path == "//anon" || path.starts_with("/dev/zero") || path.starts_with("/anon_hugepage")
}

/// A JIT map's symbols: `START SIZE NAME` lines, hexadecimal, the name to
/// the end of the line (perf's dso__load_perf_map). None where there is no
/// such regular file.
pub(super) fn load(path: &std::path::Path) -> Option<Table> {
    let bytes = super::file::map(path)?;
    let text = String::from_utf8_lossy(&bytes);
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
    let mut b = TableBuilder::default();
    for l in text.lines() {
        let mut it = l.splitn(3, ' ');
        let (Some(start), Some(size), Some(name)) = (
            it.next().and_then(hex),
            it.next().and_then(hex),
            it.next().map(str::trim_end),
        ) else {
            continue;
        };
        if !name.is_empty() {
            b.push(Sym {
                start,
                end: start.saturating_add(size),
                name,
                weak: false,
                global: true,
            });
        }
    }
    Some(b.table())
}
