//! The kernel's symbols from /proc/kallsyms (or the copy `--kallsyms`
//! names, as perf's: a recording from another machine gets its kernel's
//! names from a copy of that machine's), read on a thread of their own
//! while the export reads the recording: functions only (t/T/w/W), as
//! perf reads them.

use super::table::{Sym, Table, TableBuilder};

/// /proc/kallsyms, read on a thread of its own (the kernel prints it for
/// tens of milliseconds) while the export reads the recording.
pub struct Kallsyms(std::thread::JoinHandle<Option<Table>>);

impl Kallsyms {
    /// Starts reading `file` (None: /proc/kallsyms).
    pub fn read(file: Option<std::path::PathBuf>) -> Kallsyms {
        Kallsyms(std::thread::spawn(move || {
            load_kallsyms(file.as_deref().unwrap_or("/proc/kallsyms".as_ref()))
        }))
    }

    /// The table read (None: no kallsyms, or none readable).
    pub fn wait(self) -> Option<Table> {
        self.0.join().ok().flatten()
    }
}

/// /proc/kallsyms' functions (t/T/w/W), as perf reads them: line by line,
/// their names gathered in one buffer.
fn load_kallsyms(file: &std::path::Path) -> Option<Table> {
    use std::io::Read;
    let mut f = std::fs::File::open(file).ok()?;
    let mut b = TableBuilder::default();
    // Whole lines of what was read; the rest waits for the next read.
    let (mut buf, mut have) = (vec![0u8; 1 << 16], 0);
    loop {
        let n = f.read(&mut buf[have..]).ok()?;
        have += n;
        let whole = buf[..have]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1);
        push_kallsyms(&mut b, &buf[..whole]);
        if n == 0 {
            push_kallsyms(&mut b, &buf[whole..have]);
            break;
        }
        buf.copy_within(whole..have, 0);
        have -= whole;
        if have == buf.len() {
            buf.resize(buf.len() * 2, 0); // a line longer than the buffer
        }
    }
    (!b.is_empty()).then(|| b.kallsyms())
}

/// The functions of whole lines of /proc/kallsyms (a line whose bytes are
/// not UTF-8 is left out).
fn push_kallsyms(b: &mut TableBuilder, lines: &[u8]) {
    // Checked as one text: the kernel's names are ASCII.
    if let Ok(text) = std::str::from_utf8(lines) {
        text.split('\n')
            .filter_map(kallsyms_line)
            .for_each(|s| b.push(s));
    } else {
        let lines = lines.split(|&c| c == b'\n');
        let lines = lines.filter_map(|l| std::str::from_utf8(l).ok());
        lines.filter_map(kallsyms_line).for_each(|s| b.push(s));
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
    })
}

#[cfg(test)]
mod tests {
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
