//! `Pusher<C, S, M>`: one push = one ring drain, compressed straight from the
//! ring into the sink's buffer (the compressing memcpy).

use std::io;

use perfz_codecs::{Codec, CodecId, Input};

use super::meter::{Meter, NoMeter};
use super::Sink;
use crate::format::compress::Compressor;
use crate::format::CompressedInfo;

/// Counters of one push path.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct PushStats {
    /// Drains pushed.
    pub pushes: u64,
    /// Bytes read out of rings.
    pub ring_bytes: u64,
}

pub struct Pusher<C: Codec, S: Sink, M: Meter = NoMeter> {
    comp: Compressor<C>,
    sink: S,
    pub meter: M,
    pub stats: PushStats,
}

impl<C: Codec, S: Sink, M: Meter> Pusher<C, S, M> {
    pub fn new(codec: C, sink: S) -> Self {
        Pusher {
            comp: Compressor::new(codec),
            sink,
            meter: M::default(),
            stats: PushStats::default(),
        }
    }

    /// True when the codec is `none`: raw records, no COMPRESSED records.
    pub const RAW: bool = C::ID.0 == CodecId::NONE.0;

    /// Pushes one ring region. When this returns, the region's bytes are out of
    /// the ring (compressed into the sink's buffer, or written or copied raw),
    /// so the caller may hand the space back to the kernel.
    pub fn push(&mut self, region: Input<'_>) -> io::Result<()> {
        if region.is_empty() {
            return Ok(());
        }
        self.stats.pushes += 1;
        self.stats.ring_bytes += region.len() as u64;
        self.meter.ring(region.len());
        if Self::RAW {
            let copied = self.sink.write_raw(region)?;
            self.meter.copied(copied);
            self.meter.written(region.len());
        } else {
            let mut rest = region;
            while !rest.is_empty() {
                let (now, later) = self.comp.split(rest);
                self.meter.codec_in(now.len());
                let n = self.comp.record_into(now, self.sink.record_buf()?)?;
                self.sink.commit(n)?;
                self.meter.written(n);
                rest = later;
            }
        }
        self.sink.end_push()
    }

    pub fn write_plain(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.meter.written(bytes.len());
        self.sink.write_plain(bytes)
    }

    pub fn sink(&self) -> &S {
        &self.sink
    }

    pub fn sink_mut(&mut self) -> &mut S {
        &mut self.sink
    }

    /// HEADER_COMPRESSED for this session, or `None` for raw output.
    pub fn compressed_info(&self) -> Option<CompressedInfo> {
        (!Self::RAW).then(|| self.comp.info())
    }

    /// Bytes of COMPRESSED records written (headers included).
    pub fn compressed_bytes(&self) -> u64 {
        self.comp.out_bytes
    }

    /// Bytes the codec's state holds.
    pub fn codec_state_size(&self) -> usize {
        self.comp.codec().state_size()
    }

    pub fn into_sink(self) -> S {
        self.sink
    }
}
