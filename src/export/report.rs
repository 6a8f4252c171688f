//! `perfz report`'s own table: the functions that took the samples, by
//! the samples whose stack holds them (children) and whose leaf they are
//! (self), as `perf report --stdio --sort comm,sym` ranks them, read from
//! the folded stacks of an export (names as stackcollapse-perf gives them).

use rustc_hash::{FxHashMap, FxHashSet};

/// One line of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionRow {
    /// The thread name the samples were taken in.
    pub comm: String,
    /// The function, as the folded stacks name it.
    pub func: String,
    /// Samples whose stack holds the function.
    pub children: u64,
    /// Samples that ended in it.
    pub self_: u64,
}

/// The table of `folded` lines (`comm;root;...;leaf count`), the rows with
/// the most children first, and the samples in all.
pub fn table(folded: &[String]) -> (Vec<FunctionRow>, u64) {
    let mut rows: FxHashMap<(&str, &str), (u64, u64)> = FxHashMap::default();
    let mut total: u64 = 0;
    let mut seen = FxHashSet::default();
    for line in folded {
        let Some((stack, n)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(n) = n.parse::<u64>() else { continue };
        total = total.saturating_add(n);
        let mut frames = stack.split(';');
        let comm = frames.next().unwrap_or("");
        let frames: Vec<&str> = frames.collect();
        seen.clear();
        for f in &frames {
            // A recursive function counts once per sample.
            if seen.insert(*f) {
                let r = &mut rows.entry((comm, f)).or_default().0;
                *r = r.saturating_add(n);
            }
        }
        if let Some(leaf) = frames.last() {
            let r = &mut rows.entry((comm, leaf)).or_default().1;
            *r = r.saturating_add(n);
        }
    }
    let mut v: Vec<FunctionRow> = rows
        .into_iter()
        .map(|((comm, func), (children, self_))| FunctionRow {
            comm: comm.to_string(),
            func: func.to_string(),
            children,
            self_,
        })
        .collect();
    v.sort_by(|a, b| {
        (b.children, b.self_, &a.comm, &a.func).cmp(&(a.children, a.self_, &b.comm, &b.func))
    });
    (v, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_count_a_stack_once_and_self_its_leaf() {
        let lines = ["dd;main;rec;rec;leaf 3", "dd;main;other 1", "sh;main 2"]
            .map(String::from)
            .to_vec();
        let (rows, total) = table(&lines);
        assert_eq!(total, 6);
        let get = |c: &str, f: &str| {
            let r = rows.iter().find(|r| r.comm == c && r.func == f).unwrap();
            (r.children, r.self_)
        };
        assert_eq!(get("dd", "main"), (4, 0));
        assert_eq!(get("dd", "rec"), (3, 0));
        assert_eq!(get("dd", "leaf"), (3, 3));
        assert_eq!(get("sh", "main"), (2, 2));
        assert_eq!(rows[0].func, "main");
    }
}
