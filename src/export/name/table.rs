//! Symbol tables looked up as perf looks them up: a symbol covers [start,
//! start + size), one of size 0 runs to the next; of several at one
//! address, perf's choice. Names are kept in one buffer per table (a
//! kernel's list has 100 000 and more), each made an `Arc` the first time
//! it is looked up and that one `Arc` after (the folded output tidies each
//! name once).
//!
//! Overlapping symbols (a JIT map's big entry with smaller ones inside) are
//! cut into parts of the innermost symbol that covers each address.

use std::cell::RefCell;
use std::sync::Arc;

use rustc_hash::FxHashMap;

/// A symbol as read.
pub(crate) struct Sym<'a> {
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) name: &'a str,
    pub(crate) weak: bool,
    pub(crate) global: bool,
    /// An ELF `STT_GNU_IFUNC` (a resolver a PLT entry may be named by).
    pub(crate) ifunc: bool,
}

/// A symbol: its name at `at` in the table's names, its length and kind
/// in `bits`.
#[derive(Clone, Copy)]
struct Entry {
    start: u64,
    end: u64,
    at: u32,
    bits: u32,
}

const WEAK: u32 = 1 << 30;
const GLOBAL: u32 = 1 << 29;
const IFUNC: u32 = 1 << 28;
const LEN: u32 = IFUNC - 1;

impl Entry {
    fn weak(&self) -> bool {
        self.bits & WEAK != 0
    }
    fn global(&self) -> bool {
        self.bits & GLOBAL != 0
    }
    fn ifunc(&self) -> bool {
        self.bits & IFUNC != 0
    }
}

/// A table's names, one after the other.
/// A table's names, one after the other, as read (a JIT map's are any
/// bytes: each is made text when it is looked up).
#[derive(Default)]
struct Names {
    own: Vec<u8>,
}

impl Names {
    fn of(&self, e: &Entry) -> &[u8] {
        let (at, len) = (e.at as usize, (e.bits & LEN) as usize);
        self.own.get(at..at + len).unwrap_or_default()
    }
}

/// Symbols as they are read, before duplicates are chosen between.
#[derive(Default)]
pub(crate) struct TableBuilder {
    entries: Vec<Entry>,
    names: Names,
}

impl TableBuilder {
    pub(crate) fn push(&mut self, s: Sym<'_>) {
        let kind = if s.weak { WEAK } else { 0 }
            | if s.global { GLOBAL } else { 0 }
            | if s.ifunc { IFUNC } else { 0 };
        self.push_bytes(s.start..s.end, s.name.as_bytes(), kind);
    }

    /// A global symbol named by bytes as they were read (a JIT map's).
    pub(crate) fn push_global(&mut self, range: std::ops::Range<u64>, name: &[u8]) {
        self.push_bytes(range, name, GLOBAL);
    }

    fn push_bytes(&mut self, range: std::ops::Range<u64>, name: &[u8], kind: u32) {
        // Names of 256 MiB, or past 4 GiB in all, are left out (no symbol
        // table has them).
        let len = match u32::try_from(name.len()) {
            Ok(len) if len <= LEN => len,
            _ => return,
        };
        let Ok(at) = u32::try_from(self.names.own.len()) else {
            return;
        };
        self.names.own.extend_from_slice(name);
        self.entries.push(Entry {
            start: range.start,
            end: range.end,
            at,
            bits: len | kind,
        });
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The name of the symbol perf keeps at each address where it keeps
    /// an IFUNC or an IFUNC's alias: what names a PLT entry whose
    /// IRELATIVE relocation points there (perf's get_ifunc_name, after
    /// symbols__fixup_duplicate: of each pair the better stays, and is an
    /// alias where the one dropped is an IFUNC). libc's debug file has
    /// `memcpy` (local), `__GI_memcpy` and the global `memcpy@@GLIBC_2.14`
    /// at one resolver: the last is kept, and names the entry.
    pub(crate) fn ifunc_names(&self) -> FxHashMap<u64, String> {
        let mut order: Vec<&Entry> = self.entries.iter().collect();
        order.sort_by_key(|e| e.start);
        let mut out = FxHashMap::default();
        for group in order.chunk_by(|a, b| a.start == b.start) {
            let (mut kept, mut alias) = (group[0], false);
            for &next in &group[1..] {
                if better(&self.names, kept, next) {
                    alias = kept.ifunc();
                    kept = next;
                } else {
                    alias |= next.ifunc();
                }
            }
            if kept.ifunc() || alias {
                let name = String::from_utf8_lossy(self.names.of(kept)).into_owned();
                out.insert(kept.start, name);
            }
        }
        out
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// An ELF file's table: duplicates chosen between, then each symbol of
    /// size 0 runs to the next (perf's dso__load_sym order).
    pub(crate) fn table(self) -> Table {
        self.build(false)
    }

    /// The kernel's: ends fixed first, then duplicates chosen between
    /// (perf's __dso__load_kallsyms order), so of several names at one
    /// address the last listed is the one with a size, and wins.
    pub(crate) fn kallsyms(self) -> Table {
        self.build(true)
    }

    fn build(self, ends_first: bool) -> Table {
        let TableBuilder {
            mut entries,
            mut names,
        } = self;
        names.own.shrink_to_fit();
        // Stable: of equals, the first read stays first.
        entries.sort_by_key(|s| s.start);
        if ends_first {
            run_to_next(&mut entries);
        }
        // Of symbols at one address, the better stays (in place).
        entries.dedup_by(|later, kept| {
            let same = later.start == kept.start;
            if same && better(&names, kept, later) {
                std::mem::swap(kept, later);
            }
            same
        });
        run_to_next(&mut entries);
        let mut entries = innermost(entries);
        entries.shrink_to_fit();
        Table {
            syms: entries,
            names,
            shared: RefCell::default(),
        }
    }
}

/// Each symbol of size 0 runs to the next one's start.
fn run_to_next(v: &mut [Entry]) {
    for i in 0..v.len() {
        if v[i].end <= v[i].start {
            v[i].end = v.get(i + 1).map_or(u64::MAX, |n| n.start);
        }
    }
}

/// Symbols that overlap (a JIT map's big entry with smaller ones inside,
/// as JITs that reuse code space write them) as parts that do not: each
/// address is the innermost symbol's that covers it (the one that starts
/// last), else the enclosing one's, as perf's lookup names it. Symbols
/// that do not overlap (ELF tables, mostly) stay as they are.
fn innermost(v: Vec<Entry>) -> Vec<Entry> {
    if v.windows(2).all(|w| w[0].end <= w[1].start) {
        return v;
    }
    let mut out: Vec<Entry> = Vec::with_capacity(v.len() + v.len() / 4);
    // The symbols that cover `pos`, the latest-starting on top (those that
    // ended are dropped when they come to the top).
    let mut open = std::collections::BinaryHeap::new();
    let (mut next, mut pos) = (0, v.first().map_or(0, |e| e.start));
    loop {
        while next < v.len() && v[next].start <= pos {
            open.push(next);
            next += 1;
        }
        while open.peek().is_some_and(|&i| v[i].end <= pos) {
            open.pop();
        }
        let Some(&top) = open.peek() else {
            match v.get(next) {
                Some(e) => pos = e.start,
                None => break,
            }
            continue;
        };
        let stop = v.get(next).map_or(u64::MAX, |e| e.start).min(v[top].end);
        match out.last_mut() {
            Some(l) if l.end == pos && l.at == v[top].at => l.end = stop,
            _ => out.push(Entry {
                start: pos,
                end: stop,
                ..v[top]
            }),
        }
        pos = stop;
    }
    out
}

/// Whether `b` is the one of two symbols at one address that perf keeps
/// over `a` (util/symbol.c, choose_best_symbol): one with a size, not
/// weak, global, with fewer leading underscores, with the longer name;
/// else the first.
fn better(names: &Names, a: &Entry, b: &Entry) -> bool {
    let key = |s: &Entry| {
        let name = names.of(s);
        (
            s.end > s.start,
            !s.weak(),
            s.global(),
            std::cmp::Reverse(name.iter().take_while(|&&c| c == b'_').count()),
            name.len(),
        )
    };
    key(b) > key(a)
}

/// Sorted, non-overlapping symbols (parts of overlapping ones).
#[derive(Default)]
pub(crate) struct Table {
    syms: Vec<Entry>,
    names: Names,
    /// The names looked up so far, by where the name is (every part of a
    /// symbol shares it).
    shared: RefCell<FxHashMap<u32, Arc<str>>>,
}

impl Table {
    /// The name of the symbol that covers `addr`.
    pub(crate) fn lookup(&self, addr: u64) -> Option<Arc<str>> {
        let i = self
            .syms
            .partition_point(|s| s.start <= addr)
            .checked_sub(1)?;
        let s = &self.syms[i];
        (addr < s.end).then(|| {
            self.shared
                .borrow_mut()
                .entry(s.at)
                .or_insert_with(|| String::from_utf8_lossy(self.names.of(s)).into())
                .clone()
        })
    }
}

mod bytes;

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(start: u64, size: u64, name: &str, weak: bool, global: bool) -> Sym<'_> {
        Sym {
            start,
            end: start + size,
            name,
            weak,
            global,
            ifunc: false,
        }
    }

    #[test]
    fn perfs_choice_among_symbols_at_one_address_and_sizeless_ones_run_on() {
        let mut b = TableBuilder::default();
        b.push(sym(0x100, 0, "__alias", true, false));
        b.push(sym(0x100, 0x10, "_alias", false, true));
        b.push(sym(0x100, 0x10, "alias_long", false, true));
        b.push(sym(0x200, 0, "nosize", false, true));
        b.push(sym(0x300, 8, "last", false, false));
        let t = b.table();
        assert_eq!(t.lookup(0x105).as_deref(), Some("alias_long"));
        assert_eq!(t.lookup(0x110), None);
        assert_eq!(t.lookup(0x2ff).as_deref(), Some("nosize"));
        assert_eq!(t.lookup(0x307).as_deref(), Some("last"));
        assert_eq!(t.lookup(0x308), None);
        assert_eq!(t.lookup(0xff), None);
        // One Arc a symbol, however often it is looked up.
        assert!(Arc::ptr_eq(
            &t.lookup(0x300).unwrap(),
            &t.lookup(0x304).unwrap()
        ));
    }

    /// libc's debug file at memcpy's resolver: the local IFUNC `memcpy`,
    /// the resolver function, the global `memcpy@@GLIBC_2.14`; perf keeps
    /// the global. An address whose kept symbol is not an IFUNC but
    /// dropped one is an alias, and named; one with no IFUNC is not.
    #[test]
    fn an_ifuncs_name_is_the_symbol_perf_keeps_at_its_address() {
        let ifunc = |start, name, global| Sym {
            ifunc: true,
            ..sym(start, 0x109, name, false, global)
        };
        let mut b = TableBuilder::default();
        b.push(ifunc(0x9be70, "memcpy", false));
        b.push(sym(0x9be70, 0x109, "__new_memcpy_ifunc", false, false));
        b.push(ifunc(0x9be70, "memcpy@@GLIBC_2.14", true));
        b.push(ifunc(0x100, "__GI_strlen", false));
        b.push(sym(0x100, 0x10, "strlen_alias", false, true));
        b.push(sym(0x200, 0x10, "plain", false, true));
        let names = b.ifunc_names();
        assert_eq!(
            names.get(&0x9be70).map(|s| &s[..]),
            Some("memcpy@@GLIBC_2.14")
        );
        assert_eq!(names.get(&0x100).map(|s| &s[..]), Some("strlen_alias"));
        assert_eq!(names.get(&0x200), None);
        assert_eq!(names.len(), 2);
    }

    #[test]
    fn an_address_is_the_innermost_symbols_else_the_enclosing_ones() {
        // A JIT map of reused code space: a big entry, a small one inside
        // it, one that overlaps its end. Code covered by the big one alone
        // is the big one's (perf script names it), not unknown.
        let mut b = TableBuilder::default();
        b.push(sym(0x1000, 0x1000, "big", false, true));
        b.push(sym(0x1100, 0x100, "small", false, true));
        b.push(sym(0x1f00, 0x900, "tail", false, true));
        let t = b.table();
        let at = |a| t.lookup(a).map(|n| n.to_string());
        assert_eq!(at(0x1050).as_deref(), Some("big"));
        assert_eq!(at(0x1150).as_deref(), Some("small"));
        assert_eq!(at(0x1200).as_deref(), Some("big"));
        assert_eq!(at(0x1800).as_deref(), Some("big"));
        assert_eq!(at(0x1f00).as_deref(), Some("tail"));
        assert_eq!(at(0x27ff).as_deref(), Some("tail"));
        assert_eq!(at(0x2800), None);
        assert_eq!(at(0xfff), None);
        assert!(Arc::ptr_eq(
            &t.lookup(0x1050).unwrap(),
            &t.lookup(0x1800).unwrap()
        ));
        // Deep nesting stays a table of as many parts, not more per level.
        let mut b = TableBuilder::default();
        for i in 0..1000u64 {
            b.push(sym(0x10_0000 + i, 0x10_0000 - 2 * i, "n", false, true));
        }
        let t = b.table();
        assert!(t.syms.len() < 2 * 1000);
        assert!(t.lookup(0x10_0000 + 0x10_0000 - 1).is_some());
    }
}
