//! COMPRESSED records decoded through the stream's one decoder.

use perfz_codecs::{AnyDecoder, Decoder};

use super::{
    CompressedInfo, FormatError, RecordHeader, RecordStream, RecordType, DECODE_MARGIN,
    MAX_MMAP_LEN,
};

impl RecordStream {
    /// Feeds `payload` (a COMPRESSED record's) to the stream's decoder and
    /// drops what it decodes: the decoder then holds the history a stream
    /// that goes on from another file needs (perf's broken `-z
    /// --switch-output` files).
    pub fn prime(&mut self, info: &CompressedInfo, payload: &[u8]) -> Result<(), FormatError> {
        let (dec, limit) = decoder_for(&mut self.decoder, Some(info), 0)?;
        let mut scratch = Vec::new();
        dec.decompress(payload, &mut scratch, *limit)
            .map_err(|err| FormatError::Codec { offset: 0, err })?;
        Ok(())
    }

    /// Decodes the COMPRESSED or COMPRESSED2 record of header `h` in
    /// `outer` into `inner`.
    pub(super) fn decode(
        &mut self,
        h: RecordHeader,
        codec: Option<&CompressedInfo>,
        offset: u64,
    ) -> Result<(), FormatError> {
        let payload = if h.type_ == RecordType::COMPRESSED {
            &self.outer[8..]
        } else {
            // COMPRESSED2: u64 data_size, data, zero padding to 8 bytes.
            let b = self
                .outer
                .get(8..16)
                .ok_or_else(|| FormatError::Truncated {
                    offset,
                    what: "COMPRESSED2 record without its data_size".into(),
                })?;
            let n = self.endian.u64(b.try_into().unwrap());
            if n > (self.outer.len() - 16) as u64 {
                return Err(FormatError::invalid(
                    offset,
                    format!("COMPRESSED2 data_size {n} exceeds the record"),
                ));
            }
            &self.outer[16..16 + n as usize]
        };
        let (dec, limit) = decoder_for(&mut self.decoder, codec, offset)?;
        dec.decompress(payload, &mut self.inner, *limit)
            .map_err(|err| FormatError::Codec { offset, err })?;
        Ok(())
    }
}

/// The stream's decoder, made at the first COMPRESSED record from the
/// file's HEADER_COMPRESSED.
fn decoder_for<'a>(
    slot: &'a mut Option<(AnyDecoder, usize)>,
    codec: Option<&CompressedInfo>,
    offset: u64,
) -> Result<&'a mut (AnyDecoder, usize), FormatError> {
    if slot.is_none() {
        let info = codec.ok_or_else(|| {
            FormatError::invalid(offset, "COMPRESSED record, but the file has no HEADER_COMPRESSED feature saying how it was compressed")
        })?;
        if info.mmap_len == 0 || info.mmap_len > MAX_MMAP_LEN {
            return Err(FormatError::invalid(
                offset,
                format!(
                    "HEADER_COMPRESSED declares mmap_len {} (perfz accepts 1..={MAX_MMAP_LEN}); the header is corrupt",
                    info.mmap_len
                ),
            ));
        }
        let dec = AnyDecoder::for_id(info.codec_id())
            .map_err(|err| FormatError::Codec { offset, err })?;
        *slot = Some((dec, info.mmap_len as usize + DECODE_MARGIN));
    }
    Ok(slot.as_mut().expect("set above"))
}
