//! Pipe mode: perf.data as a stream that is never patched (`-o -`).

use std::io::Write;

use super::write_all_vectored;
use crate::format::attr::AttrEntry;
use crate::format::feature::{feat, FeatureSet};
use crate::format::header::{MAGIC, PIPE_HEADER_SIZE};
use crate::format::record::{RecordHeader, RecordType};
use crate::format::FormatError;

/// A pipe-mode stream: 16-byte header, then HEADER_ATTR and HEADER_FEATURE
/// records, then everything else. Nothing is ever patched.
pub struct PipeWriter<W: Write> {
    w: W,
    written: u64,
}

impl<W: Write> PipeWriter<W> {
    /// Writes the header, one HEADER_ATTR per event and one HEADER_FEATURE per
    /// pipe-capable feature (COMPRESSED among them, so it precedes any
    /// COMPRESSED record, as perf 6.1 needs), and no end marker: perf 6.x
    /// ends the features with id 32, perf 7.x with 33 (its 32 is
    /// HEADER_CPU_DOMAIN_INFO, so perf 7's inject and report fail on 6.x's
    /// marker, and perf 6.1's report on 7.x's: "wrong feature ID: 33").
    /// Without one, perf 6.1, 6.12 and 7.3 all read the pipe, directly and
    /// after their `inject` (perf's own marker only ends `report
    /// --header-only` early).
    pub fn new(mut w: W, attrs: &[AttrEntry], features: &FeatureSet) -> Result<Self, FormatError> {
        w.write_all(&MAGIC.to_le_bytes())?;
        w.write_all(&PIPE_HEADER_SIZE.to_le_bytes())?;
        let mut pw = PipeWriter { w, written: 0 };
        for a in attrs {
            let attr_len = a.attr.raw.len().div_ceil(8) * 8;
            let size = 8 + attr_len + 8 * a.ids.len();
            let size = u16::try_from(size).map_err(|_| {
                FormatError::Unsupported(format!(
                    "an event with {} ids does not fit one HEADER_ATTR record",
                    a.ids.len()
                ))
            })?;
            let mut rec = RecordHeader {
                type_: RecordType::HEADER_ATTR,
                misc: 0,
                size,
            }
            .to_le()
            .to_vec();
            rec.extend_from_slice(&a.attr.raw);
            rec.resize(8 + attr_len, 0);
            for id in &a.ids {
                rec.extend_from_slice(&id.to_le_bytes());
            }
            pw.write_records(&rec)?;
        }
        for (&bit, payload) in &features.sections {
            if !feat::pipe_capable(bit) || 16 + payload.len() > u16::MAX as usize {
                continue;
            }
            pw.feature_record(bit, payload)?;
        }
        if let Some(t) = features.get(feat::TRACING_DATA) {
            // As perf's perf_event__synthesize_tracing_data: a 16-byte
            // record giving the padded size, then the data, then padding.
            let padded = t.len().div_ceil(8) * 8;
            let mut rec = RecordHeader {
                type_: RecordType::HEADER_TRACING_DATA,
                misc: 0,
                size: 16,
            }
            .to_le()
            .to_vec();
            rec.extend_from_slice(&(padded as u32).to_le_bytes());
            rec.extend_from_slice(&0u32.to_le_bytes());
            rec.extend_from_slice(t);
            rec.resize(16 + padded, 0);
            pw.write_records(&rec)?;
        }
        Ok(pw)
    }

    fn feature_record(&mut self, bit: u32, payload: &[u8]) -> std::io::Result<()> {
        let size = (16 + payload.len()) as u16;
        let mut rec = RecordHeader {
            type_: RecordType::HEADER_FEATURE,
            misc: 0,
            size,
        }
        .to_le()
        .to_vec();
        rec.extend_from_slice(&(bit as u64).to_le_bytes());
        rec.extend_from_slice(payload);
        self.write_records(&rec)
    }

    /// Flushes what is buffered and hands back the stream.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.w.flush()?;
        Ok(self.w)
    }
}

impl<W: Write> PipeWriter<W> {
    /// Appends bytes that are whole records.
    pub fn write_records(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.w.write_all(bytes)?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    /// Appends the concatenation of `parts` (the two slices of a wrapped
    /// ring region) with one `writev`.
    pub fn write_records_vectored(&mut self, parts: &[&[u8]]) -> std::io::Result<()> {
        write_all_vectored(&mut self.w, parts)?;
        self.written += parts.iter().map(|p| p.len() as u64).sum::<u64>();
        Ok(())
    }

    /// Bytes of records written so far.
    pub fn data_size(&self) -> u64 {
        self.written
    }

    /// Takes back the last `n` bytes counted: a region written in several
    /// calls failed part way (a later finish writes over them).
    pub fn forget(&mut self, n: u64) {
        self.written -= n.min(self.written);
    }
}
