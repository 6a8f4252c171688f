use snap::raw::{max_compress_len, Encoder};

use crate::framing::{encode_chunks, CHUNK_HEADER};
use crate::{Codec, CodecId, Error, Input};

/// snappy raw compression; one chunk per slice of a push.
pub struct SnappyCodec {
    enc: Encoder,
}

impl SnappyCodec {
    /// An encoder whose hash table is already allocated (by compressing one
    /// 64 KiB block), so that `compress` never allocates.
    pub fn new() -> Self {
        let mut enc = Encoder::new();
        // snap allocates its large hash table lazily, on the first block of
        // 64 KiB; compress one such block now so that `compress` never allocates.
        let warm = vec![0u8; 1 << 16];
        let mut out = vec![0u8; max_compress_len(warm.len())];
        enc.compress(&warm, &mut out)
            .expect("snappy compresses 64 KiB into its own bound");
        SnappyCodec { enc }
    }
}

impl Default for SnappyCodec {
    fn default() -> Self {
        Self::new()
    }
}

impl Codec for SnappyCodec {
    const ID: CodecId = CodecId::SNAPPY;

    fn compress(&mut self, input: Input<'_>, dst: &mut [u8]) -> Result<usize, Error> {
        let need = self.bound(input.len());
        let enc = &mut self.enc;
        encode_chunks(input, dst, need, |part, out| {
            enc.compress(part, out).map_err(|_| Error::DstTooSmall {
                need: max_compress_len(part.len()),
                have: out.len(),
            })
        })
    }

    fn bound(&self, len: usize) -> usize {
        // max_compress_len(n) = 32 + n + n/6 per slice; two slices cost at most
        // 33 more than one slice of the sum.
        2 * CHUNK_HEADER + max_compress_len(len) + 40
    }

    fn state_size(&self) -> usize {
        // snap's tables: 1 Ki u16 on the stack of the encoder, 16 Ki u16 on the heap.
        2 * (1 << 10) + 2 * (1 << 14)
    }
}
