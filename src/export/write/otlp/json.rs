//! A request in the OTLP JSON mapping (OTLP/HTTP's `application/json`):
//! the protobuf JSON mapping's camelCase names, with OTLP's own rules on
//! top, as the specification's "JSON Protobuf Encoding" says: ids
//! (`profileId`) in hex, not base64; enums as integers (the profiles
//! messages have none); and, from the protobuf mapping, 64-bit integers as
//! decimal strings. The crate's serde derives give the names and the hex;
//! the 64-bit fields it writes as numbers are turned into strings here.

use opentelemetry_proto::tonic::collector::profiles::v1development::ExportProfilesServiceRequest;
use serde_json::Value;

use crate::format::FormatError;

/// The fields of the request's messages that are 64-bit integers
/// (profiles.proto, common.proto), by their JSON names.
const WIDE: &[&str] = &[
    "timeUnixNano",
    "durationNano",
    "period",
    "values",
    "timestampsUnixNano",
    "memoryStart",
    "memoryLimit",
    "fileOffset",
    "address",
    "line",
    "column",
    "startLine",
    "intValue",
];

/// The fields that are OTLP ids (bytes written in hex).
const IDS: &[&str] = &["traceId", "spanId", "profileId"];

/// The other bytes fields of the request's messages (base64, as the
/// protobuf mapping writes bytes).
const BYTES: &[&str] = &["originalPayload"];

/// The request as OTLP JSON, one line.
pub(crate) fn write(
    req: &ExportProfilesServiceRequest,
    out: &mut dyn std::io::Write,
) -> Result<(), FormatError> {
    let mut v = serde_json::to_value(req)
        .map_err(|e| FormatError::Unsupported(format!("the OTLP JSON mapping: {e}")))?;
    widen(&mut v, false);
    serde_json::to_writer(&mut *out, &v).map_err(std::io::Error::from)?;
    out.write_all(b"\n")?;
    Ok(())
}

/// Every number under a [`WIDE`] key of `v` (`wide`: `v` is under one)
/// as a decimal string, unset fields (null) left out; bytes the serde derives write as arrays of
/// numbers as OTLP's hex ([`IDS`]) or base64 ([`BYTES`]).
fn widen(v: &mut Value, wide: bool) {
    match v {
        Value::Number(n) if wide => *v = Value::String(n.to_string()),
        Value::Array(items) => items.iter_mut().for_each(|i| widen(i, wide)),
        Value::Object(fields) => {
            // An unset message is left out (the mapping's default), not null.
            fields.retain(|_, v| !v.is_null());
            for (k, field) in fields.iter_mut() {
                let (id, bytes) = (IDS.contains(&k.as_str()), BYTES.contains(&k.as_str()));
                match bytes_of(field) {
                    Some(b) if id => *field = Value::String(hex(&b)),
                    Some(b) if bytes => *field = Value::String(base64(&b)),
                    _ => widen(field, WIDE.contains(&k.as_str())),
                }
            }
        }
        _ => {}
    }
}

/// An array of bytes' values, as bytes.
fn bytes_of(v: &Value) -> Option<Vec<u8>> {
    let items = v.as_array()?;
    items
        .iter()
        .map(|i| i.as_u64().and_then(|n| u8::try_from(n).ok()))
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Standard base64, padded.
fn base64(b: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(b.len().div_ceil(3) * 4);
    for c in b.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            match i <= c.len() {
                true => out.push(A[(n >> shift & 63) as usize] as char),
                false => out.push('='),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixty_four_bit_fields_become_strings_and_the_others_stay_numbers() {
        let mut v = serde_json::json!({
            "timeUnixNano": 1_700_000_000_000_000_000u64,
            "samples": [{"stackIndex": 3, "values": [250000, 7], "attributeIndices": [1, 2]}],
            "locationTable": [{"mappingIndex": 1, "address": 4096,
                "lines": [{"functionIndex": 2, "line": 0}]}],
        });
        widen(&mut v, false);
        assert_eq!(
            v,
            serde_json::json!({
                "timeUnixNano": "1700000000000000000",
                "samples": [{"stackIndex": 3, "values": ["250000", "7"], "attributeIndices": [1, 2]}],
                "locationTable": [{"mappingIndex": 1, "address": "4096",
                    "lines": [{"functionIndex": 2, "line": "0"}]}],
            })
        );
        let mut v = serde_json::json!({"linkTable": [{"traceId": [], "spanId": [171, 1]}],
            "attributeTable": [{"keyStrindex": 0, "value": null}],
            "originalPayload": [104, 105, 33, 63]});
        widen(&mut v, false);
        assert_eq!(
            v,
            serde_json::json!({"linkTable": [{"traceId": "", "spanId": "ab01"}],
                "attributeTable": [{"keyStrindex": 0}],
                "originalPayload": "aGkhPw=="})
        );
    }
}
