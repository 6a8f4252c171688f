//! `perfz report`'s own table: the samples by perf report's sort keys
//! (`comm`, `dso`, `sym`), each row counted by the samples whose stack
//! holds it (children) and whose leaf it is (self), as `perf report
//! --stdio --sort comm,dso,sym` ranks them; read from the folded stacks of
//! an export whose frames carry their modules (names as
//! stackcollapse-perf gives them, kernel functions marked `_[k]`).

use rustc_hash::{FxHashMap, FxHashSet};

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

/// One frame of a folded line: `func<TAB>module`, `_[k]` on a kernel
/// function's name.
fn frame(text: &str) -> (&str, &str, bool) {
    let (func, module) = text.split_once('\t').unwrap_or((text, "[unknown]"));
    match func.strip_suffix("_[k]") {
        Some(f) => (f, module, true),
        None => (func, module, false),
    }
}

/// The row a frame's text (`func<TAB>module`) of thread `comm` counts in,
/// and whether it is a kernel function.
fn row_of<'a>(keys: &[SortKey], comm: &'a str, text: &'a str) -> (Vec<&'a str>, bool) {
    let (sym, dso, kernel) = frame(text);
    let key = keys
        .iter()
        .map(|k| match k {
            SortKey::Comm => comm,
            SortKey::Dso => dso,
            SortKey::Sym => sym,
        })
        .collect();
    (key, kernel)
}

/// The table of `folded` lines (`comm;root;...;leaf count`) by `keys`, the
/// rows with the most children first (with `by_self`, the most self), and
/// the samples in all.
pub(crate) fn table(folded: &[String], keys: &[SortKey], by_self: bool) -> (Vec<ReportRow>, u64) {
    type Counts = (u64, u64, bool);
    let mut rows: FxHashMap<Vec<&str>, Counts> = FxHashMap::default();
    let mut total: u64 = 0;
    let mut seen = FxHashSet::default();
    for line in folded {
        let Some((stack, n)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(n) = n.parse::<u64>() else { continue };
        total = total.saturating_add(n);
        let mut texts = stack.split(';');
        let comm = texts.next().unwrap_or("");
        let frames: Vec<(Vec<&str>, bool)> = texts.map(|t| row_of(keys, comm, t)).collect();
        seen.clear();
        for (key, kernel) in &frames {
            // A recursive function counts once per sample.
            if seen.insert(key.clone()) {
                let r = rows.entry(key.clone()).or_default();
                r.0 = r.0.saturating_add(n);
                r.2 = *kernel;
            }
        }
        if let Some((key, kernel)) = frames.last() {
            let r = rows.entry(key.clone()).or_default();
            r.1 = r.1.saturating_add(n);
            r.2 = *kernel;
        }
    }
    let mut v: Vec<ReportRow> = rows
        .into_iter()
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
    (v, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(l: &[&str]) -> Vec<String> {
        l.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn children_count_a_stack_once_and_self_its_leaf() {
        let lines = lines(&["dd;main;rec;rec;leaf 3", "dd;main;other 1", "sh;main 2"]);
        let (rows, total) = table(&lines, &[SortKey::Comm, SortKey::Sym], false);
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
        let (by_self, _) = table(&lines, &[SortKey::Comm, SortKey::Sym], true);
        assert_eq!(by_self[0].key, ["dd", "leaf"]);
    }

    #[test]
    fn rows_are_the_sort_keys_modules_and_kernel_marks_included() {
        let lines = lines(&[
            "dd;main\tdd;write\tlibc.so.6;ksys_write_[k]\t[kernel.kallsyms] 2",
            "sh;main\tsh;write\tlibc.so.6 1",
        ]);
        let (rows, _) = table(&lines, &[SortKey::Dso, SortKey::Sym], false);
        let write = rows
            .iter()
            .find(|r| r.key == ["libc.so.6", "write"])
            .unwrap();
        assert_eq!((write.children, write.self_), (3, 1));
        let k = rows.iter().find(|r| r.key[1] == "ksys_write").unwrap();
        assert!(k.kernel && k.key[0] == "[kernel.kallsyms]");
        let (rows, _) = table(&lines, &[SortKey::Dso], false);
        assert_eq!(rows.len(), 4, "{rows:?}");
        assert_eq!(
            SortKey::parse_list("comm,dso,sym"),
            Ok(vec![SortKey::Comm, SortKey::Dso, SortKey::Sym])
        );
        assert_eq!(SortKey::parse_list("comm,pid"), Err("pid".into()));
    }
}
