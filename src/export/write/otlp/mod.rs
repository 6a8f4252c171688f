//! OpenTelemetry profiles (OTLP, `opentelemetry.proto.profiles.v1development`,
//! the Collector's `service.profilesSupport` signal): an
//! `ExportProfilesServiceRequest` of the gathered stacks, as protobuf or
//! in the OTLP JSON mapping ([`json`]). The messages are the
//! `opentelemetry-proto` crate's (prost).
//!
//! One `Profile` per event exported (its sample type as pprof's: `cpu` /
//! `nanoseconds` for the clocks, `off-cpu` / `nanoseconds`, else the
//! event / `count`; `samples` / `count` with `--sample-counts`), each
//! sample a distinct (stack, thread) weighing what its folded line weighs,
//! with `process.pid`, `thread.id`, `thread.name` and
//! `process.executable.name` as its attributes; the profile's own
//! attribute `perf.event` names its event as perf prints it. The dictionary they share
//! ([`dict`]) holds each stack, location, function, mapping, string and
//! attribute once. A request can be kept under a size, split by profile
//! and by samples ([`Profiles::bounded`]), each part with the dictionary
//! of what it holds.

pub(crate) mod dict;
pub(crate) mod format;
pub(crate) mod json;

use std::ops::Range;
use std::sync::Arc;

use opentelemetry_proto::tonic::collector::profiles::v1development::ExportProfilesServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::profiles::v1development as pb;
use opentelemetry_proto::tonic::resource::v1::Resource;
use prost::Message;
use rustc_hash::FxHashMap;

use crate::export::name::frames::Named;
use crate::export::write::fold::{weight, FoldOptions};
use crate::export::write::sampled::Sampled;
use crate::export::write::stacks::StackIds;
use dict::Dict;

/// A distinct sample: its event's slot, its stack's id, its thread's
/// name, its process's name, pid, tid.
type Key = (u32, u32, Arc<str>, Arc<str>, u32, u32);

/// The samples gathered so far.
#[derive(Default)]
pub(crate) struct Otlp {
    stacks: StackIds,
    weights: FxHashMap<Key, u64>,
}

impl Otlp {
    /// Adds sample `s`, weighing what its folded line would (its period, 1
    /// with `--sample-counts`). A sample without a frame is left out, as
    /// folded lines leave it out.
    pub(crate) fn add(&mut self, o: &FoldOptions, s: &Sampled<'_>) {
        if s.ids.is_empty() {
            return;
        }
        let stack = self.stacks.id(s.ids);
        let key = (
            s.slot as u32,
            stack,
            s.comm.clone(),
            s.process.clone(),
            s.pid,
            s.tid,
        );
        let n = self.weights.entry(key).or_default();
        *n = n.saturating_add(weight(o, s.period));
    }

    /// The profiles, their frames named `frames`, saying `about`.
    pub(crate) fn finish<'f>(self, frames: &'f [Named<'f>], about: Described) -> Profiles<'f> {
        let mut by_slot: Vec<Vec<SampleRow>> = vec![Vec::new(); about.kinds.len().max(1)];
        for ((slot, stack, comm, exe, pid, tid), w) in self.weights {
            if let Some(rows) = by_slot.get_mut(slot as usize) {
                rows.push((stack, pid, tid, comm, exe, w));
            }
        }
        for rows in &mut by_slot {
            rows.sort_unstable();
        }
        let stacks = self.stacks.by_id().into_iter().map(Box::from).collect();
        Profiles {
            frames,
            stacks,
            by_slot,
            about,
        }
    }
}

/// One sample of a profile: stack id, pid, tid, thread name, process
/// name, weight.
type SampleRow = (u32, u32, u32, Arc<str>, Arc<str>, u64);

/// What one profile is of.
#[derive(Debug, Clone)]
pub(crate) struct ProfileKind {
    /// Its event, as perf prints it.
    pub(crate) event: String,
    /// Its sample type: (type, unit).
    pub(crate) value: (String, String),
    /// Its period's type and the period (0: unknown).
    pub(crate) period: ((String, String), i64),
}

/// What the request says of itself.
#[derive(Debug, Clone)]
pub(crate) struct Described {
    /// Each event's profile, by slot.
    pub(crate) kinds: Vec<ProfileKind>,
    /// Wall-clock time of the first sample, in ns since the Unix epoch.
    pub(crate) time_nanos: u64,
    /// From the first sample to the last, in ns.
    pub(crate) duration_nanos: u64,
    /// The resource's `host.name`.
    pub(crate) host: String,
    /// The resource's `service.name`; None: the process weighing most.
    pub(crate) service: Option<String>,
}

/// The finished profiles, ready to be cut into requests.
pub(crate) struct Profiles<'f> {
    frames: &'f [Named<'f>],
    /// Each stack's frame ids, leaf first, by id.
    stacks: Vec<Box<[u32]>>,
    by_slot: Vec<Vec<SampleRow>>,
    about: Described,
}

/// Part of a profile: its slot and a range of its rows.
type Part = (usize, Range<usize>);

impl Profiles<'_> {
    /// How many samples, over all profiles.
    pub(crate) fn samples(&self) -> usize {
        self.by_slot.iter().map(Vec::len).sum()
    }

    /// Whether no profile holds a sample.
    pub(crate) fn is_empty(&self) -> bool {
        self.samples() == 0
    }

    /// Every profile in one request.
    pub(crate) fn whole(&self) -> ExportProfilesServiceRequest {
        self.request(&self.all_parts())
    }

    fn all_parts(&self) -> Vec<Part> {
        (self.by_slot.iter().enumerate())
            .filter(|(_, rows)| !rows.is_empty())
            .map(|(slot, rows)| (slot, 0..rows.len()))
            .collect()
    }

    /// The requests, encoded, each at most `limit` bytes where a single
    /// sample allows: the whole, else a profile each, and a profile too
    /// large cut into halves of its samples (each a profile of the same
    /// type: what they weigh adds up as before).
    pub(crate) fn bounded(&self, limit: usize) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let whole = self.whole();
        if whole.encoded_len() <= limit {
            out.push(whole.encode_to_vec());
            return out;
        }
        let mut todo: Vec<Part> = self.all_parts();
        todo.reverse();
        while let Some((slot, rows)) = todo.pop() {
            let req = self.request(&[(slot, rows.clone())]);
            if req.encoded_len() <= limit || rows.len() <= 1 {
                out.push(req.encode_to_vec());
                continue;
            }
            let mid = rows.start + rows.len() / 2;
            todo.push((slot, mid..rows.end));
            todo.push((slot, rows.start..mid));
        }
        out
    }

    /// A request of `parts`, with the dictionary of what they hold.
    fn request(&self, parts: &[Part]) -> ExportProfilesServiceRequest {
        let mut dict = Dict::new(self.frames);
        let mut weigh: FxHashMap<Arc<str>, u64> = FxHashMap::default();
        let profiles = parts
            .iter()
            .map(|(slot, rows)| {
                let rows = &self.by_slot[*slot][rows.clone()];
                for r in rows {
                    *weigh.entry(r.4.clone()).or_default() += r.5;
                }
                self.profile(&mut dict, *slot, rows)
            })
            .collect();
        let service = self.about.service.clone().unwrap_or_else(|| {
            // The process weighing most, ties to the first name.
            let mut heavy: Vec<_> = weigh.into_iter().collect();
            heavy.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            heavy
                .first()
                .map_or("unknown_service".into(), |h| h.0.to_string())
        });
        ExportProfilesServiceRequest {
            resource_profiles: vec![pb::ResourceProfiles {
                resource: Some(Resource {
                    attributes: vec![
                        key_value("host.name", &self.about.host),
                        key_value("service.name", &service),
                    ],
                    ..Default::default()
                }),
                scope_profiles: vec![pb::ScopeProfiles {
                    scope: Some(InstrumentationScope {
                        name: "perfz".into(),
                        version: env!("CARGO_PKG_VERSION").into(),
                        ..Default::default()
                    }),
                    profiles,
                    schema_url: String::new(),
                }],
                schema_url: String::new(),
            }],
            dictionary: Some(dict.finish()),
        }
    }

    /// The profile of event `slot` holding `rows`.
    fn profile(&self, dict: &mut Dict<'_>, slot: usize, rows: &[SampleRow]) -> pb::Profile {
        let kind = self
            .about
            .kinds
            .get(slot)
            .cloned()
            .unwrap_or_else(|| ProfileKind {
                event: String::new(),
                value: ("samples".into(), "count".into()),
                period: (("samples".into(), "count".into()), 0),
            });
        let samples = rows
            .iter()
            .map(|(stack, pid, tid, comm, exe, w)| pb::Sample {
                stack_index: dict.stack(&self.stacks[*stack as usize]),
                attribute_indices: vec![
                    dict.int_attribute("process.pid", (*pid).into()),
                    dict.int_attribute("thread.id", (*tid).into()),
                    dict.str_attribute("thread.name", comm),
                    dict.str_attribute("process.executable.name", exe),
                ],
                link_index: 0,
                values: vec![i64::try_from(*w).unwrap_or(i64::MAX)],
                timestamps_unix_nano: Vec::new(),
            })
            .collect();
        pb::Profile {
            sample_type: Some(dict.value_type(&kind.value)),
            samples,
            time_unix_nano: self.about.time_nanos,
            duration_nano: self.about.duration_nanos,
            period_type: Some(dict.value_type(&kind.period.0)),
            period: kind.period.1,
            profile_id: profile_id(),
            attribute_indices: vec![dict.str_attribute("perf.event", &kind.event.as_str().into())],
            ..Default::default()
        }
    }
}

/// A resource attribute, a string.
fn key_value(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue {
            value: Some(any_value::Value::StringValue(value.into())),
        }),
        key_strindex: 0,
    }
}

/// 16 random bytes, not all zero (the spec's invalid id): std's
/// randomly keyed hasher, seeded by the OS, over a counter.
fn profile_id() -> Vec<u8> {
    use std::hash::{BuildHasher, Hasher};
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let s = std::collections::hash_map::RandomState::new();
    let mut id = Vec::with_capacity(16);
    for _ in 0..2 {
        let mut h = s.build_hasher();
        h.write_u64(N.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        id.extend_from_slice(&h.finish().to_le_bytes());
    }
    if id.iter().all(|&b| b == 0) {
        id[0] = 1;
    }
    id
}

/// The request, as protobuf.
pub(crate) fn write_proto(
    req: &ExportProfilesServiceRequest,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    out.write_all(&req.encode_to_vec())
}

/// What the profiles of `events` say of themselves: their sample types
/// (`samples` / `count` with `counts`, `--sample-counts`) and periods as
/// pprof's, the time span pprof's `p` says, the resource's names.
pub(crate) fn about(
    p: &crate::export::write::pprof::About,
    events: &[&crate::export::recording::events::EventSamples],
    counts: bool,
    host: String,
    service: Option<String>,
) -> Described {
    let samples = || ("samples".to_string(), "count".to_string());
    let kind = |e: &&crate::export::recording::events::EventSamples| {
        let (value, period) = crate::export::write::pprof::value_of(e);
        ProfileKind {
            event: e.0.clone(),
            value: if counts { samples() } else { value.clone() },
            period: (value, i64::try_from(period).unwrap_or(0)),
        }
    };
    let kinds = match events {
        [] => vec![ProfileKind {
            event: String::new(),
            value: samples(),
            period: (samples(), 0),
        }],
        _ => events.iter().map(kind).collect(),
    };
    Described {
        kinds,
        time_nanos: u64::try_from(p.time_nanos).unwrap_or(0),
        duration_nanos: u64::try_from(p.duration_nanos).unwrap_or(0),
        host,
        service,
    }
}

#[cfg(test)]
mod tests;
