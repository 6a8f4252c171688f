use std::io::{BufRead, Read};

use lz4_flex::block::decompress_into;
use lz4_flex::frame::FrameDecoder;

use crate::framing::decode_chunks;
use crate::{Decoder, Error};

/// Decodes perfz's first lz4 format ([`CodecId::LZ4_CHUNKS_V1`](crate::CodecId::LZ4_CHUNKS_V1)):
/// independent block chunks. Stateless: every chunk stands alone.
#[derive(Debug, Default)]
pub struct Lz4UnitsDecoder;

impl Lz4UnitsDecoder {
    /// A decoder; it holds no state.
    pub fn new() -> Self {
        Lz4UnitsDecoder
    }
}

impl Decoder for Lz4UnitsDecoder {
    fn decompress(&mut self, src: &[u8], dst: &mut Vec<u8>, limit: usize) -> Result<usize, Error> {
        decode_chunks("lz4", src, dst, limit, |chunk, out| {
            decompress_into(chunk, out).map_err(|e| e.to_string())
        })
    }
}

/// The frame bytes given so far and not yet read by the frame decoder; it
/// is shown only those before `ready` (whole frame headers and blocks).
#[derive(Debug, Default)]
struct Feed {
    buf: Vec<u8>,
    pos: usize,
    ready: usize,
}

impl Read for Feed {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let end = self.ready.max(self.pos);
        let n = out.len().min(end - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Decodes the second lz4 format ([`CodecId::LZ4_LINKED_CHUNKS`](crate::CodecId::LZ4_LINKED_CHUNKS)):
/// one lz4 frame stream, linked 64 KiB blocks, cut into chunks at push
/// boundaries. Keeps the frame decoder (and its 64 KiB window) between
/// calls: chunks decode in order. A frame's end starts a new frame
/// decoder (see [`Lz4Decoder`]).
pub struct Lz4LinkedUnitsDecoder {
    dec: FrameDecoder<Feed>,
}

impl Lz4LinkedUnitsDecoder {
    /// A decoder at the start of the stream (no frame read yet).
    pub fn new() -> Self {
        Lz4LinkedUnitsDecoder {
            dec: FrameDecoder::new(Feed::default()),
        }
    }
}

impl Default for Lz4LinkedUnitsDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder for Lz4LinkedUnitsDecoder {
    fn decompress(&mut self, src: &[u8], dst: &mut Vec<u8>, limit: usize) -> Result<usize, Error> {
        let dec = &mut self.dec;
        decode_chunks("lz4", src, dst, limit, |chunk, out| {
            let feed = dec.get_mut();
            feed.buf.drain(..feed.pos);
            feed.pos = 0;
            feed.buf.extend_from_slice(chunk);
            // A chunk ends on a block end: all of it may be read.
            feed.ready = feed.buf.len();
            let mut got = 0;
            // A frame's end mark reads as 0 bytes once; the next frame
            // follows it.
            let mut ends = 0;
            while got < out.len() {
                match dec.read(&mut out[got..]) {
                    Ok(0) => {
                        ends += 1;
                        let f = dec.get_ref();
                        if ends > 1 || f.pos == f.buf.len() {
                            return Err(format!(
                                "the chunk ends after {got} of its {} bytes",
                                out.len()
                            ));
                        }
                        // A frame's end (not an empty block): the next
                        // frame gets a frame decoder of its own.
                        if f.buf[f.pos..].starts_with(&LZ4_MAGIC.to_le_bytes()) {
                            *dec = FrameDecoder::new(std::mem::take(dec.get_mut()));
                        }
                    }
                    Ok(n) => {
                        got += n;
                        ends = 0;
                    }
                    Err(e) => return Err(e.to_string()),
                }
            }
            Ok(got)
        })
    }
}

const LZ4_MAGIC: u32 = 0x184D_2204;
/// lz4's largest block (4 MiB): a block header claiming more is corrupt.
const MAX_BLOCK: usize = 4 << 20;
/// Output is taken from the frame decoder in steps of at most this much.
const STEP: usize = 128 * 1024;

/// Decodes [`Lz4Codec`](crate::Lz4Codec)'s stream: COMPRESSED payloads are
/// consecutive pieces of one lz4 frame stream (frames end where a
/// flight-recorder segment ends). Bytes are kept until a frame header or a
/// block is whole, then the frame decoder (and its 64 KiB window) reads it:
/// a payload may decode to nothing (a block's start) or to several blocks.
///
/// Every frame gets a frame decoder of its own: lz4_flex's keeps the
/// buffers of the frame before, sized for its block size, and asserts that
/// they fit the next (a stream whose frames differ in block size panicked
/// in a debug build).
pub struct Lz4Decoder {
    dec: FrameDecoder<Feed>,
    /// Where the scan for whole frame parts stands in `Feed::buf`.
    at: usize,
    /// The open frame's FLG byte (None between frames).
    flags: Option<u8>,
    /// The scan stopped after a frame's end mark: once the frame decoder
    /// has read it, the next frame goes to a new one.
    ended: bool,
}

impl Lz4Decoder {
    /// A decoder at the start of the stream, between frames.
    pub fn new() -> Self {
        Lz4Decoder {
            dec: FrameDecoder::new(Feed::default()),
            at: 0,
            flags: None,
            ended: false,
        }
    }

    /// Moves `ready` past every whole frame header, block and end mark,
    /// up to the first frame's end.
    fn scan(&mut self) -> Result<(), Error> {
        let bad = |what: String| Error::Corrupt { codec: "lz4", what };
        let feed = self.dec.get_mut();
        while !self.ended {
            let rest = &feed.buf[self.at..];
            let need = match self.flags {
                None => {
                    if rest.len() < 6 {
                        return Ok(());
                    }
                    let magic = u32::from_le_bytes(rest[..4].try_into().unwrap());
                    if magic != LZ4_MAGIC {
                        return Err(bad(format!("not an lz4 frame (magic {magic:#x})")));
                    }
                    let flg = rest[4];
                    let len = 7
                        + if flg & 0x08 != 0 { 8 } else { 0 }
                        + if flg & 0x01 != 0 { 4 } else { 0 };
                    if rest.len() < len {
                        return Ok(());
                    }
                    self.flags = Some(flg);
                    len
                }
                Some(flg) => {
                    if rest.len() < 4 {
                        return Ok(());
                    }
                    let word = u32::from_le_bytes(rest[..4].try_into().unwrap());
                    if word == 0 {
                        let len = 4 + if flg & 0x04 != 0 { 4 } else { 0 };
                        if rest.len() < len {
                            return Ok(());
                        }
                        self.flags = None;
                        self.ended = true;
                        len
                    } else {
                        let size = (word & 0x7FFF_FFFF) as usize;
                        if size > MAX_BLOCK {
                            return Err(bad(format!("a block of {size} bytes")));
                        }
                        let len = 4 + size + if flg & 0x10 != 0 { 4 } else { 0 };
                        if rest.len() < len {
                            return Ok(());
                        }
                        len
                    }
                }
            };
            self.at += need;
            feed.ready = self.at;
        }
        Ok(())
    }

    /// After a frame's end: a new frame decoder over the same input, and
    /// the scan goes on into the next frame.
    fn next_frame(&mut self) -> Result<(), Error> {
        self.dec = FrameDecoder::new(std::mem::take(self.dec.get_mut()));
        self.ended = false;
        self.scan()
    }

    /// Drops what the frame decoder has read and appends `src` to its input.
    #[inline]
    fn take_input(&mut self, src: &[u8]) {
        let feed = self.dec.get_mut();
        let gone = feed.pos;
        if gone > 0 {
            feed.buf.drain(..gone);
            feed.pos = 0;
            feed.ready -= gone;
            self.at -= gone;
        }
        feed.buf.extend_from_slice(src);
    }
}

impl Default for Lz4Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Lz4Decoder {
    /// Appends what the input holds, whole blocks, to `dst` (which held
    /// `start` bytes before this call): at most `limit` bytes.
    fn decode(&mut self, dst: &mut Vec<u8>, start: usize, limit: usize) -> Result<(), Error> {
        let corrupt = |what: String| Error::Corrupt { codec: "lz4", what };
        self.scan()?;
        // A frame's end mark reads as 0 bytes once; the next frame follows.
        let mut zeros = 0;
        loop {
            let produced = dst.len() - start;
            let room = limit.saturating_add(1).saturating_sub(produced).min(STEP);
            // Straight from the frame decoder's block buffer: nothing is
            // zeroed first, and a call that finds no whole block costs
            // nothing.
            let block = self.dec.fill_buf().map_err(|e| corrupt(e.to_string()))?;
            let got = block.len().min(room);
            dst.extend_from_slice(&block[..got]);
            self.dec.consume(got);
            if dst.len() - start > limit {
                return Err(Error::OutputLimit { limit });
            }
            if got > 0 {
                zeros = 0;
                continue;
            }
            let feed = self.dec.get_ref();
            if feed.pos >= feed.ready {
                if !self.ended {
                    return Ok(());
                }
                self.next_frame()?;
                zeros = 0;
                continue;
            }
            zeros += 1;
            if zeros > 1 {
                return Err(corrupt("the frame decoder made no progress".into()));
            }
        }
    }
}

impl Decoder for Lz4Decoder {
    fn decompress(&mut self, src: &[u8], dst: &mut Vec<u8>, limit: usize) -> Result<usize, Error> {
        self.take_input(src);
        let start = dst.len();
        match self.decode(dst, start, limit) {
            Ok(()) => Ok(dst.len() - start),
            Err(e) => {
                dst.truncate(start);
                Err(e)
            }
        }
    }
}
