//! Stacks in stackcollapse-perf's format: `comm;root;...;leaf count`, one
//! line per distinct stack, as `perf script | stackcollapse-perf.pl`
//! writes them (function names tidied as its defaults do; an unknown
//! function is named after its module, or `unknown`).

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::Named;

/// The most one sample weighs.
const MAX_PERIOD: u64 = 1 << 40;

/// stackcollapse-perf's options.
#[derive(Clone, Copy, Debug, Default)]
pub struct FoldOptions {
    /// `--pid`: `comm-pid` as the first frame.
    pub pid: bool,
    /// `--tid`: `comm-pid/tid` as the first frame.
    pub tid: bool,
    /// `--kernel`: kernel functions end in `_[k]`.
    pub annotate_kernel: bool,
    /// Each sample weighs 1, not its period (perf script prints the period
    /// and inferno-collapse-perf weighs by it).
    pub sample_counts: bool,
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
    /// the frames `ids` (of the export's frame table), leaf first, weighing
    /// its `period` (1 where it has none, or with `sample_counts`).
    pub fn add(
        &mut self,
        o: &FoldOptions,
        (comm, pid, tid): (&Arc<str>, u32, u32),
        ids: &[u32],
        period: Option<u64>,
    ) {
        let pid = if o.pid || o.tid { pid } else { 0 };
        let tid = if o.tid { tid } else { 0 };
        // Look up first: most samples repeat a stack seen before.
        let key = (comm.clone(), pid, tid, Box::from(ids));
        // A period past 2^40 is a damaged record (cpu-clock's is 250 000 ns,
        // a cycles one 10^9 at most): capped, so sums stay far below
        // u64::MAX whatever the file holds (and inferno's svg sums too).
        let weight = if o.sample_counts {
            1
        } else {
            period.unwrap_or(1).min(MAX_PERIOD)
        };
        let n = self.counts.entry(key).or_default();
        *n = n.saturating_add(weight);
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
                            // outermost first. A name that starts with `(`
                            // is left out, as the collapse tools leave it
                            // (perf's `(anonymous namespace)::f`).
                            let names: Vec<String> = f
                                .funcs
                                .iter()
                                .rev()
                                .map(|n| one(Some(n)))
                                .filter(|n| !n.starts_with('('))
                                .collect();
                            names.join(";")
                        }
                    });
                    if !t.is_empty() {
                        line.push(';');
                        line.push_str(t);
                    }
                }
                (line, *n)
            })
            .collect();
        // Two keys may fold to one line (names that tidy alike).
        v.sort();
        v.dedup_by(|b, a| {
            let same = a.0 == b.0;
            if same {
                a.1 = a.1.saturating_add(b.1);
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

/// A function name as inferno-collapse-perf (and stackcollapse-perf.pl)
/// tidies perf script's by default: an unknown function is `[module]` (its
/// file name) or `[unknown]`; `;` becomes `:`; the parameter list goes, cut
/// at the first `(` outside `<>`, `{}` and `[]` that is neither a Go method's
/// `.(` nor `(anonymous namespace)`.
fn tidy(f: &Frame<'_>, o: &FoldOptions) -> String {
    let mut func = match (f.func, f.module) {
        (Some(name), _) => super::demangle::demangle(name).into_owned(),
        (None, Some(m)) => format!("[{}]", m.rsplit('/').next().unwrap_or(m)),
        (None, None) => "[unknown]".to_string(),
    };
    func = func.replace(';', ":").replace(['\n', '\r'], " ");
    if f.func.is_some() {
        func.truncate(without_parameters(&func));
    }
    if o.annotate_kernel && f.kernel && f.func.is_some() {
        func.push_str("_[k]");
    }
    func
}

/// Where `func`'s parameter list starts (its length if it has none), as
/// inferno's tidy_generic finds it.
fn without_parameters(func: &str) -> usize {
    let mut depth = 0i32;
    let mut after_dot = None;
    for (i, c) in func.char_indices() {
        match c {
            '<' | '{' | '[' => depth += 1,
            '>' | '}' | ']' | ')' => depth -= 1,
            '(' => {
                if depth == 0
                    && after_dot != Some(i)
                    && !func[i..].starts_with("(anonymous namespace)")
                {
                    return i;
                }
                depth += 1;
            }
            '.' => after_dot = Some(i + 1),
            _ => {}
        }
    }
    func.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tidied(func: &str) -> String {
        let f = Frame {
            func: Some(func),
            module: None,
            kernel: false,
        };
        tidy(&f, &FoldOptions::default())
    }

    #[test]
    fn parameters_go_and_templates_lambdas_and_namespaces_stay() {
        // By inferno 0.12.8's rule (the interop tests compare with the tool).
        assert_eq!(tidied("foo(int, char const*)"), "foo");
        assert_eq!(
            tidied("void sort_it<std::less<int> >(std::vector<int, std::allocator<int> >&)"),
            "void sort_it<std::less<int> >"
        );
        assert_eq!(
            tidied("(anonymous namespace)::work(int)"),
            "(anonymous namespace)::work"
        );
        assert_eq!(
            tidied("main::{lambda(int)#1}::operator()(int) const"),
            "main::{lambda(int)#1}::operator"
        );
        assert_eq!(tidied("net/http.(*Client).Do"), "net/http.(*Client).Do");
        assert_eq!(tidied("a;b"), "a:b");
    }

    #[test]
    fn unknown_functions_are_named_after_their_module_in_brackets() {
        let o = FoldOptions::default();
        let f = |module| Frame {
            func: None,
            module,
            kernel: false,
        };
        assert_eq!(tidy(&f(Some("/usr/lib/libc.so.6")), &o), "[libc.so.6]");
        assert_eq!(
            tidy(&f(Some("[kernel.kallsyms]")), &o),
            "[[kernel.kallsyms]]"
        );
        assert_eq!(tidy(&f(None), &o), "[unknown]");
    }
}
