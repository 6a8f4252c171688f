//! `perfz report`'s own table: the samples by perf report's sort keys
//! (`comm`, `dso`, `sym`), each row counted by the samples whose stack
//! holds it (children) and whose leaf it is (self), as `perf report
//! --stdio --sort comm,dso,sym` ranks them; counted from the export's
//! folded stacks (their functions named as stackcollapse-perf names them,
//! with their modules), never from their text: a name may hold a newline
//! and a number (a program's file name), which the text would take for a
//! line of its own.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::export::name::frames::Named;
use crate::export::write::folded::Folded;
use crate::export::write::tidy::{file_name, tidy, tidy_frames_by};

/// A sort key of perf report's that perfz's own table knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SortKey {
    /// The thread's name.
    Comm,
    /// The module: the mapped file's name, `[kernel.kallsyms]`.
    Dso,
    /// The function.
    Sym,
}

impl SortKey {
    /// perf report's `--sort` list (`comm,dso,sym`); the key perfz's table
    /// does not know, as the error.
    pub(crate) fn parse_list(list: &str) -> Result<Vec<SortKey>, String> {
        let mut keys = Vec::new();
        for k in list.split(',').map(str::trim).filter(|k| !k.is_empty()) {
            let key = match k {
                "comm" => SortKey::Comm,
                "dso" => SortKey::Dso,
                "sym" | "symbol" => SortKey::Sym,
                other => return Err(other.to_string()),
            };
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        Ok(keys)
    }

    /// The column's heading, as perf report's.
    pub(crate) fn heading(self) -> &'static str {
        match self {
            SortKey::Comm => "Command",
            SortKey::Dso => "Shared Object",
            SortKey::Sym => "Symbol",
        }
    }
}

/// One line of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReportRow {
    /// The values of the sort keys, in their order (a symbol without its
    /// `_[k]` mark).
    pub(crate) key: Vec<String>,
    /// A kernel function (perf's `[k]`, else `[.]`).
    pub(crate) kernel: bool,
    /// Samples whose stack holds it.
    pub(crate) children: u64,
    /// Samples that ended in it.
    pub(crate) self_: u64,
}

/// The rows, and what all samples weigh.
pub(crate) type ReportTable = (Vec<ReportRow>, u64);

/// One function of a stack as the table counts it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct CountedFunction {
    /// Its name, tidied as folded lines tidy it (no `_[k]`).
    pub(crate) sym: String,
    /// Its module's file name (`[kernel.kallsyms]`, `[unknown]`).
    pub(crate) dso: String,
    /// A named kernel function.
    pub(crate) kernel: bool,
}

/// Each frame of `frames` as its functions' ids in the list returned.
fn functions(frames: &[Named<'_>]) -> (crate::export::write::tidy::Tidied, Vec<CountedFunction>) {
    let mut all: Vec<CountedFunction> = Vec::new();
    let mut ids: FxHashMap<CountedFunction, u32> = FxHashMap::default();
    let tidied = tidy_frames_by(frames, true, |f| {
        let sym = tidy(f, false);
        // Left out, as in folded lines (`(anonymous namespace)::f`).
        if sym.starts_with('(') {
            return None;
        }
        let func = CountedFunction {
            sym,
            dso: file_name(f.module).to_string(),
            kernel: f.kernel && f.func.is_some(),
        };
        let next = all.len() as u32;
        Some(*ids.entry(func.clone()).or_insert_with(|| {
            all.push(func);
            next
        }))
    });
    (tidied, all)
}

/// The table of the stacks of `folded` (their frames of `frames`) by
/// `keys`, the rows with the most children first (with `by_self`, the most
/// self), and what all samples weigh.
pub(crate) fn table(
    folded: &Folded,
    frames: &[Named<'_>],
    keys: &[SortKey],
    by_self: bool,
) -> ReportTable {
    let (tidied, funcs) = functions(frames);
    let mut counter = Counter::new(keys);
    let mut stack: Vec<&CountedFunction> = Vec::new();
    folded.each(|comm, ids, n| {
        stack.clear();
        // Root first: the frames are leaf first, each frame's functions
        // outermost first.
        for &f in ids.iter().rev() {
            stack.extend(tidied.of(f).iter().map(|&i| &funcs[i as usize]));
        }
        counter.add(comm, &stack, n);
    });
    counter.finish(by_self)
}

/// Counts per row, as stacks are added.
struct Counter<'a> {
    keys: &'a [SortKey],
    /// (children, self, kernel) by row key.
    rows: FxHashMap<Vec<&'a str>, (u64, u64, bool)>,
    total: u64,
    seen: FxHashSet<Vec<&'a str>>,
}

impl<'a> Counter<'a> {
    fn new(keys: &'a [SortKey]) -> Counter<'a> {
        Counter {
            keys,
            rows: FxHashMap::default(),
            total: 0,
            seen: FxHashSet::default(),
        }
    }

    /// Adds a stack of thread `comm`, its functions root first, that
    /// weighs `n`.
    fn add(&mut self, comm: &'a str, stack: &[&'a CountedFunction], n: u64) {
        self.total = self.total.saturating_add(n);
        let keys = self.keys;
        let row_of = |f: &'a CountedFunction| -> Vec<&'a str> {
            keys.iter()
                .map(|k| match k {
                    SortKey::Comm => comm,
                    SortKey::Dso => f.dso.as_str(),
                    SortKey::Sym => f.sym.as_str(),
                })
                .collect()
        };
        self.seen.clear();
        for f in stack {
            let key = row_of(f);
            // A recursive function counts once per sample.
            if self.seen.insert(key.clone()) {
                let r = self.rows.entry(key).or_default();
                r.0 = r.0.saturating_add(n);
                r.2 = f.kernel;
            }
        }
        if let Some(f) = stack.last() {
            let r = self.rows.entry(row_of(f)).or_default();
            r.1 = r.1.saturating_add(n);
            r.2 = f.kernel;
        }
    }

    /// The rows, most children (with `by_self`, most self) first, and the
    /// total.
    fn finish(self, by_self: bool) -> ReportTable {
        let mut v: Vec<ReportRow> = (self.rows.into_iter())
            .map(|(key, (children, self_, kernel))| ReportRow {
                key: key.into_iter().map(String::from).collect(),
                kernel,
                children,
                self_,
            })
            .collect();
        let rank = |r: &ReportRow| {
            if by_self {
                (r.self_, r.children)
            } else {
                (r.children, r.self_)
            }
        };
        v.sort_by(|a, b| (rank(b), &a.key).cmp(&(rank(a), &b.key)));
        (v, self.total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sym<TAB>dso` (`_[k]` on a kernel function's), as a function.
    fn func(text: &str) -> CountedFunction {
        let (sym, dso) = text.split_once('\t').unwrap_or((text, "[unknown]"));
        let (sym, kernel) = match sym.strip_suffix("_[k]") {
            Some(s) => (s, true),
            None => (sym, false),
        };
        CountedFunction {
            sym: sym.into(),
            dso: dso.into(),
            kernel,
        }
    }

    /// The table of `stacks` (comm, functions root first, weight).
    fn count(stacks: &[(&str, &[&str], u64)], keys: &[SortKey], by_self: bool) -> ReportTable {
        let funcs: Vec<Vec<CountedFunction>> = (stacks.iter())
            .map(|(_, fs, _)| fs.iter().map(|f| func(f)).collect())
            .collect();
        let mut c = Counter::new(keys);
        for ((comm, _, n), fs) in stacks.iter().zip(&funcs) {
            c.add(comm, &fs.iter().collect::<Vec<_>>(), *n);
        }
        c.finish(by_self)
    }

    #[test]
    fn children_count_a_stack_once_and_self_its_leaf() {
        let stacks: &[(&str, &[&str], u64)] = &[
            ("dd", &["main", "rec", "rec", "leaf"], 3),
            ("dd", &["main", "other"], 1),
            ("sh", &["main"], 2),
        ];
        let (rows, total) = count(stacks, &[SortKey::Comm, SortKey::Sym], false);
        assert_eq!(total, 6);
        let get = |c: &str, f: &str| {
            let r = rows.iter().find(|r| r.key == [c, f]).unwrap();
            (r.children, r.self_)
        };
        assert_eq!(get("dd", "main"), (4, 0));
        assert_eq!(get("dd", "rec"), (3, 0));
        assert_eq!(get("dd", "leaf"), (3, 3));
        assert_eq!(get("sh", "main"), (2, 2));
        assert_eq!(rows[0].key, ["dd", "main"]);
        let (by_self, _) = count(stacks, &[SortKey::Comm, SortKey::Sym], true);
        assert_eq!(by_self[0].key, ["dd", "leaf"]);
    }

    #[test]
    fn rows_are_the_sort_keys_modules_and_kernel_marks_included() {
        let stacks: &[(&str, &[&str], u64)] = &[
            (
                "dd",
                &[
                    "main\tdd",
                    "write\tlibc.so.6",
                    "ksys_write_[k]\t[kernel.kallsyms]",
                ],
                2,
            ),
            ("sh", &["main\tsh", "write\tlibc.so.6"], 1),
        ];
        let (rows, _) = count(stacks, &[SortKey::Dso, SortKey::Sym], false);
        let write = rows
            .iter()
            .find(|r| r.key == ["libc.so.6", "write"])
            .unwrap();
        assert_eq!((write.children, write.self_), (3, 1));
        let k = rows.iter().find(|r| r.key[1] == "ksys_write").unwrap();
        assert!(k.kernel && k.key[0] == "[kernel.kallsyms]");
        let (rows, _) = count(stacks, &[SortKey::Dso], false);
        assert_eq!(rows.len(), 4, "{rows:?}");
        assert_eq!(
            SortKey::parse_list("comm,dso,sym"),
            Ok(vec![SortKey::Comm, SortKey::Dso, SortKey::Sym])
        );
        assert_eq!(SortKey::parse_list("comm,pid"), Err("pid".into()));
    }

    #[test]
    fn a_name_with_a_newline_and_a_number_is_a_name() {
        // A module named `e 99999999999\nx` (a program's file name): one
        // row of weight 5, no row of 99 999 999 999.
        let stacks: &[(&str, &[&str], u64)] = &[("e", &["main\te 99999999999\nx"], 5)];
        let (rows, total) = count(stacks, &[SortKey::Dso, SortKey::Sym], false);
        assert_eq!(total, 5);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].key, ["e 99999999999\nx", "main"]);
    }
}
