//! The one table of codecs: adding a codec adds a row here, its type, and a
//! line in [`CodecSpec::visit`](crate::CodecSpec::visit) and
//! [`AnyDecoder::for_id`](crate::AnyDecoder::for_id) (where the row becomes a
//! type). Names, ids, build flags, help texts and the lists in error messages
//! all come from this table.

use crate::CodecId;

/// The codecs perfz knows, built or not. The discriminant is the row in
/// [`CODECS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CodecKind {
    /// `none`: pass-through, id 0.
    None = 0,
    /// `zstd`: id 1, the one codec perf reads.
    Zstd = 1,
    /// `lz4`: perfz's lz4 frame stream.
    Lz4 = 2,
    /// `snappy`: perfz's snappy chunks.
    Snappy = 3,
}

/// One codec's facts.
#[derive(Debug)]
pub struct CodecInfo {
    /// The codec this row describes (its index in [`CODECS`]).
    pub kind: CodecKind,
    /// The name in specs (`--codec NAME`).
    pub name: &'static str,
    /// The id written into HEADER_COMPRESSED.type.
    pub id: CodecId,
    /// Whether this build contains it (Cargo feature of the same name).
    pub built: bool,
    /// Whether the spec takes `:LEVEL` and options.
    pub takes_level: bool,
    /// What `perfz codecs` says about its parameters.
    pub parameters: &'static str,
}

/// Every codec, in the order `perfz codecs` lists them.
pub const CODECS: [CodecInfo; 4] = [
    CodecInfo {
        kind: CodecKind::None,
        name: "none",
        id: CodecId::NONE,
        built: true,
        takes_level: false,
        parameters: "(none) raw records, no COMPRESSED records; the memcpy baseline",
    },
    CodecInfo {
        kind: CodecKind::Zstd,
        name: "zstd",
        id: CodecId::ZSTD,
        built: cfg!(feature = "zstd"),
        takes_level: true,
        // The options are appended from `knobs` (see `parameters`).
        parameters: "LEVEL",
    },
    CodecInfo {
        kind: CodecKind::Lz4,
        name: "lz4",
        id: CodecId::LZ4,
        built: cfg!(feature = "lz4"),
        takes_level: false,
        parameters: "(none) an lz4 frame stream with linked blocks; convert with `perfz recompress` for perf",
    },
    CodecInfo {
        kind: CodecKind::Snappy,
        name: "snappy",
        id: CodecId::SNAPPY,
        built: cfg!(feature = "snappy"),
        takes_level: false,
        parameters: "(none) snappy raw chunks; convert with `perfz recompress` for perf",
    },
];

impl CodecKind {
    /// Every codec, in table order.
    pub const ALL: [CodecKind; 4] = [
        CodecKind::None,
        CodecKind::Zstd,
        CodecKind::Lz4,
        CodecKind::Snappy,
    ];

    /// The codec's row in [`CODECS`].
    pub fn info(self) -> &'static CodecInfo {
        &CODECS[self as usize]
    }

    /// The name in specs (`--codec NAME`), e.g. `zstd`.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The id written into HEADER_COMPRESSED.type.
    pub fn id(self) -> CodecId {
        self.info().id
    }

    /// Whether this build of the crate contains the codec (Cargo features).
    pub fn is_built(self) -> bool {
        self.info().built
    }

    /// The parameters the codec takes, for `perfz codecs`.
    pub fn parameters(self) -> String {
        match self {
            CodecKind::Zstd => format!(
                "LEVEL {}..-1 (fast) or 1..{} (default {}); {}",
                crate::knobs::ZSTD_MIN_LEVEL,
                crate::knobs::ZSTD_MAX_LEVEL,
                crate::knobs::ZSTD_DEFAULT_LEVEL,
                crate::knobs::options()
            ),
            _ => self.info().parameters.to_string(),
        }
    }

    /// The codec called `name` in specs, built or not.
    pub fn by_name(name: &str) -> Option<CodecKind> {
        CODECS.iter().find(|c| c.name == name).map(|c| c.kind)
    }

    /// The codec written with `id` (only the current lz4 id, not the older ones).
    pub fn by_id(id: CodecId) -> Option<CodecKind> {
        CODECS.iter().find(|c| c.id == id).map(|c| c.kind)
    }
}

/// `none, zstd, lz4, snappy` for messages.
pub fn names() -> String {
    CODECS.iter().map(|c| c.name).collect::<Vec<_>>().join(", ")
}

/// `none (0), zstd (1), lz4 (0x707a0001), ...` for messages.
pub fn ids() -> String {
    CODECS
        .iter()
        .map(|c| {
            if c.id.0 < 16 {
                format!("{} ({})", c.name, c.id.0)
            } else {
                format!("{} ({:#x})", c.name, c.id.0)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `tok`, one comma-separated item of a spec list, is an option of
/// the spec before it (`long`, `wlog=23`) rather than a spec of its own.
pub fn is_option_token(tok: &str) -> bool {
    crate::knobs::is_option(tok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_match_their_kind_and_ids_are_unique() {
        for (i, c) in CODECS.iter().enumerate() {
            assert_eq!(c.kind as usize, i);
            assert_eq!(CodecKind::by_name(c.name), Some(c.kind));
            assert_eq!(CodecKind::by_id(c.id), Some(c.kind));
        }
        assert!(is_option_token("wlog=23") && is_option_token("long"));
        assert!(!is_option_token("lz4"));
    }
}
