//! The kernel's symbols from /proc/kallsyms (or the copy `--kallsyms`
//! names, as perf's: a recording from another machine gets its kernel's
//! names from a copy of that machine's), read on a thread of their own
//! while the export reads the recording: functions only (t/T/w/W), as
//! perf reads them.

use crate::export::name::table::{Sym, Table, TableBuilder};

/// /proc/kallsyms, read on a thread of its own (the kernel prints it for
/// tens of milliseconds) while the export reads the recording.
pub(crate) struct Kallsyms(std::thread::JoinHandle<Option<Table>>);

impl Kallsyms {
    /// Starts reading `file` (None: /proc/kallsyms, or what was kept of it
    /// this boot: kallsyms_cache.rs).
    pub(crate) fn read(file: Option<std::path::PathBuf>) -> Kallsyms {
        Kallsyms(std::thread::spawn(move || match file {
            Some(f) => load_kallsyms(&f),
            None => {
                let kept = crate::export::name::kallsyms_cache::load();
                if let Some(table) = kept.as_deref().and_then(Table::from_bytes) {
                    return Some(table);
                }
                let table = load_kallsyms("/proc/kallsyms".as_ref());
                if let Some(t) = &table {
                    crate::export::name::kallsyms_cache::keep(&t.to_bytes());
                }
                table
            }
        }))
    }

    /// The table read (None: no kallsyms, or none readable).
    pub(crate) fn wait(self) -> Option<Table> {
        self.0.join().ok().flatten()
    }
}

/// The longest line read: a kallsyms line is a name of at most 512 bytes
/// (KSYM_NAME_LEN) and a module's; a file with longer lines is no listing
/// (`--kallsyms /dev/zero`), and reading stops there, as perf's does.
const LONGEST_LINE: usize = 64 << 10;

/// /proc/kallsyms' functions (t/T/w/W), as perf reads them: line by line,
/// their names gathered in one buffer. A
/// FIFO or a device is not read (opened without waiting): a listing is a
/// regular file (/proc's among them).
fn load_kallsyms(file: &std::path::Path) -> Option<Table> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(file)
        .ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut b = TableBuilder::default();
    // Whole lines of what was read; the rest waits for the next read.
    let (mut buf, mut have) = (vec![0u8; LONGEST_LINE], 0);
    loop {
        let n = f.read(&mut buf[have..]).ok()?;
        have += n;
        let whole = buf[..have]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1);
        push_kallsyms(&mut b, &buf[..whole]);
        if n == 0 || (whole == 0 && have == buf.len()) {
            if n == 0 {
                push_kallsyms(&mut b, &buf[whole..have]);
            }
            break;
        }
        buf.copy_within(whole..have, 0);
        have -= whole;
    }
    (!b.is_empty()).then(|| b.kallsyms())
}

/// The functions of whole lines of /proc/kallsyms (a line whose bytes are
/// not UTF-8 is left out).
fn push_kallsyms(b: &mut TableBuilder, lines: &[u8]) {
    let mut one = |l: &str| {
        if let Some(s) = kallsyms_line(l) {
            b.push(s);
        }
    };
    // Checked as one text: the kernel's names are ASCII.
    if let Ok(text) = std::str::from_utf8(lines) {
        text.split('\n').for_each(&mut one);
    } else {
        let lines = lines.split(|&c| c == b'\n');
        lines
            .filter_map(|l| std::str::from_utf8(l).ok())
            .for_each(one);
    }
}

/// One line of /proc/kallsyms (`address type name [module]`), when it is a
/// function's.
fn kallsyms_line(l: &str) -> Option<Sym<'_>> {
    // Fields end at ASCII bytes, so each is a str of its own.
    let field = |l: &str| -> usize {
        l.bytes()
            .position(|c| matches!(c, b' ' | b'\t' | b'\n'))
            .unwrap_or(l.len())
    };
    let n = field(l);
    if n == 0 || n > 16 {
        return None;
    }
    let addr = l[..n].bytes().try_fold(0u64, |a, c| {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        Some(a << 4 | u64::from(d))
    })?;
    let l = l.get(n + 1..)?;
    let kind = *l.as_bytes().first()?;
    if addr == 0 || !matches!(kind, b't' | b'T' | b'w' | b'W') || l.as_bytes().get(1) != Some(&b' ')
    {
        return None;
    }
    let l = &l[2..];
    let name = &l[..field(l)];
    (!name.is_empty()).then_some(Sym {
        start: addr,
        end: 0,
        name,
        weak: kind.eq_ignore_ascii_case(&b'w'),
        global: kind == b'T' || kind == b'W',
        ifunc: false,
    })
}

#[cfg(test)]
mod tests {
    /// A FIFO is not waited on; a file of no lines is read no further
    /// than a line can be long.
    #[test]
    fn fifos_and_endless_lines_are_not_read() {
        let dir = std::env::temp_dir().join(format!("perfz-kallsyms-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(super::load_kallsyms(&fifo).is_none());
        assert!(super::load_kallsyms("/dev/zero".as_ref()).is_none());
        let long = dir.join("long");
        let mut text = b"ffffffff81000000 T first\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', 3 * super::LONGEST_LINE));
        text.extend_from_slice(b"\nffffffff81000100 T after\n");
        std::fs::write(&long, &text).unwrap();
        let t = super::load_kallsyms(&long).expect("the first line");
        assert!(t.lookup(0xffffffff81000000).is_some());
        assert!(
            t.lookup(0xffffffff81000100).is_some_and(|n| &*n == "first"),
            "read past the long line"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn kallsyms_lines_give_functions_only() {
        let f =
            |l: &'static str| super::kallsyms_line(l).map(|s| (s.start, s.name, s.weak, s.global));
        assert_eq!(
            f("ffffffff81000000 T _stext\n"),
            Some((0xffffffff81000000, "_stext", false, true))
        );
        assert_eq!(
            f("ffffffffc0a01000 t helper\t[kvm]\n"),
            Some((0xffffffffc0a01000, "helper", false, false))
        );
        assert_eq!(
            f("ffffffff81000010 W weak_fn"),
            Some((0xffffffff81000010, "weak_fn", true, true))
        );
        assert_eq!(f("ffffffff82000000 D some_data\n"), None);
        assert_eq!(f("0000000000000000 T hidden\n"), None);
        assert_eq!(f("garbage\n"), None);
        assert_eq!(f("1ffffffff81000000 T too_long\n"), None);
        let mut b = super::TableBuilder::default();
        super::push_kallsyms(
            &mut b,
            b"ffffffff81000000 T a\nffffffff81000010 T \xff\nffffffff81000020 t c\n",
        );
        assert_eq!(
            b.len(),
            2,
            "the line that is not UTF-8 is left out, not its neighbours"
        );
    }
}
