//! What a record holds beyond its header's plain size: AUXTRACE's trace and
//! HEADER_TRACING_DATA's payload after it, COMPRESSED2's true size.

use super::{Endian, FormatError, RecordHeader, RecordStream, RecordType, MAX_AUXTRACE};
use crate::format::compressed2;

impl RecordStream {
    /// Reads what follows a record outside its header's size: the tracing
    /// data of HEADER_TRACING_DATA (12 bytes in perf before 4.x, 16 since),
    /// kept aside, and the AUX trace of AUXTRACE, kept in the record's bytes
    /// so that it travels with it.
    pub(super) fn payload_after(
        &mut self,
        h: RecordHeader,
        offset: u64,
    ) -> Result<(), FormatError> {
        let size = h.size as usize;
        if h.type_ == RecordType::AUXTRACE && size >= 16 {
            let n = self.endian.u64(self.outer[8..16].try_into().unwrap());
            if n > MAX_AUXTRACE || n % 8 != 0 {
                return Err(FormatError::invalid(
                    offset + 8,
                    format!("AUXTRACE of {n} bytes of trace"),
                ));
            }
            if let Some(end) = self.end {
                if offset + (size as u64) + n > end {
                    return Err(FormatError::Truncated {
                        offset,
                        what: format!("AUXTRACE trace of {n} bytes runs past the end of the data section at {end:#x}"),
                    });
                }
            }
            let got = self.fill(size, size + n as usize)?;
            if got < n as usize {
                return Err(FormatError::Truncated {
                    offset,
                    what: format!("AUXTRACE trace: {got} of {n} bytes"),
                });
            }
            self.pos += n;
        }
        if h.type_ == RecordType::HEADER_TRACING_DATA && (size == 12 || size == 16) {
            // Its payload follows the record (perf skips it the same way).
            let n = self.endian.u32(self.outer[8..12].try_into().unwrap()) as usize;
            if self.endian == Endian::Big || n > 64 << 20 {
                return Err(FormatError::invalid(
                    offset + 8,
                    format!("tracing data of {n} bytes"),
                ));
            }
            let got = self.fill(size, size + n)?;
            if got < n {
                return Err(FormatError::Truncated {
                    offset,
                    what: format!("tracing data: {got} of {n} bytes"),
                });
            }
            // The record stays its own bytes; its payload is kept aside.
            self.tracing_data = self.outer.split_off(size);
            self.pos += n as u64;
        }
        Ok(())
    }

    /// The true size of the COMPRESSED2 record whose header `h` is in
    /// `outer` (reading its data_size after it), written back into the
    /// header and data_size there: a record of perf's first COMPRESSED2
    /// writer reads as the record it meant to write ([`compressed2`]).
    pub(super) fn compressed2_size(
        &mut self,
        h: RecordHeader,
        offset: u64,
    ) -> Result<u16, FormatError> {
        let got = self.fill(8, compressed2::PREFIX)?;
        if got < 8 {
            return Err(FormatError::Truncated {
                offset,
                what: "COMPRESSED2 record without its data_size".into(),
            });
        }
        let data_size = self.endian.u64(self.outer[8..16].try_into().unwrap());
        let (extent, payload) =
            compressed2::extent(h.size as usize, data_size).ok_or_else(|| {
                FormatError::invalid(
                    offset,
                    format!(
                        "COMPRESSED2 record of size {} with data_size {data_size}: no record is that",
                        h.size
                    ),
                )
            })?;
        let extent16 = u16::try_from(extent).expect("an extent fits the u16 it came from");
        let (size_bytes, data_size_bytes) = match self.endian {
            Endian::Little => (extent16.to_le_bytes(), (payload as u64).to_le_bytes()),
            Endian::Big => (extent16.to_be_bytes(), (payload as u64).to_be_bytes()),
        };
        self.outer[6..8].copy_from_slice(&size_bytes);
        self.outer[8..16].copy_from_slice(&data_size_bytes);
        Ok(extent16)
    }
}
