//! Symbol tables looked up as perf looks them up: a symbol covers [start,
//! start + size), one of size 0 runs to the next; of several at one
//! address, perf's choice. Names are kept in one buffer per table (a
//! kernel's list has 100 000 and more), each made an `Arc` the first time
//! it is looked up and that one `Arc` after (the folded output tidies each
//! name once).

use std::cell::RefCell;
use std::sync::Arc;

use rustc_hash::FxHashMap;

/// A symbol as read.
pub(super) struct Sym<'a> {
    pub start: u64,
    pub end: u64,
    pub name: &'a str,
    pub weak: bool,
    pub global: bool,
}

/// A symbol: its name at `at` in the table's names, its length and kind
/// in `bits`.
struct Entry {
    start: u64,
    end: u64,
    at: u32,
    bits: u32,
}

const WEAK: u32 = 1 << 30;
const GLOBAL: u32 = 1 << 29;
const LEN: u32 = GLOBAL - 1;

impl Entry {
    fn weak(&self) -> bool {
        self.bits & WEAK != 0
    }
    fn global(&self) -> bool {
        self.bits & GLOBAL != 0
    }
}

/// A table's names, one after the other.
#[derive(Default)]
struct Names {
    own: String,
}

impl Names {
    fn of(&self, e: &Entry) -> &[u8] {
        let (at, len) = (e.at as usize, (e.bits & LEN) as usize);
        self.own.as_bytes().get(at..at + len).unwrap_or_default()
    }
}

/// Symbols as they are read, before duplicates are chosen between.
#[derive(Default)]
pub(super) struct TableBuilder {
    entries: Vec<Entry>,
    names: Names,
}

impl TableBuilder {
    pub fn push(&mut self, s: Sym<'_>) {
        // Names of 512 MiB, or past 4 GiB in all, are left out (no symbol
        // table has them).
        let len = match u32::try_from(s.name.len()) {
            Ok(len) if len <= LEN => len,
            _ => return,
        };
        let Ok(at) = u32::try_from(self.names.own.len()) else {
            return;
        };
        self.names.own.push_str(s.name);
        let kind = if s.weak { WEAK } else { 0 } | if s.global { GLOBAL } else { 0 };
        self.entries.push(Entry {
            start: s.start,
            end: s.end,
            at,
            bits: len | kind,
        });
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// An ELF file's table: duplicates chosen between, then each symbol of
    /// size 0 runs to the next (perf's dso__load_sym order).
    pub fn table(self) -> Table {
        self.build(false)
    }

    /// The kernel's: ends fixed first, then duplicates chosen between
    /// (perf's __dso__load_kallsyms order), so of several names at one
    /// address the last listed is the one with a size, and wins.
    pub fn kallsyms(self) -> Table {
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

/// Sorted, non-overlapping symbols.
#[derive(Default)]
pub struct Table {
    syms: Vec<Entry>,
    names: Names,
    /// The names looked up so far, by symbol.
    shared: RefCell<FxHashMap<u32, Arc<str>>>,
}

impl Table {
    /// The name of the symbol that covers `addr`.
    pub(super) fn lookup(&self, addr: u64) -> Option<Arc<str>> {
        let i = self
            .syms
            .partition_point(|s| s.start <= addr)
            .checked_sub(1)?;
        let s = &self.syms[i];
        (addr < s.end).then(|| {
            self.shared
                .borrow_mut()
                .entry(i as u32)
                .or_insert_with(|| String::from_utf8_lossy(self.names.of(s)).into())
                .clone()
        })
    }
}

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
}
