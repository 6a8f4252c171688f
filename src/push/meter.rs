//! Copy accounting for the push path, as a type parameter: with [`NoMeter`]
//! every call is an empty inline function and the counting compiles away;
//! [`CopyMeter`] counts.
//!
//! The meter is the pusher's third type parameter (`Pusher<C, S, M>`), so a
//! session without `-v` or `--stats-json` has no counting code at all.
//! `CopyMeter` counts the bytes read from rings, memcpy'd by our code (a
//! sink says what it copied in what `write_raw`, `write_raw_edited` and
//! `write_record` return), fed to the codec, and handed to the output.
//! What a codec copies inside its library is outside the meter; the codec
//! declares it (`Codec::COPIES_INPUT`: streaming zstd's and lz4's windows)
//! and the `-v` summary says so. tests/dhat_copies.rs measures every path
//! under valgrind's DHAT and checks both the meter and the declared figures
//! (docs/BENCHMARKS.md, "Push paths").

/// Bytes moved by one push path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Copies {
    /// Bytes read out of ring buffers.
    pub ring_bytes: u64,
    /// Bytes our code memcpy'd (async buffers with `none`; the layered bench).
    pub memcpy_bytes: u64,
    /// Bytes fed to the codec.
    pub codec_in_bytes: u64,
    /// Bytes handed to the output (records, including plain ones).
    pub written_bytes: u64,
}

impl Copies {
    /// memcpy'd bytes per ring byte.
    pub fn copies_per_byte(&self) -> f64 {
        if self.ring_bytes == 0 {
            0.0
        } else {
            self.memcpy_bytes as f64 / self.ring_bytes as f64
        }
    }

    /// Two units' counts as one (either may not be counting).
    pub fn add(a: Option<Copies>, b: Option<Copies>) -> Option<Copies> {
        match (a, b) {
            (Some(a), Some(b)) => Some(Copies {
                ring_bytes: a.ring_bytes + b.ring_bytes,
                memcpy_bytes: a.memcpy_bytes + b.memcpy_bytes,
                codec_in_bytes: a.codec_in_bytes + b.codec_in_bytes,
                written_bytes: a.written_bytes + b.written_bytes,
            }),
            (a, b) => a.or(b),
        }
    }
}

/// Counts the bytes a push path moves; each call is a no-op by default.
pub trait Meter: Default {
    /// `n` bytes read out of a ring buffer.
    #[inline(always)]
    fn ring(&mut self, _n: usize) {}
    /// `n` bytes our code memcpy'd.
    #[inline(always)]
    fn copied(&mut self, _n: usize) {}
    /// `n` bytes fed to the codec.
    #[inline(always)]
    fn codec_in(&mut self, _n: usize) {}
    /// `n` bytes of records handed to the output.
    #[inline(always)]
    fn written(&mut self, _n: usize) {}
    /// The counts, if this meter keeps any.
    fn copies(&self) -> Option<Copies> {
        None
    }
}

/// Counts nothing, costs nothing.
#[derive(Default, Clone, Copy, Debug)]
pub struct NoMeter;

impl Meter for NoMeter {}

/// Counts every byte moved.
#[derive(Default, Clone, Copy, Debug)]
pub struct CopyMeter(pub Copies);

impl Meter for CopyMeter {
    #[inline(always)]
    fn ring(&mut self, n: usize) {
        self.0.ring_bytes += n as u64;
    }
    #[inline(always)]
    fn copied(&mut self, n: usize) {
        self.0.memcpy_bytes += n as u64;
    }
    #[inline(always)]
    fn codec_in(&mut self, n: usize) {
        self.0.codec_in_bytes += n as u64;
    }
    #[inline(always)]
    fn written(&mut self, n: usize) {
        self.0.written_bytes += n as u64;
    }
    fn copies(&self) -> Option<Copies> {
        Some(self.0)
    }
}
