//! Stacks in stackcollapse-perf's format: `comm;root;...;leaf count`, one
//! line per distinct stack, as `perf script | stackcollapse-perf.pl`
//! writes them (function names tidied as its defaults do; an unknown
//! function is named after its module, or `unknown`).

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::Named;

/// stackcollapse-perf's options.
#[derive(Clone, Copy, Debug, Default)]
pub struct FoldOptions {
    /// `--pid`: `comm-pid` as the first frame.
    pub pid: bool,
    /// `--tid`: `comm-pid/tid` as the first frame.
    pub tid: bool,
    /// `--kernel`: kernel functions end in `_[k]`.
    pub annotate_kernel: bool,
}

/// One frame as perf script prints it: its function (None: `[unknown]`)
/// and its module (None: `[unknown]`).
pub struct Frame<'a> {
    pub func: Option<&'a str>,
    pub module: Option<&'a str>,
    pub kernel: bool,
}

/// A stack of one thread: (comm, pid, tid, frame ids leaf first); pid
/// and tid are 0 unless the options show them.
type Stack = (Arc<str>, u32, u32, Box<[u32]>);

/// Counts of collapsed stacks.
#[derive(Default)]
pub struct Folded {
    counts: FxHashMap<Stack, u64>,
}

impl Folded {
    /// Adds one sample of thread `tid` of `pid` named `comm` whose stack is
    /// the frames `ids` (of the export's frame table), leaf first.
    pub fn add(&mut self, o: &FoldOptions, (comm, pid, tid): (&Arc<str>, u32, u32), ids: &[u32]) {
        let pid = if o.pid || o.tid { pid } else { 0 };
        let tid = if o.tid { tid } else { 0 };
        // Look up first: most samples repeat a stack seen before.
        let key = (comm.clone(), pid, tid, Box::from(ids));
        *self.counts.entry(key).or_default() += 1;
    }

    /// The stacks, sorted, with their counts: `stack count` lines. Each
    /// frame of `frames` is tidied once.
    pub fn lines(&self, o: &FoldOptions, frames: &[Named]) -> Vec<String> {
        let mut tidied: Vec<Option<String>> = vec![None; frames.len()];
        let mut v: Vec<(String, u64)> = self
            .counts
            .iter()
            .map(|((comm, pid, tid, ids), n)| {
                let mut line = comm.replace(' ', "_");
                if o.tid {
                    line.push_str(&format!("-{pid}/{tid}"));
                } else if o.pid {
                    line.push_str(&format!("-{pid}"));
                }
                for &id in ids.iter().rev() {
                    let t = tidied[id as usize].get_or_insert_with(|| {
                        let f = &frames[id as usize];
                        let one = |func: Option<&str>| {
                            tidy(
                                &Frame {
                                    func,
                                    module: f.module.as_deref(),
                                    kernel: f.kernel,
                                },
                                o,
                            )
                        };
                        if f.funcs.is_empty() {
                            one(None)
                        } else {
                            // Innermost first: the root-first line wants the
                            // outermost first.
                            let names: Vec<String> =
                                f.funcs.iter().rev().map(|n| one(Some(n))).collect();
                            names.join(";")
                        }
                    });
                    line.push(';');
                    line.push_str(t);
                }
                (line, *n)
            })
            .collect();
        // Two keys may fold to one line (names that tidy alike).
        v.sort();
        v.dedup_by(|b, a| {
            let same = a.0 == b.0;
            if same {
                a.1 += b.1;
            }
            same
        });
        v.into_iter().map(|(l, n)| format!("{l} {n}")).collect()
    }

    /// Distinct stacks (before names that tidy alike are merged).
    pub fn stacks(&self) -> usize {
        self.counts.len()
    }
}

/// A function name as stackcollapse-perf tidies it by default.
fn tidy(f: &Frame<'_>, o: &FoldOptions) -> String {
    let mut func = match (f.func, f.module) {
        (Some(name), _) => name.to_string(),
        (None, Some(m)) => m.rsplit('/').next().unwrap_or(m).to_string(),
        (None, None) => "unknown".to_string(),
    };
    func = func.replace(';', ":").replace(['\n', '\r'], " ");
    if !(func.contains(".(") && func.contains(").")) {
        func.retain(|c| c != '<' && c != '>');
        if !func.starts_with('(') && !func.starts_with('-') {
            if let Some(i) = func.find('(') {
                func.truncate(i);
            }
        }
    }
    func.retain(|c| c != '"' && c != '\'');
    if o.annotate_kernel && f.kernel && f.func.is_some() {
        func.push_str("_[k]");
    }
    func
}
