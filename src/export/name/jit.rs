//! JIT symbol maps: `/tmp/perf-PID.map`, which a JIT (node
//! --perf-basic-prof, the JVM's perf-map-agent) writes for the code it
//! places in anonymous memory, and perf names that code from. Any local
//! user can write one for a pid they guess: it is read a line at a time,
//! as bytes (a name is made text only when a frame is named by it), with
//! bounds no JIT's map comes near.

use std::io::BufRead;
use std::path::PathBuf;

use crate::export::name::table::{Table, TableBuilder};

/// The longest line taken (longer ones are passed over): names of C++
/// templates and JS functions run to a few KiB.
const MAX_LINE: usize = 64 << 10;
/// The most entries read of one map (the rest is left unread): node's
/// --perf-basic-prof adds one a compiled function, a long-running
/// server's map holds a few million.
const MAX_ENTRIES: usize = 16 << 20;

/// Where a JIT writes process `pid`'s symbols, as perf looks for them.
pub(crate) fn map_path(pid: u32) -> PathBuf {
    PathBuf::from(format!("/tmp/perf-{pid}.map"))
}

/// Whether a mapping is anonymous memory, whose code perf names from the
/// process's JIT map (util/map.c, is_anon_memory).
pub(crate) fn is_anon(path: &str) -> bool {
    path == "//anon" || path.starts_with("/dev/zero") || path.starts_with("/anon_hugepage")
}

/// A JIT map's symbols: `START SIZE NAME` lines, hexadecimal, the name to
/// the end of the line (perf's dso__load_perf_map). None where there is no
/// such regular file.
pub(crate) fn load(path: &std::path::Path) -> Option<Table> {
    let f = crate::export::files::file::open(path)?;
    Some(read(std::io::BufReader::with_capacity(64 << 10, f)))
}

/// The symbols of a JIT map's lines; a read error ends them.
fn read(mut r: impl BufRead) -> Table {
    let mut b = TableBuilder::default();
    let (mut line, mut entries) = (Vec::new(), 0);
    while entries < MAX_ENTRIES && matches!(next_line(&mut r, &mut line), Ok(true)) {
        if let Some((start, size, name)) = entry(&line) {
            b.push_global(start..start.saturating_add(size), name);
            entries += 1;
        }
    }
    b.table()
}

/// The next line into `line`, without its newline (empty where it is
/// longer than MAX_LINE); false at the end.
fn next_line(r: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<bool> {
    line.clear();
    let (mut any, mut long) = (false, false);
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(any);
        }
        any = true;
        let end = buf.iter().position(|&c| c == b'\n');
        let part = &buf[..end.unwrap_or(buf.len())];
        long |= line.len() + part.len() > MAX_LINE;
        if long {
            line.clear();
        } else {
            line.extend_from_slice(part);
        }
        let used = end.map_or(buf.len(), |e| e + 1);
        r.consume(used);
        if end.is_some() {
            return Ok(true);
        }
    }
}

/// A line's start, size and name (trailing white space cut).
fn entry(line: &[u8]) -> Option<(u64, u64, &[u8])> {
    let hex = |s: &[u8]| {
        let s = std::str::from_utf8(s).ok()?;
        u64::from_str_radix(s.trim_start_matches("0x"), 16).ok()
    };
    let mut it = line.splitn(3, |&c| c == b' ');
    let (start, size) = (hex(it.next()?)?, hex(it.next()?)?);
    let name = it.next()?.trim_ascii_end();
    (!name.is_empty()).then_some((start, size, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_as_bytes_within_bounds() {
        let mut map = b"1000 10 first\n".to_vec();
        map.extend_from_slice(b"0x2000 0x10 not \xff utf-8 \r\n");
        map.extend_from_slice(b"3000 10 ");
        map.extend(std::iter::repeat_n(b'x', MAX_LINE));
        map.extend_from_slice(b"\nnot a line\n4000 10 last");
        let t = read(&map[..]);
        assert_eq!(t.lookup(0x1008).as_deref(), Some("first"));
        assert_eq!(t.lookup(0x2008).as_deref(), Some("not \u{fffd} utf-8"));
        assert_eq!(
            t.lookup(0x3008),
            None,
            "a line past MAX_LINE is passed over"
        );
        assert_eq!(t.lookup(0x4008).as_deref(), Some("last"));
    }
}
