//! Stacks in stackcollapse-perf's format: `comm;root;...;leaf count`, one
//! line per distinct stack, as `perf script | stackcollapse-perf.pl`
//! writes them (function names tidied as its defaults do; an unknown
//! function is named after its module, or `unknown`).
//!
//! Each stack weighs the sum of its samples' periods (1 each with
//! `--sample-counts`), and lines are sorted by ranks of their texts, as
//! inferno sorts them; the svg is drawn from the lines by inferno.

use std::io::Write;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::export::name::frames::Named;
use crate::export::write::diff::diff_folded;
use crate::export::write::fold::{weight, FoldOptions};
use crate::export::write::format::{Diff, Ending, Exports, Format};
use crate::export::write::sampled::Sampled;
use crate::export::write::stacks::StackIds;
use crate::export::write::tidy::tidy_frames;
use crate::export::ExportOptions;
use crate::format::FormatError;

/// A stack of one thread: (comm, pid, tid, stack id); pid and tid are 0
/// unless the options show them.
type Stack = (Arc<str>, u32, u32, u32);

/// Counts of collapsed stacks.
#[derive(Default)]
pub(crate) struct Folded {
    /// Each distinct stack's frame ids, leaf first, and its id.
    stacks: StackIds,
    counts: FxHashMap<Stack, u64>,
}

impl Format for Folded {
    const NAME: &'static str = "folded";
    const HELP: &'static str = "stackcollapse-perf's `comm;root;...;leaf count` lines (flamegraph.pl, inferno-flamegraph, speedscope read them)";

    fn new(_: &ExportOptions) -> Folded {
        Folded::default()
    }

    fn add_sample(&mut self, fold: &FoldOptions, _: &[Named<'_>], s: &Sampled<'_>) {
        self.add(fold, s);
    }

    fn write_to(self, end: &Ending<'_>, out: &mut dyn Write) -> Result<usize, FormatError> {
        Ok(self.write(&end.o.fold, end.named, out)?)
    }

    /// `stack count_base count_new` lines, as `inferno-diff-folded` writes
    /// them ([`diff_folded`]).
    fn diff(d: &mut Diff<'_, impl Exports>, out: &mut dyn Write) -> Result<usize, FormatError> {
        let (b, n) = d.each::<Folded>()?;
        let lines = diff_folded(&b, &n, d.normalize)?;
        let mut w = std::io::BufWriter::new(out);
        lines.iter().try_for_each(|l| writeln!(w, "{l}"))?;
        w.flush()?;
        Ok(lines.len())
    }
}

impl Folded {
    /// Adds sample `s` (its thread, its stack's frame ids), weighing its
    /// period (1 where it has none, or with `sample_counts`).
    pub(crate) fn add(&mut self, o: &FoldOptions, s: &Sampled<'_>) {
        let Sampled {
            comm,
            pid,
            tid,
            ids,
            period,
            ..
        } = *s;
        // A sample without a frame (its chain discarded as perf discards
        // it) is no stack: perf script prints none, the collapse skips it.
        if ids.is_empty() {
            return;
        }
        let pid = if o.pid || o.tid { pid } else { 0 };
        let tid = if o.tid { tid } else { 0 };
        let key = (comm.clone(), pid, tid, self.stacks.id(ids));
        let weight = weight(o, period);
        let n = self.counts.entry(key).or_default();
        *n = n.saturating_add(weight);
    }

    /// Writes the stacks, sorted as their text, with their counts: `stack
    /// count` lines, each made as it is written (none is held: a compile's
    /// lines run to megabytes). Each frame of `frames` is tidied once.
    /// Returns how many lines.
    pub(crate) fn write(
        &self,
        o: &FoldOptions,
        frames: &[Named<'_>],
        out: &mut dyn std::io::Write,
    ) -> std::io::Result<usize> {
        // Frames are held as their texts' ids: distinct addresses often
        // tidy alike (`[cc1plus]`).
        let (tidied, mut texts) = tidy_frames(o.annotate_kernel, o.modules, frames);
        let by_id = self.stacks.by_id();
        // Each line: its thread (comm, and pid or tid where asked), then
        // each frame's texts, root first; all lines' texts in one buffer.
        let mut heads: FxHashMap<(*const u8, u32, u32), u32> = FxHashMap::default();
        let mut line_texts: Vec<u32> = Vec::new();
        let mut lines: Vec<StackLine> = Vec::with_capacity(self.counts.len());
        for ((comm, pid, tid, stack), &n) in &self.counts {
            let head = *heads.entry((comm.as_ptr(), *pid, *tid)).or_insert_with(|| {
                let mut head = comm.replace(' ', "_");
                if o.tid {
                    head.push_str(&format!("-{pid}/{tid}"));
                } else if o.pid {
                    head.push_str(&format!("-{pid}"));
                }
                texts.id(head)
            });
            let start = line_texts.len();
            line_texts.push(head);
            for &f in by_id[*stack as usize].iter().rev() {
                line_texts.extend_from_slice(tidied.of(f));
            }
            lines.push(StackLine {
                texts: start as u32..line_texts.len() as u32,
                n,
            });
        }
        let texts = texts.all();
        let keys = Keys::of(&texts, &line_texts, &lines);
        lines.sort_unstable_by(|a, b| keys.cmp(a, b));
        write_sorted(&lines, &keys, &line_texts, &texts, out)
    }

    /// Each stack gathered: its thread's name, its frame ids (of the
    /// export's frame table, leaf first) and what it weighs.
    pub(crate) fn each<'s>(&'s self, mut f: impl FnMut(&'s str, &'s [u32], u64)) {
        let by_id = self.stacks.by_id();
        for ((comm, _, _, stack), &n) in &self.counts {
            f(comm, by_id[*stack as usize], n);
        }
    }

    /// The lines [`Folded::write`] writes.
    pub(crate) fn lines(&self, o: &FoldOptions, frames: &[Named]) -> Vec<String> {
        let mut text = Vec::new();
        self.write(o, frames, &mut text)
            .expect("writing to memory does not fail");
        String::from_utf8_lossy(&text)
            .lines()
            .map(String::from)
            .collect()
    }
}

/// Writes sorted `lines` (their texts' ids in `line_texts`, of `texts`),
/// those whose `keys` are equal as one (names that tidy alike), each with
/// its count. Returns how many lines.
fn write_sorted(
    lines: &[StackLine],
    keys: &Keys,
    line_texts: &[u32],
    texts: &[&str],
    out: &mut dyn std::io::Write,
) -> std::io::Result<usize> {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    let mut written = 0;
    let mut i = 0;
    while i < lines.len() {
        // Two keys may fold to one line (names that tidy alike).
        let mut n = lines[i].n;
        let mut j = i + 1;
        while j < lines.len() && keys.cmp(&lines[j], &lines[i]).is_eq() {
            n = n.saturating_add(lines[j].n);
            j += 1;
        }
        let line = &line_texts[lines[i].range()];
        for (k, &t) in line.iter().enumerate() {
            if k > 0 {
                out.write_all(b";")?;
            }
            out.write_all(texts[t as usize].as_bytes())?;
        }
        writeln!(out, " {n}")?;
        written += 1;
        i = j;
    }
    out.flush()?;
    Ok(written)
}

/// A line of the output: where its texts are (in a buffer of all lines'),
/// and its count.
struct StackLine {
    texts: std::ops::Range<u32>,
    n: u64,
}

impl StackLine {
    fn range(&self) -> std::ops::Range<usize> {
        self.texts.start as usize..self.texts.end as usize
    }
}

/// What lines are sorted by: the texts they make (`head;f1;...;fn`, as
/// inferno sorts them), compared as numbers. Where no text holds a `;`, a
/// line's text splits into its texts at each `;`, so comparing two lines
/// comes down to comparing their first texts that differ, each as it ends
/// in the line: followed by `;`, or last. Each text gets a rank for either
/// ending, and a line's key is its texts' ranks (in a buffer beside the
/// lines' texts). Otherwise (a comm with a `;`) a line's key is its text.
enum Keys {
    Ranks(Vec<u32>),
    Texts(Vec<String>),
}

impl Keys {
    fn of(texts: &[&str], line_texts: &[u32], lines: &[StackLine]) -> Keys {
        if texts.iter().any(|t| t.contains(';')) {
            let mut keys = vec![String::new(); line_texts.len().max(1)];
            for l in lines {
                let parts: Vec<&str> = line_texts[l.range()]
                    .iter()
                    .map(|&t| texts[t as usize])
                    .collect();
                keys[l.texts.start as usize] = parts.join(";");
            }
            return Keys::Texts(keys);
        }
        // Each text twice: followed by `;` and last (`(id, last)`).
        let mut ends: Vec<(u32, bool)> = (0..texts.len() as u32)
            .flat_map(|t| [(t, false), (t, true)])
            .collect();
        let text = |&(t, last): &(u32, bool)| {
            let t = texts[t as usize].as_bytes().iter();
            t.chain(if last { &b""[..] } else { &b";"[..] })
        };
        ends.sort_unstable_by(|a, b| text(a).cmp(text(b)));
        let (mut on, mut last) = (vec![0; texts.len()], vec![0; texts.len()]);
        let mut rank = 0;
        for (i, e) in ends.iter().enumerate() {
            if i > 0 && text(e).ne(text(&ends[i - 1])) {
                rank += 1;
            }
            let r = if e.1 { &mut last } else { &mut on };
            r[e.0 as usize] = rank;
        }
        let mut keys: Vec<u32> = line_texts.iter().map(|&t| on[t as usize]).collect();
        for l in lines.iter().filter(|l| !l.texts.is_empty()) {
            let end = l.texts.end as usize - 1;
            keys[end] = last[line_texts[end] as usize];
        }
        Keys::Ranks(keys)
    }

    fn cmp(&self, a: &StackLine, b: &StackLine) -> std::cmp::Ordering {
        match self {
            Keys::Ranks(k) => k[a.range()].cmp(&k[b.range()]),
            Keys::Texts(k) => k[a.texts.start as usize].cmp(&k[b.texts.start as usize]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of `texts` ids, sorted by [`Keys`], as text.
    fn sorted_by_keys(texts: &[&str], lines: &[&[u32]]) -> Vec<String> {
        let mut line_texts = Vec::new();
        let mut ls: Vec<StackLine> = Vec::new();
        for l in lines {
            let start = line_texts.len() as u32;
            line_texts.extend_from_slice(l);
            ls.push(StackLine {
                texts: start..line_texts.len() as u32,
                n: 1,
            });
        }
        let keys = Keys::of(texts, &line_texts, &ls);
        ls.sort_by(|a, b| keys.cmp(a, b));
        let text = |l: &StackLine| {
            let parts: Vec<&str> = line_texts[l.range()]
                .iter()
                .map(|&t| texts[t as usize])
                .collect();
            parts.join(";")
        };
        ls.iter().map(text).collect()
    }

    #[test]
    fn lines_sort_as_their_text_does() {
        // Texts that are prefixes of others, followed by bytes below and
        // above `;` (0x3b): `-` is 0x2d, `_` 0x5f.
        let texts = ["a", "a-b", "a_b", "ab", "", "b", "a;"];
        let lines: Vec<Vec<u32>> = (0..200u32)
            .map(|i| {
                let n = 1 + (i * 7 % 4) as usize;
                (0..n).map(|k| (i * 31 + k as u32 * 17) % 6).collect()
            })
            .collect();
        let lines: Vec<&[u32]> = lines.iter().map(Vec::as_slice).collect();
        for texts in [&texts[..6], &texts[..]] {
            // The second set holds a `;`: lines are compared as text.
            let got = sorted_by_keys(texts, &lines);
            let mut want = got.clone();
            want.sort();
            assert_eq!(got, want);
        }
    }
}
