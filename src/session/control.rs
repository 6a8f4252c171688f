//! `--control=fifo:CTL[,ACK]` / `--control=fd:CTL[,ACK]`: perf's control
//! channel, for recording one phase of a benchmark. Commands, one per line:
//! `enable` and `disable` (the sampling events; mmap/comm tracking goes on),
//! `snapshot` (the flight recorder writes what it holds), `stop` (end the
//! recording), `ping`; each is answered with `ack\n` on the ack channel, as
//! perf does.
//!
//! With `--control` (and `-D`) a `dummy` tracking event keeps the mmap,
//! comm and task records coming (`event::open`), so a phase enabled later
//! still has the maps made while sampling was off (`limits::Gate`).
//! The channel is read as hostile input: lines of at most 256 bytes, 64 KiB
//! read per tick; `ack` lines are ignored and unknown commands get no
//! answer, as perf's (tests/it/hostile_surroundings.rs).

use crate::notes::Notes;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::str::FromStr;

/// Where commands come from and acks go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ControlSpec {
    /// `fifo:CTL[,ACK]`: named FIFOs, opened read-write and non-blocking.
    Fifo {
        /// The FIFO commands are read from.
        ctl: PathBuf,
        /// The FIFO acks are written to, if any.
        ack: Option<PathBuf>,
    },
    /// `fd:CTL[,ACK]`: descriptors inherited from the caller (duplicated).
    Fd {
        /// The descriptor commands are read from.
        ctl: RawFd,
        /// The descriptor acks are written to, if any.
        ack: Option<RawFd>,
    },
}

impl FromStr for ControlSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("--control={s}: use fifo:CTL-FIFO[,ACK-FIFO] or fd:CTL-FD[,ACK-FD]");
        let (kind, rest) = s.split_once(':').ok_or_else(bad)?;
        let (ctl, ack) = match rest.split_once(',') {
            Some((c, a)) => (c, Some(a)),
            None => (rest, None),
        };
        if ctl.is_empty() || ack.is_some_and(str::is_empty) {
            return Err(bad());
        }
        match kind {
            "fifo" => Ok(ControlSpec::Fifo {
                ctl: ctl.into(),
                ack: ack.map(PathBuf::from),
            }),
            "fd" => {
                let fd = |x: &str| x.parse::<RawFd>().ok().filter(|&n| n >= 0).ok_or_else(bad);
                Ok(ControlSpec::Fd {
                    ctl: fd(ctl)?,
                    ack: ack.map(fd).transpose()?,
                })
            }
            _ => Err(bad()),
        }
    }
}

/// A command read from the channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlCommand {
    Enable,
    Disable,
    Stop,
    Ping,
    /// Flight recorder: write what it holds now.
    Snapshot,
}

/// The longest command line taken; the rest of a longer one is dropped.
pub const MAX_LINE: usize = 256;
/// Unknown commands reported by name; later ones are only counted.
const MAX_REPORTED: u64 = 8;
/// Bytes read from the channel per call (the rest waits for the next).
const MAX_READ: usize = 64 * 1024;

/// The open control channel.
pub struct Channel {
    ctl: File,
    ack: Option<File>,
    /// Bytes of a command not yet ended by a newline (at most MAX_LINE).
    partial: Vec<u8>,
    /// Dropping the rest of an overlong line, up to its newline.
    discarding: bool,
    /// Overlong lines and unknown commands seen (for bounded reports).
    overlong: u64,
    unknown: u64,
}

/// Opens a FIFO read-write and non-blocking: it never blocks waiting for the
/// other side and never reports hang-up when a writer closes (we are one).
fn open_fifo(p: &PathBuf) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(p)
        .map_err(|e| io::Error::new(e.kind(), format!("--control: {}: {e}", p.display())))
}

impl Channel {
    pub fn open(spec: &ControlSpec) -> io::Result<Channel> {
        let (ctl, ack) = match spec {
            ControlSpec::Fifo { ctl, ack } => {
                (open_fifo(ctl)?, ack.as_ref().map(open_fifo).transpose()?)
            }
            ControlSpec::Fd { ctl, ack } => {
                let dup = |fd: RawFd| -> io::Result<File> {
                    // SAFETY: fcntl(F_DUPFD_CLOEXEC) on an fd number the user
                    // gave; it fails cleanly if the fd is not open.
                    let n = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
                    if n < 0 {
                        let e = io::Error::last_os_error();
                        return Err(io::Error::new(e.kind(), format!("--control: fd {fd}: {e}")));
                    }
                    // SAFETY: n is a new descriptor we own.
                    Ok(unsafe { File::from_raw_fd(n) })
                };
                let c = dup(*ctl)?;
                // SAFETY: sets O_NONBLOCK on our own duplicate.
                unsafe {
                    let fl = libc::fcntl(c.as_raw_fd(), libc::F_GETFL);
                    libc::fcntl(c.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK);
                }
                (c, ack.map(dup).transpose()?)
            }
        };
        Ok(Channel {
            ctl,
            ack,
            partial: Vec::with_capacity(MAX_LINE + 1),
            discarding: false,
            overlong: 0,
            unknown: 0,
        })
    }

    pub fn fd(&self) -> RawFd {
        self.ctl.as_raw_fd()
    }

    /// Every whole command waiting, in order (at most MAX_READ bytes of
    /// them per call). `notes` gets what the user should hear: the first
    /// few unknown commands (perf answers none of them: no ack), and lines
    /// over MAX_LINE bytes, whose rest is dropped. `ack` lines — perf's own
    /// answer, read back when the control and ack channels are one — are
    /// ignored, as perf ignores them.
    pub fn read(&mut self, notes: &mut Notes) -> Vec<ControlCommand> {
        let mut buf = [0u8; 4096];
        let mut out = Vec::new();
        let mut taken = 0;
        while taken < MAX_READ {
            let n = match self.ctl.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break, // WouldBlock: nothing more now
            };
            taken += n;
            for &b in &buf[..n] {
                let end = b == b'\n' || b == 0;
                if self.discarding {
                    self.discarding = !end;
                    continue;
                }
                if !end {
                    if self.partial.len() < MAX_LINE {
                        self.partial.push(b);
                        continue;
                    }
                    self.partial.clear();
                    self.discarding = true;
                    self.overlong += 1;
                    if self.overlong == 1 {
                        notes.push(format!(
                            "--control: a command line longer than {MAX_LINE} bytes was dropped \
                             (later ones are dropped without a word)"
                        ));
                    }
                    continue;
                }
                let line = std::mem::take(&mut self.partial);
                self.partial.reserve(MAX_LINE + 1);
                if let Some(c) = self.command(&line, notes) {
                    out.push(c);
                }
            }
        }
        out
    }

    fn command(&mut self, line: &[u8], notes: &mut Notes) -> Option<ControlCommand> {
        let cmd = String::from_utf8_lossy(line);
        Some(match cmd.trim() {
            "" | "ack" => return None,
            "enable" => ControlCommand::Enable,
            "disable" => ControlCommand::Disable,
            "stop" => ControlCommand::Stop,
            "ping" => ControlCommand::Ping,
            "snapshot" => ControlCommand::Snapshot,
            other => {
                self.unknown += 1;
                if self.unknown <= MAX_REPORTED {
                    let shown: String = other.chars().take(64).collect();
                    notes.push(format!(
                        "--control: unknown command {shown:?} (perfz knows enable, disable, \
                         snapshot, stop, ping; like perf it does not answer others){}",
                        if self.unknown == MAX_REPORTED {
                            "; further unknown commands are not reported"
                        } else {
                            ""
                        }
                    ));
                }
                return None;
            }
        })
    }

    /// Answers a command, as perf does.
    pub fn ack(&mut self) {
        if let Some(a) = self.ack.as_mut() {
            let _ = a.write_all(b"ack\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_like_perf() {
        assert_eq!(
            "fifo:/tmp/c,/tmp/a".parse(),
            Ok(ControlSpec::Fifo {
                ctl: "/tmp/c".into(),
                ack: Some("/tmp/a".into())
            })
        );
        assert_eq!("fd:10".parse(), Ok(ControlSpec::Fd { ctl: 10, ack: None }));
        for bad in ["fifo:", "pipe:x", "fd:x", "fd:3,", "fifo"] {
            assert!(bad.parse::<ControlSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn commands_come_whole_and_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let ctl = dir.path().join("ctl");
        let ack = dir.path().join("ack");
        for p in [&ctl, &ack] {
            let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
            // SAFETY: mkfifo reads a NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        }
        let mut ch = Channel::open(&ControlSpec::Fifo {
            ctl: ctl.clone(),
            ack: Some(ack.clone()),
        })
        .unwrap();
        let mut w = std::fs::OpenOptions::new().write(true).open(&ctl).unwrap();
        w.write_all(b"enable\ndisa").unwrap();
        let mut unknown = Notes::new();
        assert_eq!(ch.read(&mut unknown), vec![ControlCommand::Enable]);
        w.write_all(b"ble\nbogus\nack\nstop\n").unwrap();
        assert_eq!(
            ch.read(&mut unknown),
            vec![ControlCommand::Disable, ControlCommand::Stop]
        );
        let unknown = unknown.into_vec();
        assert_eq!(unknown.len(), 1);
        assert!(unknown[0].contains("\"bogus\""), "{unknown:?}");
        ch.ack();
        let mut r = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&ack)
            .unwrap();
        let mut got = String::new();
        let _ = r.read_to_string(&mut got);
        // Ours alone: like perf, no answer to an unknown command.
        assert_eq!(got, "ack\n");
    }
}
