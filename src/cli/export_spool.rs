//! `perfz export`'s streamed inputs (standard input, FIFOs, devices): the
//! export reads its inputs twice, so a stream is copied to a temporary file
//! first; but only a perf.data stream (its header is checked before a byte
//! is kept), only as far as perf reads it (a pipe-mode stream to its end or
//! its first bad record, a file-mode one to its header's last section), and
//! never into the last of its filesystem's free space.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::format::endian::Endian;
use crate::format::header::{
    detect_endian, read_up_to, FileHeader, FILE_HEADER_SIZE, OLD_FILE_HEADER_SIZE, PIPE_HEADER_SIZE,
};
use crate::format::{FormatError, PerfReader};

/// How much free space a spool leaves its filesystem: 10%, at most 1 GiB.
const KEEP_FREE_SHARE: u64 = 10;
const KEEP_FREE_MAX: u64 = 1 << 30;
/// How often (bytes written) the free space is looked at.
const CHECK_EVERY: u64 = 64 << 20;

/// The inputs as files the export can read twice: streams spooled to
/// temporary files, which go with the returned guards.
pub(super) fn spooled(
    inputs: &[PathBuf],
) -> anyhow::Result<(Vec<PathBuf>, Vec<tempfile::TempPath>)> {
    use std::os::unix::fs::FileTypeExt;
    let mut paths = Vec::with_capacity(inputs.len());
    let mut guards = Vec::new();
    for input in inputs {
        let stdin = input.as_os_str() == "-";
        let stream = stdin
            || std::fs::metadata(input).is_ok_and(|m| {
                let t = m.file_type();
                t.is_fifo() || t.is_char_device() || t.is_socket()
            });
        if !stream {
            paths.push(input.clone());
            continue;
        }
        let path = if stdin {
            spool(Box::new(std::io::stdin()), "standard input")?
        } else {
            let f = std::fs::File::open(input)
                .with_context(|| format!("opening {}", input.display()))?;
            spool(Box::new(f), &input.display().to_string())?
        };
        paths.push(path.to_path_buf());
        guards.push(path);
    }
    Ok((paths, guards))
}

/// Copies the perf.data stream `src` (called `what`) to a temporary file,
/// after its header is checked: anything else is refused at once.
pub(super) fn spool(
    mut src: Box<dyn Read + Send>,
    what: &str,
) -> anyhow::Result<tempfile::TempPath> {
    let mut head = [0u8; FILE_HEADER_SIZE as usize];
    let n = read_up_to(&mut src, &mut head[..PIPE_HEADER_SIZE as usize])
        .with_context(|| format!("reading {what}"))?;
    let not_perf = |why: String| {
        anyhow::anyhow!(
            "{what} is not a perf.data stream ({why}): give a recording, e.g. \
             `perfz record -o - ... | perfz export -`, or the file itself"
        )
    };
    if n < PIPE_HEADER_SIZE as usize {
        return Err(not_perf(format!("it ends after {n} bytes")));
    }
    let endian = detect_endian(head[..8].try_into().expect("8 bytes"))
        .map_err(|_| not_perf("it does not start with perf's magic \"PERFILE2\"".into()))?;
    let size = endian.u64(head[8..16].try_into().expect("8 bytes"));
    let file_header = match size {
        PIPE_HEADER_SIZE => None,
        FILE_HEADER_SIZE | OLD_FILE_HEADER_SIZE => {
            let got = read_up_to(&mut src, &mut head[16..size as usize])?;
            let h = (got + 16 == size as usize)
                .then(|| FileHeader::parse(&head[..size as usize], endian).ok())
                .flatten();
            Some(h.ok_or_else(|| not_perf("its file header is cut short".into()))?)
        }
        other => return Err(not_perf(format!("a header size of {other}, not 16 or 104"))),
    };
    let tmp = tempfile::Builder::new()
        .prefix(".perfz-export-input-")
        .tempfile()
        .context("a temporary file for a streamed input")?;
    let (file, path) = tmp.into_parts();
    let mut out = Spool {
        file,
        written: 0,
        checked: 0,
    };
    let head = &head[..size as usize];
    out.write_all(head)
        .map_err(anyhow::Error::from)
        .and_then(|()| match &file_header {
            None => pipe_stream(head, src, out, what),
            Some(h) => file_stream(h, endian, &mut src, &mut out),
        })
        .with_context(|| format!("copying {what} to {}", path.display()))?;
    Ok(path)
}

/// A pipe-mode stream, record by record, to its end or to the first record
/// perf would stop at (the export then says what is wrong there).
fn pipe_stream(
    head: &[u8],
    src: Box<dyn Read + Send>,
    out: Spool,
    what: &str,
) -> anyhow::Result<()> {
    let tee = Tee { src, out };
    let stream = std::io::Cursor::new(head.to_vec()).chain(tee);
    let mut r = PerfReader::frame_stream(Path::new(what), Box::new(stream))?;
    loop {
        match r.next_record() {
            Ok(Some(_)) => {}
            // A read or write that failed (the free space ran low).
            Err(FormatError::Io(e)) => return Err(e.into()),
            Ok(None) | Err(_) => return Ok(()),
        }
    }
}

/// A file-mode stream (a file piped in): its header, attrs and data, then
/// its feature sections, and nothing after them.
fn file_stream(
    h: &FileHeader,
    endian: Endian,
    src: &mut dyn Read,
    out: &mut Spool,
) -> anyhow::Result<()> {
    // A header without a data size (a recording cut short) is read to the end.
    if h.data.size == 0 {
        std::io::copy(src, out)?;
        return Ok(());
    }
    let data_end = h.data.end().unwrap_or(u64::MAX);
    std::io::copy(
        &mut (&mut *src).take(data_end.saturating_sub(out.written)),
        out,
    )?;
    let mut index = vec![0u8; 16 * h.feature_bits().count()];
    let got = read_up_to(&mut &mut *src, &mut index)?;
    out.write_all(&index[..got])?;
    let end = index[..got]
        .chunks_exact(16)
        .filter_map(|s| {
            let at = endian.u64(s[..8].try_into().ok()?);
            at.checked_add(endian.u64(s[8..].try_into().ok()?))
        })
        .max()
        .unwrap_or(0);
    std::io::copy(&mut (&mut *src).take(end.saturating_sub(out.written)), out)?;
    Ok(())
}

/// The temporary file a stream is copied to: a write that would leave its
/// filesystem less than it keeps free fails, saying what to do.
struct Spool {
    file: std::fs::File,
    written: u64,
    /// `written` when the free space was last looked at.
    checked: u64,
}

impl Spool {
    fn check_space(&mut self) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        self.checked = self.written;
        // SAFETY: a zeroed statvfs is a valid out-parameter, which fstatvfs
        // fills for the open file descriptor it is given.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: as above; the descriptor is this spool's file, open.
        if unsafe { libc::fstatvfs(self.file.as_raw_fd(), &mut st) } != 0 {
            return Ok(()); // unknown: the write itself will say
        }
        let unit = st.f_frsize as u64;
        let (free, total) = (st.f_bavail as u64 * unit, st.f_blocks as u64 * unit);
        let keep = (total / KEEP_FREE_SHARE).min(KEEP_FREE_MAX);
        if free < keep.saturating_add(CHECK_EVERY) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                format!(
                    "stopped after {} MiB: its filesystem has {} MiB free and export keeps {} MiB \
                     of it; save the stream to a file where there is room and export that file, \
                     or set TMPDIR to a larger filesystem",
                    self.written >> 20,
                    free >> 20,
                    keep >> 20
                ),
            ));
        }
        Ok(())
    }
}

impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.written == 0 || self.written - self.checked >= CHECK_EVERY {
            self.check_space()?;
        }
        let n = self.file.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// A stream whose bytes are written to the spool as they are read.
struct Tee {
    src: Box<dyn Read + Send>,
    out: Spool,
}

impl Read for Tee {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.src.read(buf)?;
        self.out.write_all(&buf[..n])?;
        Ok(n)
    }
}
