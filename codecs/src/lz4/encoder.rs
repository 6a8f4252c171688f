use lz4_flex::block::{compress_into_with_table, get_maximum_output_size, CompressTable};

use crate::framing::{encode_units, UNIT_HEADER};
use crate::{Codec, CodecId, Error, Input};

/// lz4 block compression; one unit per slice of a push.
///
/// The hash table is allocated once here and cleared per block, so compressing
/// never allocates (lz4_flex's plain `compress_into` would allocate a table per call).
pub struct Lz4Codec {
    table: CompressTable,
}

impl Lz4Codec {
    pub fn new() -> Self {
        // The large (u32) table works for any input length; the small one would be
        // replaced — allocated — the first time a slice reaches 64 KiB.
        Lz4Codec {
            table: CompressTable::large(),
        }
    }
}

impl Default for Lz4Codec {
    fn default() -> Self {
        Self::new()
    }
}

impl Codec for Lz4Codec {
    const ID: CodecId = CodecId::LZ4;

    fn compress(&mut self, input: Input<'_>, dst: &mut [u8]) -> Result<usize, Error> {
        let need = self.bound(input.len());
        let table = &mut self.table;
        encode_units(input, dst, need, |part, out| {
            compress_into_with_table(part, out, table).map_err(|_| Error::DstTooSmall {
                need: get_maximum_output_size(part.len()),
                have: out.len(),
            })
        })
    }

    fn bound(&self, len: usize) -> usize {
        // f(n) = 20 + floor(1.1 n) per slice is superadditive up to 21 bytes:
        // f(a) + f(b) <= f(a + b) + 21, so 24 bytes of slack cover any split.
        2 * UNIT_HEADER + get_maximum_output_size(len) + 24
    }

    fn state_size(&self) -> usize {
        std::mem::size_of::<u32>() * 4096
    }
}
