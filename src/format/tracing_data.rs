//! Reading HEADER_TRACING_DATA (laid out as synth/tracing.rs
//! writes it, as perf 6.1's trace-event-info.c): where it ends, and which
//! systems' formats it holds. Every step is bounds- and overflow-checked:
//! the blob comes from files of unknown origin.

/// The `(system, count)` list of a tracing data blob that parses exactly
/// to its end (for tests and `stat`).
pub fn systems_of(t: &[u8]) -> Option<Vec<(String, u32)>> {
    parse(t).filter(|(_, len)| *len == t.len()).map(|(s, _)| s)
}

/// Where the tracing data at the start of `t` ends (pipe mode pads it).
pub fn length(t: &[u8]) -> Option<usize> {
    parse(t).map(|(_, len)| len)
}

fn parse(t: &[u8]) -> Option<(Vec<(String, u32)>, usize)> {
    // A cursor whose every step is bounds- and overflow-checked.
    struct C<'a> {
        t: &'a [u8],
        p: usize,
    }
    impl C<'_> {
        fn take(&mut self, n: u64) -> Option<&[u8]> {
            let end = self.p.checked_add(usize::try_from(n).ok()?)?;
            let b = self.t.get(self.p..end)?;
            self.p = end;
            Some(b)
        }
        fn u32(&mut self) -> Option<u32> {
            Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
        }
        fn u64(&mut self) -> Option<u64> {
            Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
        }
        fn cstr(&mut self) -> Option<String> {
            let n = self.t.get(self.p..)?.iter().position(|&b| b == 0)?;
            let s = String::from_utf8_lossy(self.take(n as u64)?).into_owned();
            self.take(1)?;
            Some(s)
        }
    }
    let mut c = C { t, p: 0 };
    if c.take(10)? != b"\x17\x08Dtracing" {
        return None;
    }
    c.cstr()?; // version
    c.take(6)?; // endianness, sizeof(long), page size
    for _ in 0..2 {
        c.cstr()?;
        let n = c.u64()?;
        c.take(n)?;
    }
    for _ in 0..c.u32()? {
        let n = c.u64()?;
        c.take(n)?;
    }
    let mut out = Vec::new();
    for _ in 0..c.u32()? {
        let s = c.cstr()?;
        let n = c.u32()?;
        for _ in 0..n {
            let len = c.u64()?;
            c.take(len)?;
        }
        out.push((s, n));
    }
    let n = c.u32()?;
    c.take(n as u64)?;
    let n = c.u32()?;
    c.take(n as u64)?;
    let n = c.u64()?;
    c.take(n)?;
    Some((out, c.p))
}
