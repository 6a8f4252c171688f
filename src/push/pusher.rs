//! `Pusher<C, S>`: one push = one ring drain, compressed straight from the ring
//! into the sink's buffer (the compressing memcpy).

use std::io;

use perfz_codecs::{Codec, CodecId, Input};

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

pub struct Pusher<C: Codec, S: Sink> {
    comp: Compressor<C>,
    sink: S,
    pub stats: PushStats,
}

impl<C: Codec, S: Sink> Pusher<C, S> {
    pub fn new(codec: C, sink: S) -> Self {
        Pusher {
            comp: Compressor::new(codec),
            sink,
            stats: PushStats::default(),
        }
    }

    /// True when the codec is `none`: raw records, no COMPRESSED records.
    pub const RAW: bool = C::ID.0 == CodecId::NONE.0;

    /// Pushes one ring region. When this returns, the region's bytes are out of
    /// the ring (compressed into the sink's buffer and written, or written
    /// raw), so the caller may hand the space back to the kernel.
    pub fn push(&mut self, region: Input<'_>) -> io::Result<()> {
        if region.is_empty() {
            return Ok(());
        }
        self.stats.pushes += 1;
        self.stats.ring_bytes += region.len() as u64;
        if Self::RAW {
            return self.sink.write_raw(region);
        }
        let max_in = self.comp.max_input();
        let mut rest = region;
        while !rest.is_empty() {
            let (now, later) = rest.split_at(max_in);
            let n = self.comp.record_into(now, self.sink.record_buf())?;
            self.sink.commit(n)?;
            rest = later;
        }
        Ok(())
    }

    pub fn write_plain(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.sink.write_plain(bytes)
    }

    pub fn sink(&self) -> &S {
        &self.sink
    }

    pub fn sink_mut(&mut self) -> &mut S {
        &mut self.sink
    }

    /// HEADER_COMPRESSED for this session, or `None` for raw output.
    pub fn compressed_info(&self, level: i32) -> Option<CompressedInfo> {
        (!Self::RAW).then(|| self.comp.info(level))
    }

    /// Bytes of COMPRESSED records written (headers included).
    pub fn compressed_bytes(&self) -> u64 {
        self.comp.out_bytes
    }

    pub fn into_sink(self) -> S {
        self.sink
    }
}
