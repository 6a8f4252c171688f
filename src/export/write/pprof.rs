//! Profiles in pprof's format (google/pprof's profile.proto, gzipped), as
//! `go tool pprof`, Pyroscope, Parca and the cloud profilers read them.
//! The messages are declared in pprof_proto.rs.
//!
//! Each distinct (stack, thread) is one sample with a value per sample
//! type: the count of samples and, per event exported, the sum of its
//! periods (nanoseconds of CPU for the clock events, off-CPU nanoseconds
//! for `offcpu-time`, else the event's own count). Frames become locations
//! (one per frame of the export's table: an address of a mapping), with
//! a line per function there (inlined ones first); mappings carry the
//! file's path and build id.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::export::name::frames::Named;
use crate::export::recording::events::{is_clock, EventSamples, Several};
use crate::export::recording::process::Mapping as Map;
use crate::export::write::fold::FoldOptions;
use crate::export::write::format::{Diff, Ending, Exports, Format};
use crate::export::write::pprof_diff;
use crate::export::write::pprof_proto::{
    Function, Label, Location, Profile, ProfileLine, ProfileMapping, ProfileSample, ValueType,
};
use crate::export::write::sampled::Sampled;
use crate::export::ExportOptions;
use crate::format::attr::OFF_CPU_NAME;
use crate::format::FormatError;

/// What the profile says of itself.
pub(crate) struct About {
    /// The values after the count, an event each: `("cpu", "nanoseconds")`
    /// for clock events, `("off-cpu", "nanoseconds")`, else `(event,
    /// "count")`.
    pub(crate) values: Vec<(String, String)>,
    /// The sampling period in the second value's unit (0: unknown).
    pub(crate) period: i64,
    /// Wall-clock time of the first sample, in ns since the Unix epoch.
    pub(crate) time_nanos: i64,
    /// From the first sample to the last, in ns.
    pub(crate) duration_nanos: i64,
    /// Notes naming the recording.
    pub(crate) comments: Vec<String>,
}

type MapKey = (Arc<str>, Option<Arc<[u8]>>, u64, u64, u64);

/// A profile being built, sample by sample.
#[derive(Default)]
pub(crate) struct ProfileBuilder {
    strings: HashMap<String, i64>,
    table: Vec<String>,
    mappings: HashMap<MapKey, u64>,
    mapping: Vec<ProfileMapping>,
    functions: HashMap<(Arc<str>, i64), u64>,
    function: Vec<Function>,
    /// Each frame's location id (0: none yet).
    frame_locations: Vec<u64>,
    location: Vec<Location>,
    samples: HashMap<(Vec<u64>, i64, u32, u32), Vec<i64>>,
}

impl Format for ProfileBuilder {
    const NAME: &'static str = "pprof";
    const HELP: &'static str = "A gzipped pprof profile (go tool pprof, Pyroscope, Parca, cloud profilers): one event; choose it with -e when there are several";
    const BINARY: Option<&'static str> = Some(
        "a pprof profile is binary: give -o FILE (e.g. -o profile.pb.gz), or redirect the output",
    );
    const SEVERAL_EVENTS: Several = Several::Refused("a pprof profile");
    const NAMES_AS_IT_GOES: bool = true;

    fn new(_: &ExportOptions) -> ProfileBuilder {
        ProfileBuilder::new()
    }

    fn add_sample(&mut self, _: &FoldOptions, named: &[Named<'_>], s: &Sampled<'_>) {
        self.add(named, s);
    }

    fn write_to(
        self,
        end: &Ending<'_>,
        out: &mut dyn std::io::Write,
    ) -> Result<usize, FormatError> {
        let p = self.finish(about(end.inputs, end.chosen, end.span.0, end.span.1));
        write(&p, out)?;
        Ok(p.sample.len())
    }

    /// The new profile with the base's samples negated, as `go tool pprof
    /// -diff_base` merges them ([`pprof_diff`]).
    fn diff(
        d: &mut Diff<'_, impl Exports>,
        out: &mut dyn std::io::Write,
    ) -> Result<usize, FormatError> {
        let (b, n) = d.each::<ProfileBuilder>()?;
        let p = pprof_diff::merge(
            pprof_diff::decode(&n)?,
            pprof_diff::decode(&b)?,
            d.normalize,
        )?;
        write(&p, out)?;
        Ok(p.sample.len())
    }
}

impl ProfileBuilder {
    /// An empty profile whose string table holds "" at index 0.
    pub(crate) fn new() -> ProfileBuilder {
        let mut b = ProfileBuilder::default();
        b.string(""); // string_table[0] is "" (profile.proto)
        b
    }

    fn string(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.strings.get(s) {
            return i;
        }
        let i = self.table.len() as i64;
        self.table.push(s.to_string());
        self.strings.insert(s.to_string(), i);
        i
    }

    fn mapping_id(&mut self, m: &Map) -> u64 {
        let key = (m.path.clone(), m.build_id.clone(), m.start, m.end, m.pgoff);
        if let Some(&id) = self.mappings.get(&key) {
            return id;
        }
        let id = self.mapping.len() as u64 + 1;
        let filename = self.string(&m.path);
        let build_id = match &m.build_id {
            Some(b) => self.string(&crate::synth::build_id::hex(b)),
            None => 0,
        };
        self.mapping.push(ProfileMapping {
            id,
            memory_start: m.start,
            memory_limit: m.end,
            file_offset: m.pgoff,
            filename,
            build_id,
            has_functions: true,
            has_inline_frames: false,
        });
        self.mappings.insert(key, id);
        id
    }

    fn function_id(&mut self, name: &Arc<str>, file: i64) -> u64 {
        if let Some(&id) = self.functions.get(&(name.clone(), file)) {
            return id;
        }
        let id = self.function.len() as u64 + 1;
        // The name as perf prints it; the symbol as the binary has it.
        let n = self.string(&crate::export::name::demangle::demangle(name));
        let raw = self.string(name);
        self.function.push(Function {
            id,
            name: n,
            system_name: raw,
            filename: file,
        });
        self.functions.insert((name.clone(), file), id);
        id
    }

    /// The location of frame `id` of `frames` (made on first use).
    fn location_id(&mut self, frames: &[Named<'_>], id: u32) -> u64 {
        let i = id as usize;
        if self.frame_locations.len() <= i {
            self.frame_locations.resize(frames.len().max(i + 1), 0);
        }
        if self.frame_locations[i] != 0 {
            return self.frame_locations[i];
        }
        let f = &frames[i];
        let mapping_id = f.map.map_or(0, |m| self.mapping_id(m));
        let module = f
            .map
            .map(|m| &*m.path)
            .or(f.module.as_deref())
            .unwrap_or("");
        let file = self.string(module);
        let line = f
            .funcs
            .iter()
            .map(|name| ProfileLine {
                function_id: self.function_id(name, file),
                line: 0,
            })
            .collect();
        let loc = self.location.len() as u64 + 1;
        self.location.push(Location {
            id: loc,
            mapping_id,
            address: f.ip,
            line,
        });
        self.frame_locations[i] = loc;
        loc
    }

    /// Adds sample `s`, whose stack's frame ids are of `frames`, weighing
    /// its period (1 where it has none) in the value of its event's slot.
    pub(crate) fn add(&mut self, frames: &[Named<'_>], s: &Sampled<'_>) {
        let Sampled {
            comm,
            pid,
            tid,
            ids,
            slot,
            ..
        } = *s;
        let period = s.period.unwrap_or(1);
        let locs: Vec<u64> = ids.iter().map(|&id| self.location_id(frames, id)).collect();
        let comm = self.string(comm);
        let v = self.samples.entry((locs, comm, pid, tid)).or_default();
        if v.len() < slot + 2 {
            v.resize(slot + 2, 0);
        }
        v[0] += 1;
        v[slot + 1] = v[slot + 1].saturating_add(i64::try_from(period).unwrap_or(i64::MAX));
    }

    /// The profile, with what it says of itself.
    pub(crate) fn finish(mut self, about: About) -> Profile {
        let samples_t = ValueType {
            r#type: self.string("samples"),
            unit: self.string("count"),
        };
        let values: Vec<ValueType> = about
            .values
            .iter()
            .map(|(t, u)| ValueType {
                r#type: self.string(t),
                unit: self.string(u),
            })
            .collect();
        let value_t = values.first().copied().unwrap_or(samples_t);
        let (k_comm, k_pid, k_tid) = (
            self.string("thread"),
            self.string("pid"),
            self.string("tid"),
        );
        let comment = about.comments.iter().map(|c| self.string(c)).collect();
        let samples = std::mem::take(&mut self.samples);
        let sample = labelled(samples, k_comm, k_pid, k_tid, 1 + values.len());
        self.program_mapping_first(&sample);
        Profile {
            sample_type: std::iter::once(samples_t).chain(values).collect(),
            sample,
            mapping: self.mapping,
            location: self.location,
            function: self.function,
            string_table: self.table,
            time_nanos: about.time_nanos,
            duration_nanos: about.duration_nanos,
            period_type: Some(value_t),
            period: about.period,
            comment,
            default_sample_type: value_t.r#type,
        }
    }

    /// The mappings ordered by the samples whose leaf is in them, most
    /// first: pprof takes the first mapping for the program (ids stay;
    /// only the order changes).
    fn program_mapping_first(&mut self, sample: &[ProfileSample]) {
        let mut weight: HashMap<u64, i64> = HashMap::new();
        for x in sample {
            let leaf = x
                .location_id
                .first()
                .and_then(|&l| self.location.get(l as usize - 1));
            *weight.entry(leaf.map_or(0, |l| l.mapping_id)).or_default() += x.value[0];
        }
        self.mapping
            .sort_by_key(|m| std::cmp::Reverse(weight.get(&m.id).copied().unwrap_or(0)));
    }
}

/// The profile's samples, sorted: each (stack, thread) with its `values`
/// values and its thread as labels (`k_comm`, `k_pid`, `k_tid`: the label
/// keys' strings).
fn labelled(
    samples: HashMap<(Vec<u64>, i64, u32, u32), Vec<i64>>,
    k_comm: i64,
    k_pid: i64,
    k_tid: i64,
    values: usize,
) -> Vec<ProfileSample> {
    let mut samples: Vec<_> = samples.into_iter().collect();
    samples.sort();
    samples
        .into_iter()
        .map(|((location_id, comm, pid, tid), mut v)| ProfileSample {
            location_id,
            value: {
                v.resize(values, 0);
                v
            },
            label: vec![
                Label {
                    key: k_comm,
                    str: comm,
                    num: 0,
                },
                Label {
                    key: k_pid,
                    str: 0,
                    num: pid.into(),
                },
                Label {
                    key: k_tid,
                    str: 0,
                    num: tid.into(),
                },
            ],
        })
        .collect()
}

/// What a pprof profile says of itself: its second value, period, time
/// span and comments naming the recording.
pub(crate) fn about(inputs: &[PathBuf], events: &[&EventSamples], first: u64, last: u64) -> About {
    let duration = last.saturating_sub(first);
    let (values, periods): (Vec<(String, String)>, Vec<u64>) = match events {
        [] => (vec![("events".into(), "count".into())], vec![0]),
        _ => events.iter().map(|e| value_of(e)).unzip(),
    };
    let period = periods[0];
    // The wall-clock time of the first sample: the last input's
    // modification time (the recording's end) less the samples' span.
    let end = std::fs::metadata(inputs.last().expect("an input"))
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64);
    let mut comments = vec![format!(
        "perfz export of {}",
        inputs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )];
    for (name, _, n) in events {
        comments.push(format!("event {name}: {n} samples"));
    }
    About {
        values,
        period: i64::try_from(period).unwrap_or(0),
        time_nanos: end.saturating_sub(duration as i64),
        duration_nanos: duration as i64,
        comments,
    }
}

/// Event `e`'s value, (type, unit): `("cpu", "nanoseconds")` for the
/// clocks, `("off-cpu", "nanoseconds")`, else `(event, "count")`; and its
/// sampling period in that unit (0: unknown, as with a frequency for
/// other than the clocks).
pub(crate) fn value_of((name, a, _): &EventSamples) -> ((String, String), u64) {
    let freq = a.flags() & (1 << 10) != 0;
    match name.as_str() {
        OFF_CPU_NAME => (("off-cpu".into(), "nanoseconds".into()), 0),
        _ if is_clock(a) => {
            let period = match (freq, a.sample_period()) {
                (true, f) if f > 0 => 1_000_000_000 / f,
                (false, p) => p,
                _ => 0,
            };
            (("cpu".into(), "nanoseconds".into()), period)
        }
        _ => (
            (name.clone(), "count".into()),
            if freq { 0 } else { a.sample_period() },
        ),
    }
}

/// The profile, encoded and gzipped (as pprof files are).
pub(crate) fn write(p: &Profile, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    use prost::Message;
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::default());
    gz.write_all(&p.encode_to_vec())?;
    gz.finish()?;
    Ok(())
}
