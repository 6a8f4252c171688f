//! Stacks in stackcollapse-perf's format: `comm;root;...;leaf count`, one
//! line per distinct stack, as `perf script | stackcollapse-perf.pl`
//! writes them (function names tidied as its defaults do; an unknown
//! function is named after its module, or `unknown`).

use std::collections::HashMap;
use std::io::{self, Write};

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

/// Counts of collapsed stacks.
#[derive(Default)]
pub struct Folded {
    counts: HashMap<String, u64>,
}

impl Folded {
    /// Adds one sample of thread `tid` of `pid` named `comm` whose stack is
    /// `frames`, leaf first.
    pub fn add<'a>(
        &mut self,
        o: &FoldOptions,
        (comm, pid, tid): (&str, u32, u32),
        frames: impl DoubleEndedIterator<Item = Frame<'a>>,
    ) {
        let mut line = comm.replace(' ', "_");
        if o.tid {
            line.push_str(&format!("-{pid}/{tid}"));
        } else if o.pid {
            line.push_str(&format!("-{pid}"));
        }
        for f in frames.rev() {
            line.push(';');
            line.push_str(&tidy(&f, o));
        }
        *self.counts.entry(line).or_default() += 1;
    }

    /// The stacks, sorted, with their counts: `stack count` lines.
    pub fn lines(&self) -> Vec<String> {
        let mut v: Vec<(&String, &u64)> = self.counts.iter().collect();
        v.sort();
        v.into_iter()
            .map(|(stack, n)| format!("{stack} {n}"))
            .collect()
    }

    /// [`lines`](Self::lines), written one per line.
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        for l in self.lines() {
            writeln!(out, "{l}")?;
        }
        Ok(())
    }

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
    func = func.replace(';', ":");
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
