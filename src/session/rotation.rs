//! `--switch-output`: each output becomes `OUTPUT.<timestamp>` when the next
//! one starts (and the last at the end), as perf names them
//! (`%Y%m%d%H%M%S` and centiseconds); `--switch-max-files N` keeps the
//! newest N (files or `--threads` directories), removing only outputs this
//! recording sealed; their names go at once, their blocks on a thread of
//! their own (`Displaced::free_in_background`), off the drain.

use crate::notes::Notes;
use std::io;
use std::path::{Path, PathBuf};

use super::error::RecordError;
use super::place::Displaced;

pub struct Rotation {
    path: PathBuf,
    keep: Option<usize>,
    /// Sealed outputs still on disk, oldest first.
    kept: Vec<PathBuf>,
    /// Every output sealed, in order (for the summary).
    pub written: Vec<String>,
    /// Outputs removed by `--switch-max-files`.
    pub removed: usize,
}

/// Local time as perf writes it in switch-output names.
pub fn timestamp() -> String {
    let mut tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    // SAFETY: gettimeofday writes one timeval we own; tz is null.
    unsafe { libc::gettimeofday(&mut tv, std::ptr::null_mut()) };
    // SAFETY: tm is plain data; localtime_r fills it from a valid time_t.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are to locals of the right types.
    unsafe { libc::localtime_r(&tv.tv_sec, &mut tm) };
    format!(
        "{:04}{:02}{:02}{:02}{:02}{:02}{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        tv.tv_usec / 10_000
    )
}

/// `path.<timestamp>`, with `.N` added if that is taken.
pub fn stamped(path: &Path) -> PathBuf {
    let base = format!("{}.{}", path.display(), timestamp());
    let mut name = PathBuf::from(&base);
    let mut n = 1;
    while name.exists() {
        name = PathBuf::from(format!("{base}.{n}"));
        n += 1;
    }
    name
}

impl Rotation {
    pub fn new(path: &Path, keep: Option<usize>) -> Rotation {
        Rotation {
            path: path.to_path_buf(),
            keep,
            kept: Vec::new(),
            written: Vec::new(),
            removed: 0,
        }
    }

    /// The output at OUTPUT is finished: moves it to its timestamped name
    /// and removes the oldest beyond `--switch-max-files`. `None` where
    /// OUTPUT is gone (moved or deleted while written: it was finished
    /// where it is now); a note says so, and the recording goes on, as
    /// perf's does.
    pub fn seal(&mut self, notes: &mut Notes) -> io::Result<Option<PathBuf>> {
        let name = stamped(&self.path);
        match std::fs::rename(&self.path, &name) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                notes.push(format!(
                    "--switch-output: {} was moved or deleted while it was written; it was finished where it went, and the recording went on",
                    self.path.display()
                ));
                return Ok(None);
            }
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!(
                        "renaming {} to {}: {e}",
                        self.path.display(),
                        name.display()
                    ),
                ))
            }
        }
        self.written.push(name.display().to_string());
        self.kept.push(name.clone());
        if let Some(k) = self.keep {
            while self.kept.len() > k {
                // Only outputs this recording sealed: a file, or a
                // `--threads` directory. Its name goes now, its blocks off
                // the drain thread (freeing a large file takes the
                // filesystem long enough to overflow the rings).
                let old = self.kept.remove(0);
                let mut freed = Displaced::default();
                let gone = match std::fs::symlink_metadata(&old) {
                    Ok(m) if m.is_dir() => freed.remove_dir(&old),
                    Ok(_) => freed.remove_file(&old),
                    Err(e) => Err(e),
                };
                match gone {
                    Ok(()) => self.removed += 1,
                    // Moved or removed by someone else: nothing to remove.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => {
                        return Err(io::Error::new(
                            e.kind(),
                            format!("--switch-max-files: removing {}: {e}", old.display()),
                        ))
                    }
                }
                freed.free_in_background();
            }
        }
        Ok(Some(name))
    }
}

impl Rotation {
    /// At a switch, once the output at OUTPUT is finished: it is sealed
    /// ([`seal`](Self::seal)), and only then does `start` make the next
    /// one OUTPUT (its side band, its name). A failure says what it was
    /// doing and that the sealed output is kept.
    pub fn seal_and_start(
        &mut self,
        notes: &mut Notes,
        start: impl FnOnce() -> io::Result<()>,
    ) -> Result<(), RecordError> {
        let failed = |what: String, err| RecordError::Io {
            what: format!("--switch-output: {what}"),
            err,
        };
        let sealed = self
            .seal(notes)
            .map_err(|e| failed("naming the finished output".into(), e))?;
        start().map_err(|e| {
            let what = match &sealed {
                Some(p) => format!(
                    "starting the next output failed ({} is finished and opens in perf)",
                    p.display()
                ),
                None => "starting the next output failed".to_string(),
            };
            failed(what, e)
        })
    }

    /// At the end: the last output sealed like the others (perf's "Dump"),
    /// and the notes on what was named and removed.
    pub fn seal_last(&mut self, notes: &mut Notes) {
        if let Err(e) = self.seal(notes) {
            notes.push(format!(
                "--switch-output: naming the last output failed: {e}"
            ));
        }
        if self.removed > 0 {
            notes.push(format!(
                "--switch-max-files: removed the {} oldest outputs",
                self.removed
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_perfs_and_old_ones_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("perf.data");
        let mut r = Rotation::new(&path, Some(2));
        for i in 0..4 {
            std::fs::write(&path, format!("{i}")).unwrap();
            let sealed = r.seal(&mut Notes::new()).unwrap().unwrap();
            let name = sealed.file_name().unwrap().to_string_lossy().into_owned();
            let ts = name.strip_prefix("perf.data.").unwrap();
            assert!(
                ts.len() >= 16 && ts[..16].bytes().all(|b| b.is_ascii_digit()),
                "{name}"
            );
            assert!(!path.exists());
        }
        assert_eq!(r.written.len(), 4);
        assert_eq!(r.removed, 2);
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 2, "the newest two");
    }

    #[test]
    fn a_moved_output_is_a_note_and_a_moved_old_one_is_not_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("perf.data");
        let mut r = Rotation::new(&path, Some(1));
        let mut notes = Notes::new();
        std::fs::write(&path, "0").unwrap();
        let first = r.seal(&mut notes).unwrap().unwrap();
        // The user moves the sealed one away, and then the current one.
        std::fs::rename(&first, dir.path().join("mine")).unwrap();
        std::fs::write(&path, "1").unwrap();
        std::fs::rename(&path, dir.path().join("mine-too")).unwrap();
        assert_eq!(r.seal(&mut notes).unwrap(), None);
        let said = notes.clone().into_vec();
        assert!(said[0].contains("moved or deleted"), "{said:?}");
        std::fs::write(&path, "2").unwrap();
        assert!(r.seal(&mut notes).unwrap().is_some(), "the next one");
        assert!(
            dir.path().join("mine").exists(),
            "not the recording's to remove"
        );
    }
}
