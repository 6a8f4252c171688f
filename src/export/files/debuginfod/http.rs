//! One debuginfod request: a GET whose answer is streamed into a
//! temporary file of the cache directory, within a deadline and a size
//! limit (`$DEBUGINFOD_MAXSIZE`, else [`DEFAULT_MAX_SIZE`]). What comes
//! back is the temporary file, whole; a partial or oversized answer is
//! deleted with it.

use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use tempfile::NamedTempFile;

use super::verify::Bad;

/// The most bytes an answer may have where `$DEBUGINFOD_MAXSIZE` sets no
/// limit, 4 GiB: room for the largest debug files distributions ship
/// (LLVM's passes 3 GB, as elfutils' PR27982 counts it), not for an
/// answer that never ends.
pub(crate) const DEFAULT_MAX_SIZE: u64 = 4 << 30;

/// Why a server's answer was not kept.
pub(crate) enum Failed {
    /// 404: the server has no such file.
    NotFound,
    /// The answer declared this many bytes (Content-Length or
    /// X-Debuginfod-Size), over the limit: it was not read.
    Declared(u64),
    /// The answer ran past the limit while it was read.
    TooLong,
    /// The answer was whole but not the file asked for.
    Wrong(Bad),
    /// Anything else (the connection, the deadline, an HTTP status, the
    /// cache's file system), in words.
    Other(String),
}

impl From<std::io::Error> for Failed {
    fn from(e: std::io::Error) -> Failed {
        Failed::Other(e.to_string())
    }
}

/// The size limit of an answer: `$DEBUGINFOD_MAXSIZE` bytes where it is
/// positive (read as elfutils reads it, with atol), else
/// [`DEFAULT_MAX_SIZE`]. elfutils takes 0 for no limit; perfz keeps its
/// default then, so that no answer can fill the disk.
pub(crate) fn max_size() -> u64 {
    max_size_of(std::env::var("DEBUGINFOD_MAXSIZE").ok().as_deref())
}

/// [`max_size`] of the variable's value.
fn max_size_of(v: Option<&str>) -> u64 {
    v.map(atol)
        .filter(|&n| n > 0)
        .map_or(DEFAULT_MAX_SIZE, |n| n as u64)
}

/// C's atol: leading blanks, a sign, the digits up to the first other
/// character (none: 0); saturating where C's is undefined.
fn atol(s: &str) -> i64 {
    let s = s.trim_start();
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let n = digits
        .bytes()
        .take_while(u8::is_ascii_digit)
        .fold(0i64, |n, d| {
            n.saturating_mul(10).saturating_add((d - b'0') as i64)
        });
    if neg {
        -n
    } else {
        n
    }
}

/// GETs `url` within `timeout` into a new temporary file in `dir`, at
/// most `limit` bytes (the limit also told the server, as elfutils'
/// X-DEBUGINFOD-MAXSIZE header tells it).
pub(crate) fn get(
    url: &str,
    timeout: Duration,
    limit: u64,
    dir: &Path,
) -> Result<NamedTempFile, Failed> {
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .build();
    let agent: ureq::Agent = config.into();
    let mut resp = agent
        .get(url)
        .header("X-DEBUGINFOD-MAXSIZE", limit.to_string())
        .call()
        .map_err(|e| Failed::Other(e.to_string()))?;
    match resp.status().as_u16() {
        200 => {}
        404 => return Err(Failed::NotFound),
        s => return Err(Failed::Other(format!("HTTP {s}"))),
    }
    let declared = resp.body().content_length();
    let said_size = resp
        .headers()
        .get("x-debuginfod-size")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(n) = declared.max(said_size).filter(|&n| n > limit) {
        return Err(Failed::Declared(n));
    }
    std::fs::create_dir_all(dir).map_err(|e| Failed::Other(format!("{}: {e}", dir.display())))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".perfz-")
        .tempfile_in(dir)
        .map_err(|e| Failed::Other(format!("{}: {e}", dir.display())))?;
    let body = resp.body_mut().with_config().limit(u64::MAX).reader();
    // One byte past the limit tells an answer over it from one at it.
    let copied = std::io::copy(&mut body.take(limit.saturating_add(1)), &mut tmp)?;
    if copied > limit {
        return Err(Failed::TooLong);
    }
    if let Some(n) = declared.filter(|&n| n != copied) {
        return Err(Failed::Other(format!("{copied} of the {n} bytes declared")));
    }
    tmp.flush()?;
    Ok(tmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_read_as_elfutils_reads_it() {
        assert_eq!(max_size_of(None), DEFAULT_MAX_SIZE);
        assert_eq!(max_size_of(Some("1048576")), 1 << 20);
        assert_eq!(max_size_of(Some(" +4096 bytes")), 4096);
        // elfutils: no limit; perfz: its default.
        assert_eq!(max_size_of(Some("0")), DEFAULT_MAX_SIZE);
        assert_eq!(max_size_of(Some("-5")), DEFAULT_MAX_SIZE);
        assert_eq!(max_size_of(Some("lots")), DEFAULT_MAX_SIZE);
        assert_eq!(max_size_of(Some("")), DEFAULT_MAX_SIZE);
        assert_eq!(
            max_size_of(Some("99999999999999999999999")),
            i64::MAX as u64
        );
        // More than the default where asked.
        assert_eq!(max_size_of(Some("8589934592")), 8 << 30);
    }
}
