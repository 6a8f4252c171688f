//! HEADER_TRACING_DATA: the tracefs format files `perf script` needs to
//! print a tracepoint's fields, laid out as perf 6.1's trace-event-info.c
//! writes them (checked against the `tp-sysw-z` fixture):
//!
//! ```text
//! "\x17\x08Dtracing" "0.6\0" u8 big_endian, u8 sizeof(long), u32 page_size
//! "header_page\0"  u64 size, events/header_page
//! "header_event\0" u64 size, events/header_event
//! u32 nr ftrace formats, each u64 size + events/ftrace/NAME/format
//! u32 nr systems, each "SYS\0" u32 nr, each u64 size + events/SYS/NAME/format
//! u32 size + /proc/kallsyms (0: perf 6.1 leaves it out)
//! u32 size + printk_formats
//! u64 size + saved_cmdlines (0, as perf 6.1)
//! ```

use std::io;
use std::path::Path;

use crate::event::tracefs::Tracepoint;

/// Reads a tracefs file with large reads: its size is not known up front,
/// and its small first read (std's probe) can come back short for good.
fn file(p: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let err = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", p.display()));
    let mut f = std::fs::File::open(p).map_err(err)?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match f.read(&mut buf) {
            Ok(0) => return Ok(out),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(err(e)),
        }
    }
}

/// The tracing data for `tps` (in the order given; duplicates once).
pub fn tracing_data(root: &Path, tps: &[&Tracepoint]) -> io::Result<Vec<u8>> {
    let events = root.join("events");
    let mut out = Vec::new();
    out.extend_from_slice(b"\x17\x08Dtracing0.6\0");
    out.push(cfg!(target_endian = "big") as u8);
    out.push(std::mem::size_of::<libc::c_long>() as u8);
    out.extend_from_slice(&(crate::event::ring::page_size() as u32).to_le_bytes());
    for name in ["header_page", "header_event"] {
        let body = file(&events.join(name))?;
        out.extend_from_slice(name.as_bytes());
        out.push(0);
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(&body);
    }
    // Systems in first-seen order, each with its events once.
    let mut systems: Vec<(&str, Vec<&str>)> = Vec::new();
    for tp in tps {
        match systems.iter_mut().find(|(s, _)| *s == tp.sys) {
            Some((_, names)) if !names.contains(&tp.name.as_str()) => names.push(&tp.name),
            Some(_) => {}
            None => systems.push((&tp.sys, vec![&tp.name])),
        }
    }
    let format = |sys: &str, name: &str| file(&events.join(sys).join(name).join("format"));
    let ftrace: Vec<&str> = systems
        .iter()
        .filter(|(s, _)| *s == "ftrace")
        .flat_map(|(_, n)| n.iter().copied())
        .collect();
    out.extend_from_slice(&(ftrace.len() as u32).to_le_bytes());
    for n in ftrace {
        let f = format("ftrace", n)?;
        out.extend_from_slice(&(f.len() as u64).to_le_bytes());
        out.extend_from_slice(&f);
    }
    let others: Vec<&(&str, Vec<&str>)> = systems.iter().filter(|(s, _)| *s != "ftrace").collect();
    out.extend_from_slice(&(others.len() as u32).to_le_bytes());
    for (sys, names) in others {
        out.extend_from_slice(sys.as_bytes());
        out.push(0);
        out.extend_from_slice(&(names.len() as u32).to_le_bytes());
        for n in names {
            let f = format(sys, n)?;
            out.extend_from_slice(&(f.len() as u64).to_le_bytes());
            out.extend_from_slice(&f);
        }
    }
    out.extend_from_slice(&0u32.to_le_bytes()); // kallsyms
    let printk = file(&root.join("printk_formats")).unwrap_or_default();
    out.extend_from_slice(&(printk.len() as u32).to_le_bytes());
    out.extend_from_slice(&printk);
    out.extend_from_slice(&0u64.to_le_bytes()); // saved_cmdlines
    Ok(out)
}
