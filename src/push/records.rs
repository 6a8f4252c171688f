//! Where the compressor's records go and what they add up to: the
//! [`Records`] a push is cut into, the [`Tally`] of what was written, and
//! the limits every COMPRESSED record keeps (format notes 5.6).

use perfz_codecs::MAX_RECORD_PAYLOAD;

use crate::format::record::RecordHeader;

/// The `mmap_len` we declare: perf's default ring mapping (129 pages). No
/// record we write decodes to more (chunks: at most `Codec::max_input(65527)`
/// bytes; output-driven records: `cutter::RECORD_RAW_LIMIT` and what was
/// held), and perf 6.1's decoder wants room to spare (format notes 5.6).
pub const DECLARED_MMAP_LEN: u32 = 129 * 4096;

/// The mmap_len an output of codec `id` declares when its records decoded
/// to at most `largest` bytes: perf's ring size at least, and the codec's
/// own bound where its records may decode to more (lz4,
/// [`CodecId::declared_decode_min`](perfz_codecs::CodecId::declared_decode_min)),
/// so a file cut off after a checkpoint, or announced before its records (a
/// pipe), reads whole.
pub fn declared_mmap_len(id: perfz_codecs::CodecId, largest: usize) -> u32 {
    DECLARED_MMAP_LEN
        .max(largest.min(u32::MAX as usize) as u32)
        .max(id.declared_decode_min())
}

/// Largest record the compressor writes (header + payload).
pub const RECORD_MAX: usize = RecordHeader::SIZE + MAX_RECORD_PAYLOAD;

/// Where records are cut into: the buffer the next record is built in and
/// the commit of a finished one. The recorder's sink lends its own write
/// buffer (the codec's output is the only copy); conversions use the
/// compressor's.
pub trait Records {
    /// What a failed `buf` or `commit` returns; a codec error converts into it.
    type Error: From<perfz_codecs::Error>;
    /// The buffer of the record being built ([`RECORD_MAX`] bytes at
    /// least; the same one until [`commit`](Records::commit)).
    fn buf(&mut self) -> Result<&mut [u8], Self::Error>;
    /// Its first `n` bytes are a finished record.
    fn commit(&mut self, n: usize) -> Result<(), Self::Error>;
    /// A finished record built elsewhere (the output-driven window).
    fn emit(&mut self, rec: &[u8]) -> Result<(), Self::Error> {
        self.buf()?[..rec.len()].copy_from_slice(rec);
        self.commit(rec.len())
    }
    /// The codec took `n` raw bytes (for a copy meter).
    fn took(&mut self, _n: usize) {}
}

/// What a compressor wrote: the numbers HEADER_COMPRESSED and the summary
/// are made of.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    /// Raw bytes fed in (perf's "original" size).
    pub raw_bytes: u64,
    /// Bytes of records written, headers included (perf's "compressed" size).
    pub(crate) out_bytes: u64,
    /// COMPRESSED records written.
    pub records: u64,
    /// The most raw bytes any one record decodes to.
    pub(crate) max_record_raw: usize,
}

impl Tally {
    /// One record of `size` bytes written that decodes to `raw` bytes.
    pub fn record(&mut self, size: usize, raw: usize) {
        self.out_bytes += size as u64;
        self.records += 1;
        self.max_record_raw = self.max_record_raw.max(raw);
    }
}
