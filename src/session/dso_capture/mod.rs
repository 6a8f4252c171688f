//! The DSOs a recording may not reach at its end, kept while their
//! processes live: a program in a container's private mount namespace (its
//! binary on a tmpfs only that namespace sees), a deleted or replaced file.
//! The drain offers each executable map record it sees
//! ([`crate::transform::scan::capture_maps_to`]); a thread of its own, off the
//! push path, looks at each map through the process's own view
//! (`/proc/PID/map_files/START-END`, else `/proc/PID/root/PATH`), and where
//! the recorder's path does not name the same file, reads it there, checks
//! its build id and puts it into the build-id cache in perf's layout, so
//! `perf report`, `perf archive` and `perfz export` name its frames. Bounded
//! in bytes and time; what could not be kept is said once in the summary.
//! A path is resolved in the process's root, never the host's
//! ([`source`]), and a file is copied from the descriptor its size was
//! checked on, at most that size ([`copy`]): what the recorder keeps is
//! what the process could read, within the limits.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::format::side_band::SideBand;
use crate::format::RecordType;

pub(super) mod cache;
mod copy;
mod source;
#[cfg(test)]
mod tests;

use copy::{Budget, Checked};

/// Map records waiting for the capture thread; more are dropped (counted).
const QUEUE: usize = 4096;
/// The largest DSO kept.
const MAX_FILE: u64 = 512 << 20;
/// The most bytes kept by one recording.
const MAX_TOTAL: u64 = 2 << 30;
/// How long the end of a recording waits for the capture to catch up.
const SETTLE: Duration = Duration::from_secs(10);

/// What the capture did; shared with the recording's end.
#[derive(Default)]
struct State {
    /// Map records looked at (of those the drain offered).
    done: u64,
    /// Offered before this capture started (the counters are the process's).
    offered_before: u64,
    running: bool,
    /// Build ids of the files kept, by the path the recording names.
    kept: HashMap<String, Vec<u8>>,
    /// Why files could not be kept: (path, reason).
    missed: Vec<(String, String)>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);
/// The bytes the recording's capture copied, of [`MAX_TOTAL`].
static BUDGET: Budget = Budget::new(MAX_TOTAL);
static CHANGED: Condvar = Condvar::new();

/// Starts the capture into the build-id cache at `dir`.
pub fn start(dir: PathBuf) {
    let (tx, rx) = sync_channel(QUEUE);
    BUDGET.reset();
    if let Ok(mut g) = STATE.lock() {
        *g = Some(State {
            running: true,
            offered_before: crate::transform::scan::offered().0,
            ..State::default()
        });
    }
    crate::transform::scan::capture_maps_to(Some(tx));
    let _ = std::thread::Builder::new()
        .name("perfz-dso-capture".into())
        .spawn(move || run(rx, &dir));
}

/// Waits (at most [`SETTLE`]) until every map record sent so far was
/// looked at.
pub fn settle() {
    let deadline = Instant::now() + SETTLE;
    let Ok(mut g) = STATE.lock() else { return };
    while let Some(s) = g.as_ref() {
        let left = deadline.saturating_duration_since(Instant::now());
        let sent = crate::transform::scan::offered().0 - s.offered_before;
        if !s.running || s.done >= sent || left.is_zero() {
            return;
        }
        g = match CHANGED.wait_timeout(g, left) {
            Ok((g, _)) => g,
            Err(_) => return,
        };
    }
}

/// The build id of a file the capture kept under `path`.
pub fn build_id_of(path: &str) -> Option<Vec<u8>> {
    STATE.lock().ok()?.as_ref()?.kept.get(path).cloned()
}

/// Stops the capture; the line for the summary when something could not be
/// kept.
pub fn stop() -> Option<String> {
    crate::transform::scan::capture_maps_to(None);
    settle();
    let s = STATE.lock().ok()?.take()?;
    let dropped = crate::transform::scan::offered().1;
    if let Some((path, why)) = s.missed.first() {
        return Some(format!(
            "{} DSO(s) only their processes could reach were not kept for symbols ({path}: {why}{})",
            s.missed.len(),
            if s.missed.len() > 1 { ", ..." } else { "" }
        ));
    }
    (dropped > 0).then(|| {
        format!("{dropped} map(s) came faster than their DSOs could be kept; processes gone since then may have unnamed frames")
    })
}

fn update(f: impl FnOnce(&mut State)) {
    if let Ok(mut g) = STATE.lock() {
        if let Some(s) = g.as_mut() {
            f(s);
        }
    }
    CHANGED.notify_all();
}

fn run(rx: Receiver<Vec<u8>>, dir: &Path) {
    let mut seen: HashSet<(String, u32)> = HashSet::new();
    while let Ok(rec) = rx.recv() {
        if let Some(missed) = look_at(&rec, dir, &mut seen) {
            update(|s| s.missed.push(missed));
        }
        update(|s| s.done += 1);
    }
    update(|s| s.running = false);
}

/// Keeps the DSO of one map record where the recorder cannot reach it;
/// `Some((path, why))` when it had to and could not.
fn look_at(rec: &[u8], dir: &Path, seen: &mut HashSet<(String, u32)>) -> Option<(String, String)> {
    let type_ = RecordType(u32::from_le_bytes(rec.get(..4)?.try_into().ok()?));
    let misc = u16::from_le_bytes(rec.get(4..6)?.try_into().ok()?);
    let Some(SideBand::Map {
        pid,
        start,
        len,
        path,
        build_id,
        kernel: false,
        ..
    }) = SideBand::parse(type_, misc, rec.get(8..)?)
    else {
        return None;
    };
    if !path.starts_with('/') || !seen.insert((path.clone(), pid)) {
        return None;
    }
    let map = Mapped {
        pid,
        start,
        end: start + len,
        path: &path,
        build_id: build_id.as_deref(),
    };
    match capture(dir, &map, &BUDGET) {
        Ok(Some(id)) => {
            update(|s| {
                s.kept.insert(path.clone(), id);
            });
            None
        }
        Ok(None) => None,
        Err(why) => Some((path, why)),
    }
}

/// Keeps the file at `path` (the recorder's own view of it), which must
/// have build id `id`, in the cache at `dir`: the end-of-recording pass's
/// way, with the capture's checks and limits ([`copy::keep`]). The file is
/// opened once, never blocking (a FIFO put at the path) and never
/// following a symlink put at its last component.
pub fn keep_named(dir: &Path, path: &str, id: &[u8]) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(crate::format::side_band::os_path(path))
        .map_err(|e| e.to_string())?;
    let src = Checked::new(file).map_err(|e| e.to_string())?;
    copy::keep(dir, path, &src, Some(id), &BUDGET, MAX_FILE).map(drop)
}

/// A mapping of a map record, as the capture looks at it.
struct Mapped<'a> {
    pid: u32,
    start: u64,
    end: u64,
    path: &'a str,
    /// The build id the record carries, if any.
    build_id: Option<&'a [u8]>,
}

/// Keeps the file of `map` in the cache at `dir`, opened as its process
/// sees it ([`source::open_mapped`]), unless the recorder's own path names
/// the same file (the end-of-recording pass reaches it) or the process no
/// longer reaches it: `Ok(Some(build id))` when kept, `Err(why)` when it had
/// to be and could not.
fn capture(dir: &Path, map: &Mapped, budget: &Budget) -> Result<Option<Vec<u8>>, String> {
    let Ok(file) = source::open_mapped(map.pid, map.start, map.end, map.path) else {
        return Ok(None);
    };
    let src = Checked::new(file).map_err(|e| e.to_string())?;
    let ours = std::fs::metadata(crate::format::side_band::os_path(map.path)).ok();
    if ours.is_some_and(|m| (m.dev(), m.ino()) == src.dev_ino()) {
        return Ok(None);
    }
    copy::keep(dir, map.path, &src, map.build_id, budget, MAX_FILE).map(Some)
}
