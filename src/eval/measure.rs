//! Measuring one codec through the real push path.
//!
//! The real `Pusher` pushes into a null sink that builds records in its own
//! buffer exactly as the serial sink does; with `none` each push is copied
//! into a scratch buffer: the memcpy baseline.

use std::io;
use std::time::{Duration, Instant};

use perfz_codecs::{AnyDecoder, Codec, CodecSpec, CodecVisitor, Decoder, Input};

use super::null_sink::NullSink;
use super::{EvalError, Row};
use crate::format::record::{records, RecordHeader};
use crate::format::AttrEntry;
use crate::push::records::RECORD_MAX;
use crate::push::{Copies, CopyMeter, Meter, NoMeter, Pusher};
use crate::replay::pushes;
use crate::transform::StackCut;

/// Reads one byte of every cache line of `region`.
fn warm(region: Input<'_>) {
    let mut x = 0u8;
    for part in region.parts() {
        for line in part.chunks(64) {
            x ^= line[0];
        }
    }
    std::hint::black_box(x);
}

struct RunOut {
    /// Bytes given to the codec: the ring bytes less the unwritten stack
    /// bytes left out.
    codec_bytes: u64,
    secs: f64,
    written: u64,
    records: u64,
    kept: Option<Vec<u8>>,
    copies: Option<Copies>,
    state: usize,
    /// perf's rule holds for this codec: every record decodes to something
    /// (`Codec::BLOCK_ENDS_PER_RECORD`).
    block_ends: bool,
}

struct OneRun<'a> {
    stream: &'a [u8],
    push: usize,
    keep: bool,
    stack_cut: Option<&'a StackCut>,
}

impl OneRun<'_> {
    fn go<C: Codec, M: Meter>(&self, codec: C) -> io::Result<RunOut> {
        let sink = NullSink {
            buf: vec![0u8; RECORD_MAX].into_boxed_slice(),
            scratch: Vec::with_capacity(self.push + RECORD_MAX),
            keep: self.keep.then(Vec::new),
            written: 0,
        };
        let mut p = Pusher::<C, NullSink, M>::new(codec, sink);
        // As the recorder: pushes end without a flush where the codec can
        // hold (zstd), and what it holds is flushed at the end.
        p.set_hold(true);
        // As the recorder: unwritten stack bytes are left out (the walk
        // that finds them is timed too).
        let tail = self.stack_cut;
        let mut dropped = 0;
        let mut edits = Vec::new();
        // Where the replayed ring's pushes end is found before timing: the
        // recorder reads that from the ring's head, it does not walk the
        // records for it (the walk was a serial pass over every record
        // header, 17 % of a frame-pointer eval's time).
        let regions: Vec<Input<'_>> = pushes(self.stream, self.push).collect();
        let mut timed = Duration::ZERO;
        for &region in &regions {
            // The drain takes a region the kernel has just written: read
            // it once, untimed, so the push is timed on bytes in cache as
            // the recorder's are, not on a replay buffer far larger than
            // any cache.
            warm(region);
            let t = Instant::now();
            edits.clear();
            if let Some(t) = tail {
                dropped += t.edits(region, &mut edits).dropped;
            }
            p.push_edited(region, &edits)?;
            timed += t.elapsed();
        }
        let t = Instant::now();
        p.flush()?;
        let secs = (timed + t.elapsed()).as_secs_f64();
        let copies = p.meter.copies();
        let state = p.codec_state_size();
        let records = p.compressed_records();
        let sink = p.into_sink();
        Ok(RunOut {
            codec_bytes: self.stream.len() as u64 - dropped,
            secs,
            written: sink.written,
            records,
            kept: sink.keep,
            copies,
            state,
            block_ends: C::BLOCK_ENDS_PER_RECORD,
        })
    }
}

impl CodecVisitor for OneRun<'_> {
    type Output = io::Result<RunOut>;
    fn visit<C: Codec + Send + 'static>(self, codec: C) -> io::Result<RunOut> {
        // The verification run also counts copies; timed runs have no meter.
        if self.keep {
            self.go::<C, CopyMeter>(codec)
        } else {
            self.go::<C, NoMeter>(codec)
        }
    }
}

/// Why a run's records do not decode back to the stream.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error(transparent)]
    Record(#[from] crate::format::record::BadRecord),
    #[error(transparent)]
    Codec(#[from] perfz_codecs::Error),
    #[error("the record at byte {0} decodes to nothing")]
    Empty(usize),
    #[error("decoded {got} bytes, expected {want}; first difference at byte {at}")]
    Differs { got: usize, want: usize, at: usize },
}

/// Decodes the records a run kept back into the raw stream; with
/// `block_ends`, a record that decodes to nothing is an error (perf's rule).
fn decode(
    spec: &CodecSpec,
    block_ends: bool,
    kept: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), VerifyError> {
    out.clear();
    if *spec == CodecSpec::None {
        out.extend_from_slice(kept);
        return Ok(());
    }
    let mut dec = AnyDecoder::for_id(spec.id())?;
    let mut at = 0;
    for rec in records(kept) {
        let (_, bytes) = rec?;
        let n = dec.decompress(&bytes[RecordHeader::SIZE..], out, usize::MAX)?;
        if n == 0 && block_ends {
            return Err(VerifyError::Empty(at));
        }
        at += bytes.len();
    }
    Ok(())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Decodes the verified run's records (`kept`) and checks they are the
/// stream as it must come back; the buffer they were decoded into is kept
/// for the timed decodes.
fn verify_run(
    spec: &CodecSpec,
    stream: &[u8],
    cut: Option<(&StackCut, &[AttrEntry])>,
    block_ends: bool,
    kept: &[u8],
) -> Result<Vec<u8>, EvalError> {
    // What must come back: the stream, with unwritten stack bytes left
    // out — computed by the reader's sample parser (eval::oracle), not by
    // the cutter the push path ran.
    let edited;
    let want: &[u8] = match cut {
        Some((_, attrs)) => {
            edited = super::oracle::cut_stream(stream, attrs);
            &edited
        }
        None => stream,
    };
    let mut back = Vec::with_capacity(stream.len());
    let verify = |err| EvalError::Verify {
        spec: spec.to_string(),
        err,
    };
    decode(spec, block_ends, kept, &mut back).map_err(verify)?;
    if back != want {
        let at = back
            .iter()
            .zip(want)
            .position(|(a, b)| a != b)
            .unwrap_or(back.len().min(want.len()));
        return Err(verify(VerifyError::Differs {
            got: back.len(),
            want: want.len(),
            at,
        }));
    }
    Ok(back)
}

/// Compress speeds (MB/s of `mb` megabytes given to the codec) of timed
/// runs, until `min_time` has passed and at least three were made.
fn time_compress(
    spec: &CodecSpec,
    stream: &[u8],
    push: usize,
    stack_cut: Option<&StackCut>,
    min_time: Duration,
    mb: f64,
) -> Result<Vec<f64>, EvalError> {
    let io_err = |e: io::Error| EvalError::Push {
        spec: spec.to_string(),
        err: e,
    };
    let mut c_speeds = Vec::new();
    let start = Instant::now();
    while c_speeds.len() < 3 || start.elapsed() < min_time {
        let r = spec
            .visit(OneRun {
                stream,
                push,
                keep: false,
                stack_cut,
            })?
            .map_err(io_err)?;
        c_speeds.push(mb / r.secs.max(1e-9));
    }
    Ok(c_speeds)
}

/// Decompress speeds (MB/s of `mb` megabytes decoded) of the kept records
/// decoded into `back`, until half of `min_time` has passed and at least
/// three were made.
fn time_decompress(
    spec: &CodecSpec,
    block_ends: bool,
    kept: &[u8],
    back: &mut Vec<u8>,
    min_time: Duration,
    mb: f64,
) -> Result<Vec<f64>, EvalError> {
    let verify = |err| EvalError::Verify {
        spec: spec.to_string(),
        err,
    };
    let mut d_speeds = Vec::new();
    let start = Instant::now();
    while d_speeds.len() < 3 || start.elapsed() < min_time / 2 {
        let t = Instant::now();
        decode(spec, block_ends, kept, back).map_err(verify)?;
        d_speeds.push(mb / t.elapsed().as_secs_f64().max(1e-9));
    }
    Ok(d_speeds)
}

/// Runs `spec` over the stream: one verified run (also the warm-up), then timed
/// runs until `min_time` has passed and at least three were made.
pub fn measure(
    spec: &CodecSpec,
    stream: &[u8],
    push: usize,
    min_time: Duration,
    cut: Option<(&StackCut, &[AttrEntry])>,
) -> Result<Row, EvalError> {
    let stack_cut = cut.map(|(t, _)| t);
    if stream.is_empty() {
        return Err(EvalError::Empty);
    }
    let io_err = |e: io::Error| EvalError::Push {
        spec: spec.to_string(),
        err: e,
    };
    let first = spec
        .visit(OneRun {
            stream,
            push,
            keep: true,
            stack_cut,
        })?
        .map_err(io_err)?;
    let kept = first.kept.expect("kept");
    let mut back = verify_run(spec, stream, cut, first.block_ends, &kept)?;
    // Speeds per byte given to the codec; the ring figures follow from them.
    let mb = first.codec_bytes as f64 / 1e6;
    let ring_per_codec = stream.len() as f64 / first.codec_bytes.max(1) as f64;
    let c_speeds = time_compress(spec, stream, push, stack_cut, min_time, mb)?;
    let d_speeds = time_decompress(spec, first.block_ends, &kept, &mut back, min_time, mb)?;
    let best_c = c_speeds.iter().copied().fold(0.0, f64::max);
    let best_d = d_speeds.iter().copied().fold(0.0, f64::max);
    let copies = first.copies.unwrap_or_default();
    Ok(Row {
        spec: spec.to_string(),
        params: match spec {
            CodecSpec::Zstd(p) => p.describe(),
            _ => String::new(),
        },
        ratio: first.codec_bytes as f64 / first.written.max(1) as f64,
        ring_ratio: stream.len() as f64 / first.written.max(1) as f64,
        codec_bytes: first.codec_bytes,
        compressed_bytes: first.written,
        records: first.records,
        compress_mbs_best: best_c,
        compress_mbs_median: median(&mut c_speeds.clone()),
        decompress_mbs_best: best_d,
        decompress_mbs_median: median(&mut d_speeds.clone()),
        copies_per_byte: copies.copies_per_byte(),
        codec_state_bytes: first.state,
        ring_mbs_best: best_c * ring_per_codec,
        keeps_up_mbs: best_c * ring_per_codec,
        runs: c_speeds.len(),
        pareto: false,
    })
}
