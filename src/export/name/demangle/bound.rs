//! The bound on a demangled name's text. Back-references (Rust v0's
//! `B…_`, C++'s substitutions and template parameters) let a few hundred
//! bytes of name demangle to megabytes (rustc-demangle stops at 1 MB,
//! GNU's demangler nowhere: 13 MB for 223 bytes), which would be kept and
//! written for every frame the name is on. A name whose text would be
//! longer than [`LONGEST_DEMANGLED`] is left mangled, as perf 7.3 leaves
//! such a Rust name; the text is written through [`Bounded`], which stops
//! the demangler at the bound instead of after it.

use std::fmt;

/// Demangled text longer than this leaves its name mangled: twice the
/// longest real name seen (8.2 KiB, a template in libLLVM 15).
pub(super) const LONGEST_DEMANGLED: usize = 16 << 10;

/// Why a bounded demangler gave no text.
#[derive(Debug, PartialEq)]
pub(super) enum NoText {
    /// Its text went past the bound.
    TooLong,
    /// It failed of itself (not understood).
    Failed,
}

/// A text that refuses to grow past its limit: the write that would take
/// it there fails, and so the demangler writing it stops.
pub(super) struct Bounded {
    text: String,
    limit: usize,
    full: bool,
}

impl fmt::Write for Bounded {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.text.len() + s.len() > self.limit {
            self.full = true;
            return Err(fmt::Error);
        }
        self.text.push_str(s);
        Ok(())
    }
}

/// What `write` writes, unless it is longer than `limit` bytes.
pub(super) fn bounded(
    limit: usize,
    write: impl FnOnce(&mut Bounded) -> fmt::Result,
) -> Result<String, NoText> {
    let mut out = Bounded {
        text: String::new(),
        limit,
        full: false,
    };
    match write(&mut out) {
        Ok(()) => Ok(out.text),
        Err(_) if out.full => Err(NoText::TooLong),
        Err(_) => Err(NoText::Failed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write;

    #[test]
    fn a_text_past_its_limit_is_too_long_and_a_failure_is_not() {
        assert_eq!(bounded(5, |o| o.write_str("12345")).unwrap(), "12345");
        let long = bounded(5, |o| {
            o.write_str("123")?;
            o.write_str("456")
        });
        assert_eq!(long, Err(NoText::TooLong));
        assert_eq!(bounded(5, |_| Err(fmt::Error)), Err(NoText::Failed));
    }
}
