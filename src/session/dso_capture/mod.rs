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

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::format::side_band::SideBand;
use crate::format::RecordType;
use crate::synth::build_id;

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
    bytes: u64,
    /// Why files could not be kept: (path, reason).
    missed: Vec<(String, String)>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);
static CHANGED: Condvar = Condvar::new();

/// Starts the capture into the build-id cache at `dir`.
pub fn start(dir: PathBuf) {
    let (tx, rx) = sync_channel(QUEUE);
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
    let theirs = [
        PathBuf::from(format!("/proc/{pid}/map_files/{start:x}-{:x}", start + len)),
        PathBuf::from(format!("/proc/{pid}/root{path}")),
    ];
    let source = theirs
        .iter()
        .find(|p| std::fs::metadata(p).is_ok())?
        .clone();
    let theirs_md = std::fs::metadata(&source).ok()?;
    let ours = std::fs::metadata(&path).ok();
    if ours.is_some_and(|m| (m.dev(), m.ino()) == (theirs_md.dev(), theirs_md.ino())) {
        return None; // the end-of-recording pass reaches it
    }
    let keep = || -> Result<Vec<u8>, String> {
        let id = build_id::of_file(&source).ok_or("no build id")?;
        if build_id.as_ref().is_some_and(|b| *b != id) {
            return Err("another file than the one mapped".into());
        }
        let size = theirs_md.len();
        if size > MAX_FILE {
            return Err(format!("{size} bytes, over the {MAX_FILE}-byte limit"));
        }
        let full = STATE
            .lock()
            .ok()
            .and_then(|g| g.as_ref().map(|s| s.bytes + size > MAX_TOTAL))
            .unwrap_or(true);
        if full {
            return Err(format!("the capture's {MAX_TOTAL} bytes are used"));
        }
        let hexid = build_id::hex(&id);
        let rel = path.trim_start_matches('/');
        let at = dir.join(rel).join(&hexid);
        std::fs::create_dir_all(&at).map_err(|e| e.to_string())?;
        super::build_ids::cache::cache_elf(&at, &source, &id).map_err(|e| e.to_string())?;
        super::build_ids::cache::link_build_id(dir, rel, &hexid).map_err(|e| e.to_string())?;
        update(|s| s.bytes += size);
        Ok(id)
    };
    match keep() {
        Ok(id) => {
            update(|s| {
                s.kept.insert(path.clone(), id);
            });
            None
        }
        Err(why) => Some((path, why)),
    }
}
