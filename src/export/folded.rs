//! Stacks in stackcollapse-perf's format: `comm;root;...;leaf count`, one
//! line per distinct stack, as `perf script | stackcollapse-perf.pl`
//! writes them (function names tidied as its defaults do; an unknown
//! function is named after its module, or `unknown`).

use std::io::Write;
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

/// A stack of one thread: (comm, pid, tid, stack id); pid and tid are 0
/// unless the options show them.
type Stack = (Arc<str>, u32, u32, u32);

/// Counts of collapsed stacks.
#[derive(Default)]
pub struct Folded {
    /// Each distinct stack's frame ids, leaf first, and its id.
    stacks: FxHashMap<Box<[u32]>, u32>,
    counts: FxHashMap<Stack, u64>,
    /// The last sample's stack and its id (one buffer, reused).
    last: Option<(Vec<u32>, u32)>,
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
        // The last sample's stack, or looked up: most samples repeat a
        // stack seen before.
        let stack = match self.last {
            Some((ref last, id)) if last[..] == *ids => id,
            _ => {
                let id = match self.stacks.get(ids) {
                    Some(&id) => id,
                    None => {
                        let id = self.stacks.len() as u32;
                        self.stacks.insert(Box::from(ids), id);
                        id
                    }
                };
                let mut last = self.last.take().map(|l| l.0).unwrap_or_default();
                last.clear();
                last.extend_from_slice(ids);
                self.last = Some((last, id));
                id
            }
        };
        let key = (comm.clone(), pid, tid, stack);
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

    /// Writes the stacks, sorted, with their counts: `stack count` lines,
    /// each made as it is written (none is held: a compile's lines run to
    /// megabytes). Each frame of `frames` is tidied once. Returns how many
    /// lines.
    pub fn write(
        &self,
        o: &FoldOptions,
        frames: &[Named<'_>],
        out: &mut dyn std::io::Write,
    ) -> std::io::Result<usize> {
        // Frames are compared by their text's id: distinct addresses often
        // tidy alike (`[cc1plus]`).
        let (text_id, texts) = tidy_frames(o, frames);
        let texts = texts.all();
        let mut by_id: Vec<&[u32]> = vec![&[]; self.stacks.len()];
        for (ids, &id) in &self.stacks {
            by_id[id as usize] = ids;
        }
        // Each line: its thread (comm, and pid or tid where asked), then
        // each frame's names, root first.
        let mut lines: Vec<(String, Vec<u32>, u64)> = self
            .counts
            .iter()
            .map(|((comm, pid, tid, stack), &n)| {
                let mut head = comm.replace(' ', "_");
                if o.tid {
                    head.push_str(&format!("-{pid}/{tid}"));
                } else if o.pid {
                    head.push_str(&format!("-{pid}"));
                }
                let ids = by_id[*stack as usize].iter().rev();
                let shown = ids.map(|&id| text_id[id as usize]);
                (
                    head,
                    shown.filter(|&t| !texts[t as usize].is_empty()).collect(),
                    n,
                )
            })
            .collect();
        lines.sort_unstable_by(|a, b| cmp_lines(&texts, a, b));
        let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
        let mut written = 0;
        let mut i = 0;
        while i < lines.len() {
            // Two keys may fold to one line (names that tidy alike).
            let mut n = lines[i].2;
            let mut j = i + 1;
            while j < lines.len() && cmp_lines(&texts, &lines[j], &lines[i]).is_eq() {
                n = n.saturating_add(lines[j].2);
                j += 1;
            }
            for p in pieces(&texts, &lines[i], 0) {
                out.write_all(p)?;
            }
            writeln!(out, " {n}")?;
            written += 1;
            i = j;
        }
        out.flush()?;
        Ok(written)
    }

    /// The lines [`Folded::write`] writes.
    pub fn lines(&self, o: &FoldOptions, frames: &[Named]) -> Vec<String> {
        let mut text = Vec::new();
        self.write(o, frames, &mut text)
            .expect("writing to memory does not fail");
        String::from_utf8_lossy(&text)
            .lines()
            .map(String::from)
            .collect()
    }

    /// Distinct stacks (before names that tidy alike are merged).
    pub fn stacks(&self) -> usize {
        self.counts.len()
    }
}

/// A line: its thread (comm, and pid or tid where asked), its frames'
/// texts (their ids), root first (those with names shown), its count.
type Line = (String, Vec<u32>, u64);

/// A line's text in pieces from its `skip`-th frame: its thread (from the
/// first), then `;` and each frame's names.
fn pieces<'a>(
    texts: &'a [&'a str],
    (head, ids, _): &'a Line,
    skip: usize,
) -> impl Iterator<Item = &'a [u8]> + 'a {
    let head = (skip == 0).then_some(head.as_bytes());
    head.into_iter().chain(
        ids[skip.min(ids.len())..]
            .iter()
            .flat_map(|&id| [&b";"[..], texts[id as usize].as_bytes()]),
    )
}

/// Two lines compared as their texts: frames they share from the root
/// (the same text ids) are passed over without a look.
fn cmp_lines(texts: &[&str], a: &Line, b: &Line) -> std::cmp::Ordering {
    if a.0 != b.0 {
        return cmp_pieces(pieces(texts, a, 0), pieces(texts, b, 0));
    }
    // The same thread: from the first frame they differ in, without it.
    let same = a.1.iter().zip(&b.1).take_while(|(x, y)| x == y).count();
    let head = usize::from(same == 0);
    cmp_pieces(
        pieces(texts, a, same).skip(head),
        pieces(texts, b, same).skip(head),
    )
}

/// Two texts in pieces compared as the texts they make.
fn cmp_pieces<'a>(
    mut a: impl Iterator<Item = &'a [u8]>,
    mut b: impl Iterator<Item = &'a [u8]>,
) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (mut x, mut y): (&[u8], &[u8]) = (&[], &[]);
    loop {
        while x.is_empty() {
            match a.next() {
                Some(p) => x = p,
                None => break,
            }
        }
        while y.is_empty() {
            match b.next() {
                Some(p) => y = p,
                None => break,
            }
        }
        let n = x.len().min(y.len());
        if n == 0 {
            return x.len().cmp(&y.len());
        }
        match x[..n].cmp(&y[..n]) {
            Ordering::Equal => (x, y) = (&x[n..], &y[n..]),
            other => return other,
        }
    }
}

/// Distinct texts, each held once.
#[derive(Default)]
struct Texts {
    ids: FxHashMap<Box<str>, u32>,
}

impl Texts {
    fn id(&mut self, t: String) -> u32 {
        let next = self.ids.len() as u32;
        *self.ids.entry(t.into_boxed_str()).or_insert(next)
    }

    fn all(&self) -> Vec<&str> {
        let mut v = vec![""; self.ids.len()];
        for (t, &i) in &self.ids {
            v[i as usize] = t;
        }
        v
    }
}

/// Each frame of `frames` (every one some sample holds), tidied: the id
/// (in the texts returned) of its functions outermost first, joined by `;`
/// (empty for the ones left out). A function's name, and
/// an unknown function's module, is tidied once however many addresses in
/// it the samples hold; frames that tidy alike share a text id.
fn tidy_frames(o: &FoldOptions, frames: &[Named<'_>]) -> (Vec<u32>, Texts) {
    let mut texts = Texts::default();
    let empty = texts.id(String::new());
    let mut ids: Vec<u32> = vec![empty; frames.len()];
    // By the name's (or module's) address: the symbol tables hand out one
    // Arc a symbol, the maps one a module.
    let mut by_name: FxHashMap<(*const u8, bool, bool), (u32, bool)> = FxHashMap::default();
    for (i, f) in frames.iter().enumerate() {
        // A function's text id, and whether it is left out.
        let mut one = |texts: &mut Texts, func: Option<&Arc<str>>| {
            let key = match (func, &f.module) {
                (Some(n), _) => (n.as_ptr(), f.kernel, true),
                (None, Some(m)) => (m.as_ptr(), f.kernel, false),
                (None, None) => (std::ptr::null(), f.kernel, false),
            };
            *by_name.entry(key).or_insert_with(|| {
                let frame = Frame {
                    func: func.map(|n| &**n),
                    module: f.module.as_deref(),
                    kernel: f.kernel,
                };
                let t = tidy(&frame, o);
                // A name that starts with `(` is left out, as the collapse
                // tools leave it (perf's `(anonymous namespace)::f`).
                let out = t.starts_with('(');
                (texts.id(t), out)
            })
        };
        ids[i] = match f.funcs.as_slice() {
            [] => one(&mut texts, None).0,
            [func] => match one(&mut texts, Some(func)) {
                (_, true) => empty,
                (t, false) => t,
            },
            funcs => {
                // Innermost first: the root-first line wants the outermost
                // first.
                let parts: Vec<u32> = funcs
                    .iter()
                    .rev()
                    .map(|n| one(&mut texts, Some(n)))
                    .filter(|&(_, out)| !out)
                    .map(|(t, _)| t)
                    .collect();
                let all = texts.all();
                let joined: Vec<&str> = parts.iter().map(|&t| all[t as usize]).collect();
                let joined = joined.join(";");
                texts.id(joined)
            }
        };
    }
    (ids, texts)
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
