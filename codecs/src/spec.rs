//! `CodecSpec`: the user-facing codec name, parsed once, matched once.
//!
//! Grammar (case-sensitive, no spaces):
//!
//! ```text
//! spec    = codec [ ":" level ] *( "," option )
//! codec   = "none" | "zstd" | "lz4" | "snappy"
//! level   = integer                  zstd only: -131072..=-1 (fast), 1..=22; 0 = zstd's default, 3
//! option  = "wlog=" 10..=27          zstd only: window log (default: the level's own)
//!         | "hlog=" 6..=30 | "clog=" 6..=30 | "slog=" 1..=30 | "mml=" 3..=7
//!                                    zstd only: hash / chain / search log, minimum match
//!         | "strategy=" fast|dfast|greedy|lazy|lazy2|btlazy2|btopt|btultra|btultra2
//!         | "long"                   zstd only: long-distance matching (window log 27 unless wlog= says)
//!         | "oneshot"                zstd only: a complete frame per push slice (no window copy)
//! ```
//!
//! `zstd` alone is `zstd:1`, perf's `-z` default. [`Display`](std::fmt::Display)
//! prints the canonical form (`zstd:3,wlog=23,long`), which parses back to the
//! same spec.
//!
//! [`CodecSpec::visit`] matches the spec once and calls `visitor.visit::<C>(codec)`
//! with the concrete codec type, like ripgrep's matcher dispatch: everything
//! below it is monomorphized per codec. Codecs left out of the build (Cargo
//! features `zstd`, `lz4`, `snappy`) still parse and are refused with the
//! feature to enable (`Error::NotBuilt`).

use std::fmt;
use std::str::FromStr;

use crate::knobs::{
    KNOBS, LIBZSTD_DEFAULT_LEVEL, WLOG, ZSTD_DEFAULT_LEVEL, ZSTD_MAX_LEVEL, ZSTD_MIN_LEVEL,
    ZSTD_STRATEGIES,
};
use crate::table::{self, CodecKind};
use crate::{Codec, Error};

/// zstd's knobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ZstdParams {
    /// Compression level, never 0 after parsing.
    pub level: i32,
    /// The numeric knobs of [`KNOBS`] (window, hash, chain and search logs,
    /// minimum match), in its order; `None` = the level's own (the window
    /// log is 27 with `long`).
    pub knobs: [Option<u32>; 5],
    /// The strategy's libzstd number; `None` = the level's own.
    pub strategy: Option<u32>,
    /// Long-distance matching.
    pub long: bool,
    /// One-shot frames per push slice instead of one stream (see
    /// `ZstdOneShotCodec`).
    pub oneshot: bool,
}

impl Default for ZstdParams {
    fn default() -> Self {
        ZstdParams {
            level: ZSTD_DEFAULT_LEVEL,
            knobs: [None; 5],
            strategy: None,
            long: false,
            oneshot: false,
        }
    }
}

impl ZstdParams {
    /// zstd at `level` with no other option.
    pub fn level(level: i32) -> Self {
        ZstdParams {
            level,
            ..Self::default()
        }
    }

    /// The knobs to set after the level, in [`KNOBS`] order: an explicit
    /// `wlog=`, else 27 with `long` (as the zstd command line tool); `None`
    /// = libzstd's own for the level.
    pub fn effective_knobs(&self) -> [Option<u32>; 5] {
        let mut k = self.knobs;
        if self.long && k[WLOG].is_none() {
            k[WLOG] = Some(*KNOBS[WLOG].range.end());
        }
        k
    }

    /// The parameters in effect, for `perfz eval` (`libzstd's level 1`, or
    /// `libzstd's level 1 with dfast wlog 23`).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(st) = self.strategy {
            parts.push(ZSTD_STRATEGIES[(st - 1) as usize].to_string());
        }
        for (k, v) in KNOBS.iter().zip(self.effective_knobs()) {
            if let Some(v) = v {
                parts.push(format!("{} {v}", k.name));
            }
        }
        if parts.is_empty() {
            format!("libzstd's level {}", self.level)
        } else {
            format!("libzstd's level {} with {}", self.level, parts.join(" "))
        }
    }
}

/// A parsed `--codec` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CodecSpec {
    /// `none`: raw records, no COMPRESSED records.
    None,
    /// `zstd[:LEVEL][,OPTION...]`: what perf's `-z` writes and perf reads.
    Zstd(ZstdParams),
    /// `lz4`: an lz4 frame stream ([`CodecId::LZ4`](crate::CodecId::LZ4)); perfz only.
    Lz4,
    /// `snappy`: snappy raw chunks; perfz only.
    Snappy,
}

/// The recorder's default codec: zstd at level 3. Measured on the repo's
/// workload (docs/BENCHMARKS.md), level 3 both compresses better than perf's
/// `-z` level 1 and runs as fast, with gigabytes per second to spare over a
/// dwarf-stack recording's trace rate; and perf 6.1 reads it.
pub const RECORD_DEFAULT_LEVEL: i32 = 3;

impl Default for CodecSpec {
    fn default() -> Self {
        CodecSpec::Zstd(ZstdParams::level(RECORD_DEFAULT_LEVEL))
    }
}

/// Called by [`CodecSpec::visit`] with the concrete codec: the generic function
/// that every codec gets its own monomorphized copy of.
pub trait CodecVisitor {
    /// What `visit` returns; [`CodecSpec::visit`] hands it back in `Ok`.
    type Output;
    /// Runs with the codec the spec names, built and warmed up.
    fn visit<C: Codec + Send + 'static>(self, codec: C) -> Self::Output;
}

impl CodecSpec {
    /// The codec's row in the codec table, parameters dropped.
    pub fn kind(&self) -> CodecKind {
        match self {
            CodecSpec::None => CodecKind::None,
            CodecSpec::Zstd(_) => CodecKind::Zstd,
            CodecSpec::Lz4 => CodecKind::Lz4,
            CodecSpec::Snappy => CodecKind::Snappy,
        }
    }

    /// The id written into HEADER_COMPRESSED.type.
    pub fn id(&self) -> crate::CodecId {
        self.kind().id()
    }

    /// The level recorded in HEADER_COMPRESSED.level (0 for codecs without one).
    pub fn level(&self) -> i32 {
        match self {
            CodecSpec::Zstd(p) => p.level,
            _ => 0,
        }
    }

    /// Fails with [`Error::NotBuilt`] if this build lacks the codec.
    pub fn check_built(&self) -> Result<(), Error> {
        let kind = self.kind();
        if kind.is_built() {
            Ok(())
        } else {
            Err(Error::NotBuilt(kind.name()))
        }
    }

    /// Builds the codec and calls `visitor` with it: the one place where the
    /// runtime choice becomes a type.
    pub fn visit<V: CodecVisitor>(&self, visitor: V) -> Result<V::Output, Error> {
        match *self {
            CodecSpec::None => Ok(visitor.visit(crate::NoneCodec::new())),
            #[cfg(feature = "zstd")]
            CodecSpec::Zstd(p) if p.oneshot => Ok(visitor.visit(crate::ZstdOneShotCodec::new(&p)?)),
            #[cfg(feature = "zstd")]
            CodecSpec::Zstd(p) => Ok(visitor.visit(crate::ZstdCodec::new(&p)?)),
            #[cfg(feature = "lz4")]
            CodecSpec::Lz4 => Ok(visitor.visit(crate::Lz4Codec::new())),
            #[cfg(feature = "snappy")]
            CodecSpec::Snappy => Ok(visitor.visit(crate::SnappyCodec::new())),
            #[allow(unreachable_patterns)]
            _ => Err(Error::NotBuilt(self.kind().name())),
        }
    }

    /// Parses the grammar only, without asking whether this build has the codec
    /// (`FromStr` asks).
    pub fn parse_grammar(s: &str) -> Result<Self, Error> {
        let bad = |what: String| Error::Spec {
            spec: s.to_string(),
            what,
        };
        if s.is_empty() {
            return Err(bad("empty; name a codec".into()));
        }
        let mut items = s.split(',');
        let head = items.next().unwrap_or_default();
        let (name, level) = match head.split_once(':') {
            Some((n, l)) => (n, Some(l)),
            None => (head, None),
        };
        let kind = CodecKind::by_name(name).ok_or_else(|| {
            bad(format!(
                "unknown codec {name:?} (known: {})",
                table::names()
            ))
        })?;
        if !kind.info().takes_level {
            if level.is_some() {
                return Err(bad(format!("{name} takes no level")));
            }
            if let Some(opt) = items.next() {
                return Err(bad(format!("{name} takes no options, got {opt:?}")));
            }
            return Ok(match kind {
                CodecKind::None => CodecSpec::None,
                CodecKind::Lz4 => CodecSpec::Lz4,
                CodecKind::Snappy => CodecSpec::Snappy,
                CodecKind::Zstd => unreachable!("zstd takes a level"),
            });
        }
        let mut p = ZstdParams::default();
        if let Some(l) = level {
            p.level = parse_zstd_level(l, &bad)?;
        }
        for opt in items {
            apply_zstd_option(&mut p, opt, &bad)?;
        }
        Ok(CodecSpec::Zstd(p))
    }
}

/// A `zstd:LEVEL` level, checked against zstd's range; 0 is zstd's default.
fn parse_zstd_level(l: &str, bad: &impl Fn(String) -> Error) -> Result<i32, Error> {
    let v: i32 = l
        .parse()
        .map_err(|_| bad(format!("zstd level {l:?} is not an integer")))?;
    if !(ZSTD_MIN_LEVEL..=ZSTD_MAX_LEVEL).contains(&v) {
        return Err(bad(format!(
            "zstd level {v} is out of range {ZSTD_MIN_LEVEL}..={ZSTD_MAX_LEVEL}"
        )));
    }
    Ok(if v == 0 { LIBZSTD_DEFAULT_LEVEL } else { v })
}

/// Sets one zstd `,OPTION` of a spec in `p`: a numeric knob, `long`,
/// `oneshot` or `strategy=`.
fn apply_zstd_option(
    p: &mut ZstdParams,
    opt: &str,
    bad: &impl Fn(String) -> Error,
) -> Result<(), Error> {
    let knob = opt.split_once('=').and_then(|(name, v)| {
        let i = KNOBS.iter().position(|k| k.name == name)?;
        Some((i, v))
    });
    match (opt.split_once('='), knob) {
        (_, Some((i, v))) => {
            let k = &KNOBS[i];
            let n: u32 = v
                .parse()
                .map_err(|_| bad(format!("{} {v:?} is not an integer", k.name)))?;
            if !k.range.contains(&n) {
                return Err(bad(format!(
                    "{} {n} is out of range {}..={}{}",
                    k.name,
                    k.range.start(),
                    k.range.end(),
                    k.note
                )));
            }
            p.knobs[i] = Some(n);
        }
        (None, _) if opt == "long" => p.long = true,
        (None, _) if opt == "oneshot" => p.oneshot = true,
        (Some(("strategy", v)), _) => {
            let i = ZSTD_STRATEGIES
                .iter()
                .position(|s| *s == v)
                .ok_or_else(|| {
                    bad(format!(
                        "unknown strategy {v:?} (known: {})",
                        ZSTD_STRATEGIES.join(", ")
                    ))
                })?;
            p.strategy = Some(i as u32 + 1);
        }
        _ => {
            return Err(bad(format!(
                "unknown zstd option {opt:?} (known: {})",
                crate::knobs::options()
            )))
        }
    }
    Ok(())
}

impl FromStr for CodecSpec {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        let spec = Self::parse_grammar(s)?;
        spec.check_built()?;
        Ok(spec)
    }
}

impl fmt::Display for CodecSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodecSpec::Zstd(p) => {
                write!(f, "zstd:{}", p.level)?;
                for (k, v) in KNOBS.iter().zip(p.knobs) {
                    if let Some(v) = v {
                        write!(f, ",{}={v}", k.name)?;
                    }
                }
                if let Some(st) = p.strategy {
                    write!(f, ",strategy={}", ZSTD_STRATEGIES[(st - 1) as usize])?;
                }
                if p.long {
                    f.write_str(",long")?;
                }
                if p.oneshot {
                    f.write_str(",oneshot")?;
                }
                Ok(())
            }
            other => f.write_str(other.kind().name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_specs_parse_and_round_trip() {
        let cases = [
            ("none", "none"),
            ("zstd", "zstd:1"),
            ("zstd:3", "zstd:3"),
            ("zstd:-5", "zstd:-5"),
            ("zstd:19", "zstd:19"),
            ("zstd:0", "zstd:3"),
            ("zstd:3,wlog=23", "zstd:3,wlog=23"),
            ("zstd:1,long", "zstd:1,long"),
            ("zstd,long,wlog=20", "zstd:1,wlog=20,long"),
            ("zstd:3,oneshot", "zstd:3,oneshot"),
            (
                "zstd:2,strategy=dfast,mml=5,hlog=17,clog=16,slog=1,wlog=21",
                "zstd:2,wlog=21,hlog=17,clog=16,slog=1,mml=5,strategy=dfast",
            ),
            ("lz4", "lz4"),
            ("snappy", "snappy"),
        ];
        for (input, canonical) in cases {
            let spec = CodecSpec::parse_grammar(input).unwrap();
            assert_eq!(spec.to_string(), canonical, "{input}");
            assert_eq!(
                CodecSpec::parse_grammar(canonical).unwrap(),
                spec,
                "{input}"
            );
        }
    }

    #[test]
    fn bad_specs_say_what_is_wrong_and_list_valid_forms() {
        let cases = [
            ("zstd:99", "out of range"),
            ("gzip", "unknown codec \"gzip\""),
            ("zstd:abc", "not an integer"),
            ("lz4:3", "lz4 takes no level"),
            ("", "empty"),
            ("zstd:3,wlog=28", "at most 27"),
            ("zstd:3,fast", "unknown zstd option"),
            ("zstd:3,strategy=quick", "unknown strategy"),
            ("zstd:3,mml=9", "out of range 3..=7"),
            ("snappy,long", "snappy takes no options"),
            ("ZSTD", "unknown codec"),
        ];
        for (input, needle) in cases {
            let msg = CodecSpec::parse_grammar(input).unwrap_err().to_string();
            assert!(msg.contains(needle), "{input:?}: {msg}");
            assert!(msg.contains("valid forms: none | zstd"), "{input:?}: {msg}");
        }
    }
}
