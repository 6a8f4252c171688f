//! `perfz eval`: which codec for this workload? Replays a recording's ring
//! data through the real push path with each codec, the way lzbench and
//! `zstd -b` answer it for files: stream in memory, warm-up, repeated runs,
//! best and median, every round trip verified byte for byte. Only the pushes
//! are timed, each on a region read once just before it (the recorder's
//! drain takes bytes the kernel has just written, in cache); where the
//! replayed pushes end is found before timing.
//!
//! The stream is what the recording's rings held (`replay::ring_stream`).
//! Each codec's row comes from `measure`: one run with the copy meter whose
//! records must decode back to the stream byte for byte (else the row is an
//! error), then timed runs without the meter until `--min-time` has passed
//! (three at least), then timed decodes. Speeds are of raw trace in MB
//! (10^6 bytes). A row no other row beats on both ratio and speed is marked
//! Pareto-optimal; the recommendation is the best ratio whose push path
//! sustains `HEADROOM` (4) × the recording's own trace rate (raw bytes over
//! the span of its sample timestamps).

mod measure;
mod null_sink;
mod oracle;
mod report;

use std::path::Path;
use std::time::Duration;

use perfz_codecs::CodecSpec;
use serde::Serialize;

pub use measure::measure;
pub use report::{render_csv, render_markdown, render_svg, render_table};

use crate::format::{FormatError, PerfReader, RecordType};

/// The specs `perfz eval` compares unless told otherwise: from the memcpy
/// baseline to zstd's stronger levels.
pub const DEFAULT_SPECS: &str =
    "none,lz4,snappy,zstd:-5,zstd:1,zstd:1,oneshot,zstd:3,zstd:6,zstd:9";

/// Splits a `--codecs` list. Specs contain commas themselves (`zstd:1,long`),
/// so an item that is an option (`long`, `oneshot`, `wlog=N`) joins the spec
/// before it.
pub fn parse_spec_list(s: &str) -> Result<Vec<CodecSpec>, perfz_codecs::Error> {
    let mut items: Vec<String> = Vec::new();
    for tok in s.split(',').filter(|t| !t.is_empty()) {
        let is_option = perfz_codecs::table::is_option_token(tok);
        match items.last_mut() {
            Some(last) if is_option => {
                last.push(',');
                last.push_str(tok);
            }
            _ => items.push(tok.to_string()),
        }
    }
    items.iter().map(|i| i.parse()).collect()
}

/// One codec's results.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The codec spec measured, in canonical form (`zstd:3`).
    pub spec: String,
    /// The codec's parameters in effect (zstd: level and knobs).
    pub params: String,
    /// The codec's own ratio: bytes given to the codec / bytes written
    /// (COMPRESSED records with their headers). The same bytes a CLI
    /// (`zstd -b`) would be given.
    pub ratio: f64,
    /// Raw ring bytes / bytes written: the codec and the stack cut together.
    pub ring_ratio: f64,
    /// Bytes given to the codec (the ring bytes less the unwritten stack
    /// bytes the cut leaves out).
    pub codec_bytes: u64,
    /// Bytes written: COMPRESSED records, headers included.
    pub compressed_bytes: u64,
    /// COMPRESSED records written (0 for `none`): each adds an 8-byte header.
    pub records: u64,
    /// Compression through the push path, MB/s (10^6 bytes) of the bytes
    /// given to the codec.
    pub compress_mbs_best: f64,
    /// Median compression speed over the runs, MB/s of bytes given to the codec.
    pub compress_mbs_median: f64,
    /// Best decompression speed, MB/s of bytes decoded.
    pub decompress_mbs_best: f64,
    /// Median decompression speed, MB/s of bytes decoded.
    pub decompress_mbs_median: f64,
    /// Bytes our code memcpy'd per raw byte on this path (serial sink).
    pub copies_per_byte: f64,
    /// Bytes of the codec's state (contexts, windows, tables).
    pub codec_state_bytes: usize,
    /// The same best speed in ring bytes per second (MB/s): the cut bytes
    /// cost only their walk.
    pub ring_mbs_best: f64,
    /// The raw trace rate one core can sustain with this codec (MB/s): the
    /// best speed of the push path in ring bytes.
    pub keeps_up_mbs: f64,
    /// Timed compression runs (at least 3, more until `--min-time` passed).
    pub runs: usize,
    /// No other row is at least as good on both ratio and compression speed.
    pub pareto: bool,
}

/// The whole evaluation.
#[derive(Clone, Debug, Serialize)]
pub struct Evaluation {
    /// The recording evaluated.
    pub input: String,
    /// Bytes its rings held: the stream replayed through each codec.
    pub raw_bytes: u64,
    /// Bytes given to the codecs: the ring bytes less the unwritten dwarf
    /// stack bytes the cut leaves out (equal to raw_bytes without a cut).
    pub codec_bytes: u64,
    /// Bytes per push replayed (`--push-size`, at least `--mmap-flush`).
    pub push_bytes: usize,
    /// The recording's own trace rate (raw ring bytes per second of samples),
    /// when the file has timestamps.
    pub trace_mbs: Option<f64>,
    /// One row per codec spec, in the order given.
    pub rows: Vec<Row>,
    /// The codec to use and why, when one keeps up with the trace rate.
    pub recommendation: Option<String>,
}

/// What `perfz eval` measures and how.
pub struct Options {
    /// The codecs to compare (`--codecs`).
    pub specs: Vec<CodecSpec>,
    /// Bytes per push, as one ring drain would take them (`--push-size`).
    pub push_size: usize,
    /// perf's `--mmap-flush`: the smallest push, in bytes.
    pub mmap_flush: usize,
    /// Keep timing each codec at least this long (and for 3 runs at least).
    pub min_time: Duration,
    /// Where the recording's samples leave unwritten stack bytes (left out,
    /// as in `perfz record`), with the attrs the round trip's oracle reads.
    pub stack_cut: Option<crate::transform::StackCut>,
    /// The recording's attrs: how its samples are laid out.
    pub attrs: Vec<crate::format::AttrEntry>,
}

/// Headroom asked of a codec over the recording's trace rate before it is
/// recommended: bursts run well above the average.
pub const HEADROOM: f64 = 4.0;

/// A recording as eval reads it.
pub struct Loaded {
    /// What its rings held.
    pub stream: Vec<u8>,
    /// Its trace rate, MB/s, from the span of its sample times.
    pub rate: Option<f64>,
    /// Where its samples keep unwritten stack bytes (dwarf recordings).
    pub stack_cut: Option<crate::transform::StackCut>,
    /// Why its dwarf stacks cannot be cut, where they cannot.
    pub stack_note: Option<String>,
    /// Its attrs, as read to the end (pipe-mode attrs are records too).
    pub attrs: Vec<crate::format::AttrEntry>,
}

/// The ring bytes of `path`, its trace rate and its stack layout.
pub fn load(path: &Path) -> Result<Loaded, FormatError> {
    let stream = crate::replay::ring_stream(path)?;
    let (mut first, mut last) = (u64::MAX, 0u64);
    let mut r = PerfReader::open(path)?;
    while let Some((rec, meta)) = r.next_record()? {
        if rec.header.type_ == RecordType::SAMPLE {
            if let Ok(Some(s)) = meta.parse_sample(&rec) {
                if let Some(t) = s.time {
                    first = first.min(t);
                    last = last.max(t);
                }
            }
        }
    }
    // Read to the end: a pipe-mode file's attrs are records too.
    let attrs = r.meta.attrs.clone();
    let (stack_cut, stack_note) = match crate::transform::StackCut::for_attrs(&attrs) {
        Ok(t) => (t, None),
        Err(why) => (
            None,
            Some(format!("dwarf stacks are measured whole: {why}")),
        ),
    };
    let rate = (last > first).then(|| stream.len() as f64 / ((last - first) as f64 / 1e9) / 1e6);
    Ok(Loaded {
        stream,
        rate,
        stack_cut,
        stack_note,
        attrs,
    })
}

/// Evaluates `stream` with every spec; `progress` is told (done, total, spec).
pub fn evaluate(
    input: &str,
    stream: &[u8],
    trace_mbs: Option<f64>,
    o: &Options,
    mut progress: impl FnMut(usize, usize, &str),
) -> Result<Evaluation, EvalError> {
    let push = o.push_size.max(o.mmap_flush).max(1);
    let mut rows = Vec::new();
    for (i, spec) in o.specs.iter().enumerate() {
        progress(i, o.specs.len(), &spec.to_string());
        let cut = o.stack_cut.as_ref().map(|t| (t, &o.attrs[..]));
        rows.push(measure(spec, stream, push, o.min_time, cut)?);
    }
    progress(o.specs.len(), o.specs.len(), "");
    mark_pareto(&mut rows);
    let recommendation = recommend(&rows, trace_mbs);
    Ok(Evaluation {
        input: input.to_string(),
        raw_bytes: stream.len() as u64,
        codec_bytes: rows.first().map_or(stream.len() as u64, |r| r.codec_bytes),
        push_bytes: push,
        trace_mbs,
        rows,
        recommendation,
    })
}

/// Why an evaluation stopped.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A codec's output did not decode back to its input.
    #[error("{spec}: the round trip failed: {err}")]
    Verify {
        /// The codec spec.
        spec: String,
        /// What went wrong: a bad record, a decoding error or different bytes.
        err: measure::VerifyError,
    },
    /// Writing through the push path failed.
    #[error("{spec}: the push path failed: {err}")]
    Push {
        /// The codec spec.
        spec: String,
        /// The error of the push path.
        err: std::io::Error,
    },
    /// A codec could not be built (e.g. left out of this build) or failed.
    #[error(transparent)]
    Codec(#[from] perfz_codecs::Error),
    /// The recording holds no ring data.
    #[error("the recording holds no ring data to evaluate")]
    Empty,
}

/// A row is Pareto-optimal when no other row is at least as good on both ratio
/// and compress speed and better on one.
pub fn mark_pareto(rows: &mut [Row]) {
    let pts: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (r.ratio, r.compress_mbs_best))
        .collect();
    for (i, r) in rows.iter_mut().enumerate() {
        let (a, s) = pts[i];
        r.pareto = !pts
            .iter()
            .enumerate()
            .any(|(j, &(a2, s2))| j != i && a2 >= a && s2 >= s && (a2 > a || s2 > s));
    }
}

/// The best ratio among codecs whose push path sustains HEADROOM × the trace
/// rate (or, without a rate, the best ratio at ≥ 100 MB/s).
pub fn recommend(rows: &[Row], trace_mbs: Option<f64>) -> Option<String> {
    let need = trace_mbs.map_or(100.0, |r| r * HEADROOM);
    let best = rows
        .iter()
        .filter(|r| r.keeps_up_mbs >= need && r.spec != "none")
        .max_by(|a, b| a.ratio.total_cmp(&b.ratio))?;
    Some(match trace_mbs {
        Some(rate) => format!(
            "{}: ratio {:.2}, keeps up with {:.0} MB/s, {:.0}x this recording's {:.2} MB/s",
            best.spec,
            best.ratio,
            best.keeps_up_mbs,
            best.keeps_up_mbs / rate.max(1e-9),
            rate
        ),
        None => format!(
            "{}: ratio {:.2} at {:.0} MB/s (no timestamps to measure the trace rate)",
            best.spec, best.ratio, best.keeps_up_mbs
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_lists_with_commas_inside_specs() {
        let v = parse_spec_list("none,lz4,zstd:1,wlog=23,long,zstd:3,oneshot,snappy").unwrap();
        let s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        assert_eq!(
            s,
            [
                "none",
                "lz4",
                "zstd:1,wlog=23,long",
                "zstd:3,oneshot",
                "snappy"
            ]
        );
        assert!(parse_spec_list(DEFAULT_SPECS).unwrap().len() >= 8);
        assert!(parse_spec_list("none,gzip").is_err());
    }

    fn row(spec: &str, ratio: f64, speed: f64) -> Row {
        Row {
            spec: spec.into(),
            params: String::new(),
            ratio,
            ring_ratio: ratio,
            codec_bytes: 0,
            compressed_bytes: 0,
            records: 0,
            compress_mbs_best: speed,
            compress_mbs_median: speed,
            ring_mbs_best: speed,
            decompress_mbs_best: 0.0,
            decompress_mbs_median: 0.0,
            copies_per_byte: 0.0,
            codec_state_bytes: 0,
            keeps_up_mbs: speed,
            runs: 1,
            pareto: false,
        }
    }

    #[test]
    fn pareto_and_recommendation() {
        let mut rows = vec![
            row("none", 1.0, 5000.0),
            row("a", 5.0, 800.0),
            row("b", 4.0, 700.0),
            row("c", 8.0, 90.0),
        ];
        mark_pareto(&mut rows);
        let p: Vec<bool> = rows.iter().map(|r| r.pareto).collect();
        assert_eq!(p, [true, true, false, true]);
        assert!(
            recommend(&rows, Some(30.0)).unwrap().starts_with("a:"),
            "c is too slow for 4 × 30 MB/s"
        );
        assert!(recommend(&rows, Some(10.0)).unwrap().starts_with("c:"));
    }
}
