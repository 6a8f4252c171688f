//! Profiles in speedscope's file format (its file-format-schema.json):
//! one "sampled" profile per thread, its samples in time order with their
//! weights (the folded export's: nanoseconds of CPU for cpu-clock and
//! task-clock, off-CPU nanoseconds for `offcpu-time`, else the period),
//! and one table of frames shared by all, named as the folded lines name
//! them (the same tidying, [`crate::export::write::tidy`]). speedscope's "Time Order"
//! view lays a thread's samples out as the recording took them.
//!
//! Memory: a distinct stack is held once (its frame ids); a sample is its
//! time, weight and stack id (24 bytes), kept until the end to be sorted.

use std::io::Write;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::export::name::frames::Named;
use crate::export::write::fold::{weight, FoldOptions};
use crate::export::write::format::{Diff, Ending, Exports, Format};
use crate::export::write::sampled::Sampled;
use crate::export::write::stacks::StackIds;
use crate::export::write::tidy::{tidy_frames, Tidied};
use crate::export::ExportOptions;
use crate::format::FormatError;

/// One sample of a thread: when, what it weighs, and its stack's id.
#[derive(Clone, Copy)]
struct Timed {
    time: u64,
    weight: u64,
    stack: u32,
}

/// A thread's samples and the name it had at its latest one.
struct ThreadSamples {
    comm: Arc<str>,
    latest: u64,
    samples: Vec<Timed>,
}

/// A speedscope file being gathered, sample by sample.
#[derive(Default)]
pub(crate) struct Speedscope {
    stacks: StackIds,
    threads: FxHashMap<(u32, u32), ThreadSamples>,
}

/// What the file says of itself: its name and the weights' unit
/// (`nanoseconds`, or `none` for counts).
pub(crate) struct Heading<'a> {
    /// The file's name (and the flame graph's title).
    pub(crate) name: &'a str,
    /// The weights' unit.
    pub(crate) unit: &'a str,
}

impl Format for Speedscope {
    const NAME: &'static str = "speedscope";
    const HELP: &'static str = "speedscope's JSON (speedscope.app): a profile per thread, its samples in time order with their weights";

    fn new(_: &ExportOptions) -> Speedscope {
        Speedscope::default()
    }

    fn add_sample(&mut self, fold: &FoldOptions, _: &[Named<'_>], s: &Sampled<'_>) {
        self.add(fold, s);
    }

    fn write_to(self, end: &Ending<'_>, out: &mut dyn Write) -> Result<usize, FormatError> {
        let title = end.title();
        let heading = Heading {
            name: &title,
            unit: end.unit,
        };
        Ok(self.write(&end.o.fold, end.named, &heading, out)?)
    }

    fn diff(_: &mut Diff<'_, impl Exports>, _: &mut dyn Write) -> Result<usize, FormatError> {
        Err(FormatError::Unsupported(
            "--diff writes folded lines, svg or pprof, not speedscope (speedscope compares \
             two files side by side: export each)"
                .into(),
        ))
    }
}

impl Speedscope {
    /// Adds sample `s` (its thread, its time, its stack's frame ids),
    /// weighing what the folded export weighs it. A sample without a frame
    /// is left out, as the folded export leaves it out.
    pub(crate) fn add(&mut self, o: &FoldOptions, s: &Sampled<'_>) {
        let Sampled {
            comm,
            pid,
            tid,
            ids,
            time,
            period,
            ..
        } = *s;
        if ids.is_empty() {
            return;
        }
        let stack = self.stacks.id(ids);
        let t = self
            .threads
            .entry((pid, tid))
            .or_insert_with(|| ThreadSamples {
                comm: comm.clone(),
                latest: time,
                samples: Vec::new(),
            });
        if time >= t.latest && !Arc::ptr_eq(&t.comm, comm) {
            t.comm = comm.clone();
        }
        t.latest = t.latest.max(time);
        t.samples.push(Timed {
            time,
            weight: weight(o, period),
            stack,
        });
    }

    /// Writes the file: the shared frames, then a profile per thread (by
    /// pid and tid), its samples sorted by time (as read where times are
    /// equal); the heaviest thread is the one speedscope opens on.
    /// Returns how many distinct stacks.
    pub(crate) fn write(
        self,
        o: &FoldOptions,
        frames: &[Named<'_>],
        heading: &Heading<'_>,
        out: &mut dyn Write,
    ) -> std::io::Result<usize> {
        let (tidied, texts) = tidy_frames(o.annotate_kernel, false, frames);
        let stacks = Rendered::of(&self.stacks, &tidied)?;
        let mut threads: Vec<_> = self.threads.into_iter().collect();
        threads.sort_unstable_by_key(|(who, _)| *who);
        let heaviest = (0..threads.len())
            .max_by_key(|&i| (total(&threads[i].1), std::cmp::Reverse(i)))
            .unwrap_or(0);
        let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
        out.write_all(b"{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",")?;
        write!(out, "\"exporter\":\"perfz {}\",", env!("CARGO_PKG_VERSION"))?;
        write!(out, "\"name\":{},", json(heading.name))?;
        write!(out, "\"activeProfileIndex\":{heaviest},")?;
        out.write_all(b"\"shared\":{\"frames\":[")?;
        for (i, t) in texts.all().iter().enumerate() {
            let sep = if i > 0 { "," } else { "" };
            write!(out, "{sep}{{\"name\":{}}}", json(t))?;
        }
        out.write_all(b"]},\"profiles\":[")?;
        for (i, ((pid, tid), mut t)) in threads.into_iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            t.samples.sort_by_key(|s| s.time);
            let name = format!("{} ({pid}/{tid})", t.comm);
            write_profile(&mut out, &name, heading.unit, &t, &stacks)?;
        }
        out.write_all(b"]}\n")?;
        out.flush()?;
        Ok(stacks.spans.len())
    }
}

/// A thread's samples' weights, added up.
fn total(t: &ThreadSamples) -> u64 {
    t.samples
        .iter()
        .map(|s| s.weight)
        .fold(0u64, u64::saturating_add)
}

/// Each distinct stack once as its JSON array of frame ids, root first.
struct Rendered {
    bytes: Vec<u8>,
    /// Where each stack's array is in `bytes`, by stack id.
    spans: Vec<std::ops::Range<usize>>,
}

impl Rendered {
    /// The arrays of `stacks`, their frames' texts as `tidied` says.
    fn of(stacks: &StackIds, tidied: &Tidied) -> std::io::Result<Rendered> {
        let (mut bytes, mut spans) = (Vec::new(), Vec::with_capacity(stacks.len()));
        for ids in stacks.by_id() {
            let start = bytes.len();
            bytes.push(b'[');
            let texts = ids.iter().rev().flat_map(|&f| tidied.of(f));
            for (k, t) in texts.enumerate() {
                if k > 0 {
                    bytes.push(b',');
                }
                write!(bytes, "{t}")?;
            }
            bytes.push(b']');
            spans.push(start..bytes.len());
        }
        Ok(Rendered { bytes, spans })
    }

    /// Stack `id`'s array.
    fn of_stack(&self, id: u32) -> &[u8] {
        &self.bytes[self.spans[id as usize].clone()]
    }
}

/// One thread's "sampled" profile named `name`, its weights in `unit`:
/// its samples (in the order they are in) as `stacks` renders them.
fn write_profile(
    out: &mut impl Write,
    name: &str,
    unit: &str,
    t: &ThreadSamples,
    stacks: &Rendered,
) -> std::io::Result<()> {
    write!(
        out,
        "{{\"type\":\"sampled\",\"name\":{},\"unit\":\"{}\",\"startValue\":0,\"endValue\":{},\"samples\":[",
        json(name),
        unit,
        total(t)
    )?;
    for (k, s) in t.samples.iter().enumerate() {
        if k > 0 {
            out.write_all(b",")?;
        }
        out.write_all(stacks.of_stack(s.stack))?;
    }
    out.write_all(b"],\"weights\":[")?;
    for (k, s) in t.samples.iter().enumerate() {
        let sep = if k > 0 { "," } else { "" };
        write!(out, "{sep}{}", s.weight)?;
    }
    out.write_all(b"]}")
}

/// `s` as a JSON string.
fn json(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(name: &str) -> Named<'static> {
        Named {
            ip: 0x1000,
            funcs: vec![Arc::from(name)],
            map: None,
            module: None,
            kernel: false,
        }
    }

    /// A sample of thread `tid` of `pid` named `comm` at `time`.
    fn at<'a>(
        comm: &'a Arc<str>,
        pid: u32,
        tid: u32,
        ids: &'a [u32],
        time: u64,
        period: Option<u64>,
    ) -> Sampled<'a> {
        Sampled {
            comm,
            process: comm,
            pid,
            tid,
            ids,
            slot: 0,
            time,
            period,
        }
    }

    #[test]
    fn a_profile_a_thread_its_samples_in_time_order_root_first() {
        let o = FoldOptions::default();
        let frames = [frame("main"), frame("work(int)"), frame("leaf")];
        let (a, b): (Arc<str>, Arc<str>) = (Arc::from("a"), Arc::from("b b"));
        let mut s = Speedscope::default();
        // Frame ids leaf first; thread 7 read out of order, one sample
        // without a frame left out.
        s.add(&o, &at(&a, 7, 7, &[2, 1, 0], 30, Some(5)));
        s.add(&o, &at(&a, 7, 7, &[1, 0], 10, Some(3)));
        s.add(&o, &at(&a, 7, 7, &[], 20, Some(100)));
        s.add(&o, &at(&b, 7, 8, &[0], 15, Some(4)));
        let mut out = Vec::new();
        let heading = Heading {
            name: "t",
            unit: "nanoseconds",
        };
        assert_eq!(s.write(&o, &frames, &heading, &mut out).unwrap(), 3);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let names: Vec<&str> = v["shared"]["frames"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap())
            .collect();
        let named = |stack: &serde_json::Value| -> Vec<&str> {
            let ids = stack.as_array().unwrap();
            ids.iter()
                .map(|i| names[i.as_u64().unwrap() as usize])
                .collect()
        };
        let p = &v["profiles"][0];
        assert_eq!(p["name"], "a (7/7)");
        assert_eq!(named(&p["samples"][0]), ["main", "work"]);
        assert_eq!(named(&p["samples"][1]), ["main", "work", "leaf"]);
        assert_eq!(p["weights"], serde_json::json!([3, 5]));
        assert_eq!(p["endValue"], 8);
        assert_eq!(v["profiles"][1]["name"], "b b (7/8)");
        assert_eq!(v["activeProfileIndex"], 0);
    }
}
