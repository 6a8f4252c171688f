//! The records that describe processes rather than sample them: MMAP,
//! MMAP2, COMM, FORK, EXIT — decoded from a record's body, bounds-checked
//! (the bytes come from files of unknown origin).

use super::record::{misc, RecordType};

/// What a side-band record says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SideBand {
    /// A mapping of `path` at `[start, start + len)`, file offset `pgoff`;
    /// `kernel`: a kernel map (the kernel image or a module).
    Map {
        /// Process the mapping belongs to (`u32::MAX`, pid -1, for kernel maps).
        pid: u32,
        /// Virtual address of the mapping's first byte.
        start: u64,
        /// Length of the mapping in bytes.
        len: u64,
        /// File offset mapped at `start`, in bytes.
        pgoff: u64,
        /// The mapped file (or `[vdso]`, `[kernel.kallsyms]_text`, a module name).
        path: String,
        /// The build id an MMAP2 with `MMAP_BUILD_ID` carries (at most 20 bytes).
        build_id: Option<Vec<u8>>,
        /// The record's cpumode is kernel: a kernel image or module map.
        kernel: bool,
        /// The record's MMAP_DATA bit: memory that is not executable
        /// (perf's `mmap_data` records it), where no code runs.
        data: bool,
    },
    /// A thread's name; `exec`: set by an exec (its maps were replaced).
    Comm {
        /// Process id.
        pid: u32,
        /// Thread id of the renamed thread.
        tid: u32,
        /// The new name (at most 15 bytes, as the kernel keeps it).
        comm: String,
        /// Set by an exec (`PERF_RECORD_MISC_COMM_EXEC`): the maps were replaced.
        exec: bool,
    },
    /// A new thread or process (FORK).
    Fork {
        /// Process id of the new thread.
        pid: u32,
        /// Process id of the parent.
        ppid: u32,
        /// Thread id of the new thread.
        tid: u32,
    },
    /// A thread exited (EXIT).
    Exit {
        /// Process id of the thread.
        pid: u32,
        /// Thread id of the thread that exited.
        tid: u32,
    },
}

/// `misc` bit of a COMM record written by an exec.
const COMM_EXEC: u16 = 1 << 13;

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The NUL-terminated bytes at `at` (to the end when there is no NUL).
fn cbytes_at(b: &[u8], at: usize) -> Option<&[u8]> {
    let s = b.get(at..)?;
    let n = s.iter().position(|&c| c == 0).unwrap_or(s.len());
    Some(&s[..n])
}

/// A NUL-terminated string at `at` (a comm: not UTF-8 is replaced).
fn cstr_at(b: &[u8], at: usize) -> Option<String> {
    Some(String::from_utf8_lossy(cbytes_at(b, at)?).into_owned())
}

/// The first of 256 private-use chars that stand for the bytes of a
/// recorded path that are not UTF-8 (`U+10FF00 + byte`): a path's text
/// keeps any path the kernel records, and [`os_path`] gives its bytes back
/// (perf passes paths as bytes; a program under a non-UTF-8 directory is
/// named as perf names it).
const RAW_BYTE: u32 = 0x10FF00;

/// `bytes` as text: UTF-8 as it is, any other byte as its private-use char.
pub fn path_text(mut bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len());
    loop {
        match std::str::from_utf8(bytes) {
            Ok(t) => {
                s.push_str(t);
                return s;
            }
            Err(e) => {
                let (good, rest) = bytes.split_at(e.valid_up_to());
                // valid_up_to says these bytes are UTF-8.
                s.push_str(std::str::from_utf8(good).unwrap_or_default());
                let bad = e.error_len().unwrap_or(rest.len()).max(1);
                for &b in &rest[..bad] {
                    s.push(char::from_u32(RAW_BYTE + u32::from(b)).unwrap_or('\u{fffd}'));
                }
                bytes = &rest[bad..];
            }
        }
    }
}

/// The bytes a path's text (of [`path_text`]) stands for.
pub fn path_bytes(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        match u32::from(c).checked_sub(RAW_BYTE) {
            Some(b) if b < 256 => out.push(b as u8),
            _ => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    out
}

/// The file a path's text (of [`path_text`]) names.
pub fn os_path(text: &str) -> std::path::PathBuf {
    use std::os::unix::ffi::OsStringExt;
    std::ffi::OsString::from_vec(path_bytes(text)).into()
}

impl SideBand {
    /// Decodes a record's body (little-endian), or None when it is not one
    /// of these or is too short.
    pub fn parse(type_: RecordType, misc_bits: u16, body: &[u8]) -> Option<SideBand> {
        let pid = u32_at(body, 0)?;
        let tid = u32_at(body, 4)?;
        let kernel = misc_bits & misc::CPUMODE_MASK == misc::KERNEL;
        let data = misc_bits & misc::MMAP_DATA != 0;
        Some(match type_ {
            RecordType::MMAP => SideBand::Map {
                pid,
                start: u64_at(body, 8)?,
                len: u64_at(body, 16)?,
                pgoff: u64_at(body, 24)?,
                path: path_text(cbytes_at(body, 32)?),
                build_id: None,
                kernel,
                data,
            },
            RecordType::MMAP2 => SideBand::Map {
                pid,
                start: u64_at(body, 8)?,
                len: u64_at(body, 16)?,
                pgoff: u64_at(body, 24)?,
                path: path_text(cbytes_at(body, 64)?),
                build_id: (misc_bits & misc::MMAP_BUILD_ID != 0)
                    .then(|| {
                        let n = (*body.get(32)? as usize).min(20);
                        body.get(36..36 + n).map(<[u8]>::to_vec)
                    })
                    .flatten(),
                kernel,
                data,
            },
            RecordType::COMM => SideBand::Comm {
                pid,
                tid,
                comm: cstr_at(body, 8)?,
                exec: misc_bits & COMM_EXEC != 0,
            },
            RecordType::FORK => SideBand::Fork {
                pid,
                ppid: tid,
                tid: u32_at(body, 8)?,
            },
            RecordType::EXIT => SideBand::Exit {
                pid,
                tid: u32_at(body, 8)?,
            },
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_that_is_not_utf8_keeps_its_bytes() {
        for bytes in [
            &b"/usr/bin/ls"[..],
            b"/tmp/d\xff/p",
            b"\xc3",
            b"/a\xe2\x82/\xf0\x9f\x98\x80x",
        ] {
            let text = path_text(bytes);
            assert_eq!(path_bytes(&text), bytes, "{text:?}");
        }
        assert_eq!(path_text(b"/usr/bin/ls"), "/usr/bin/ls");
    }

    #[test]
    fn short_or_foreign_records_are_none() {
        assert_eq!(SideBand::parse(RecordType::MMAP2, 0, &[0; 20]), None);
        assert_eq!(SideBand::parse(RecordType::SAMPLE, 0, &[0; 64]), None);
        let mut comm = vec![7, 0, 0, 0, 8, 0, 0, 0];
        comm.extend(b"deep\0\0\0\0");
        assert_eq!(
            SideBand::parse(RecordType::COMM, COMM_EXEC, &comm),
            Some(SideBand::Comm {
                pid: 7,
                tid: 8,
                comm: "deep".into(),
                exec: true
            })
        );
    }
}
