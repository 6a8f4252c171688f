//! Outputs written as a stream (pipe mode): stdout (`-o -`) and character
//! devices (`-o /dev/null`).

use std::fs::File;
use std::io;
use std::path::Path;

use super::{is_stdout, Place};

/// Whether `path` is a character device (`/dev/null`, a tty): written as a
/// stream, in pipe mode. perf opens it as a file (`O_CREAT|O_RDWR|O_TRUNC`,
/// util/data.c) and seeks back to write the header, which `/dev/null`
/// ignores and a tty refuses; a stream needs no seek, and no `FILE.old` is
/// made (perf makes none either: a device's size is 0).
pub fn is_device(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    !is_stdout(path) && std::fs::metadata(path).is_ok_and(|m| m.file_type().is_char_device())
}

/// Whether `path` is written as a stream (pipe mode): stdout or a
/// character device.
pub fn is_stream(path: &Path) -> bool {
    is_stdout(path) || is_device(path)
}

/// Opens the character device at `path` for writing (never created, never
/// moved aside).
pub fn open_device(path: &Path) -> io::Result<(Place, File)> {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display())))?;
    let path = path.to_path_buf();
    Ok((Place::Device { path }, f))
}
