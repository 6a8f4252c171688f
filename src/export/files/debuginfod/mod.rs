//! A debuginfod client for `perfz export`: a file's debug symbols (or the
//! file itself) by its build id, from the servers of `$DEBUGINFOD_URLS`
//! (or `--debuginfod=URLS`), as elfutils' libdebuginfod fetches them
//! (`URL/buildid/ID/debuginfo`, `/executable`) and where it caches them
//! (`$DEBUGINFOD_CACHE_PATH`, else `~/.debuginfod_client_cache` where it
//! exists, else `$XDG_CACHE_HOME/debuginfod_client`, else
//! `~/.cache/debuginfod_client`; `CACHE/ID/debuginfo`), so each tool's
//! downloads serve the other. Each request has a deadline
//! (`$DEBUGINFOD_TIMEOUT` seconds, 5 by default, for the whole request),
//! all of them together [`TOTAL`]; each build id is asked for once an
//! export, with one line on stderr. Plain HTTP only: an `https://` server
//! is left out (said once).
//!
//! Nothing fetched is trusted: an answer is kept only when it is whole,
//! no larger than `$DEBUGINFOD_MAXSIZE` bytes (else 4 GiB; http.rs) and
//! an ELF file of the build id asked for (verify.rs). It is written under
//! a temporary name in the cache and renamed only then, so anything else
//! leaves nothing behind and is asked for again next time. A cached file
//! of another build id is not used either.

mod http;
mod verify;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::synth::build_id;
use http::Failed;

/// How long all the requests of one export may take together.
pub(crate) const TOTAL: Duration = Duration::from_secs(30);

/// A negative cache entry (elfutils': an empty file) younger than this
/// means the servers had nothing (elfutils' default `cache_miss_s`).
const MISS_KEPT: Duration = Duration::from_secs(600);

type Pending = Arc<OnceLock<Option<PathBuf>>>;

/// The servers, the cache, and what was asked of them this export.
pub(crate) struct Debuginfod {
    urls: Vec<String>,
    cache: PathBuf,
    timeout: Duration,
    /// The most bytes an answer may have.
    max_size: u64,
    until: Instant,
    asked: Mutex<HashMap<(String, &'static str), Pending>>,
    /// What went wrong, once each (said at the end of the export).
    trouble: Mutex<Vec<String>>,
}

/// What one request asks for, as messages name it: `KIND of PATH (ID)`.
struct Wanted<'a> {
    kind: &'a str,
    path: &'a str,
    hex: String,
}

impl std::fmt::Display for Wanted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} of {} ({})", self.kind, self.path, self.hex)
    }
}

impl Debuginfod {
    /// The client for `urls` (space-separated, as `$DEBUGINFOD_URLS`);
    /// None where there is none.
    pub(crate) fn new(urls: &str) -> Option<Debuginfod> {
        let urls: Vec<String> = urls
            .split_whitespace()
            .map(|u| u.trim_end_matches('/').to_string())
            .collect();
        let timeout = std::env::var("DEBUGINFOD_TIMEOUT")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .filter(|&s| s > 0)
            .map_or(Duration::from_secs(5), Duration::from_secs);
        (!urls.is_empty()).then(|| Debuginfod {
            urls,
            cache: cache_dir(),
            timeout,
            max_size: http::max_size(),
            until: Instant::now() + TOTAL,
            asked: Mutex::new(HashMap::new()),
            trouble: Mutex::new(Vec::new()),
        })
    }

    /// What went wrong asking the servers, once each.
    pub(crate) fn trouble(&self) -> Vec<String> {
        self.trouble.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// The debug file of build id `id` (of the file at `path`, for the message).
    pub(crate) fn debuginfo(&self, id: &[u8], path: &str) -> Option<PathBuf> {
        self.find(id, "debuginfo", path)
    }

    /// The file of build id `id` itself.
    pub(crate) fn executable(&self, id: &[u8], path: &str) -> Option<PathBuf> {
        self.find(id, "executable", path)
    }

    /// `CACHE/ID/KIND`: cached, else fetched (once an export; callers on
    /// other threads wait for the first).
    fn find(&self, id: &[u8], kind: &'static str, path: &str) -> Option<PathBuf> {
        let hex = build_id::hex(id);
        let at = self.cache.join(&hex).join(kind);
        if let Some(known) = self.cached(&at, id) {
            return known;
        }
        let pending = {
            let mut asked = self.asked.lock().ok()?;
            asked.entry((hex.clone(), kind)).or_default().clone()
        };
        let wanted = Wanted { kind, path, hex };
        pending.get_or_init(|| self.fetch(id, &wanted, &at)).clone()
    }

    /// What the cache knows of `at`: the file, where it is of build id
    /// `id`; that the servers had nothing, where a recent miss says so
    /// (elfutils' empty file); None where the servers are to be asked.
    fn cached(&self, at: &Path, id: &[u8]) -> Option<Option<PathBuf>> {
        let m = std::fs::metadata(at).ok()?;
        if m.len() == 0 {
            let recent = m
                .modified()
                .is_ok_and(|t| t.elapsed().unwrap_or_default() < MISS_KEPT);
            return recent.then_some(None);
        }
        match verify::check(at, id) {
            Ok(()) => Some(Some(at.to_path_buf())),
            Err(bad) => {
                let at = at.display();
                self.say(format!("debuginfod: the cache's {at} is {bad}: not used"));
                None
            }
        }
    }

    /// Asks each server in turn for `wanted` (of build id `id`), into `at`.
    fn fetch(&self, id: &[u8], wanted: &Wanted, at: &Path) -> Option<PathBuf> {
        for url in &self.urls {
            let left = self.until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                self.say(format!(
                    "debuginfod: out of time ({} s for all requests)",
                    TOTAL.as_secs()
                ));
                break;
            }
            if !url.starts_with("http://") {
                self.say(format!(
                    "debuginfod: {url} left out (perfz asks http:// servers only)"
                ));
                continue;
            }
            say!("perfz export: debuginfod: asking {url} for the {wanted}");
            match self.ask(url, id, wanted, at, left) {
                Ok(()) => return Some(at.to_path_buf()),
                Err(why) => self.say(self.failed(why, url, wanted)),
            }
        }
        None
    }

    /// `url`'s answer for `wanted`, within `left` of the total time: kept
    /// at `at` only when it is whole, within the size limit, and an ELF
    /// file of build id `id`.
    fn ask(
        &self,
        url: &str,
        id: &[u8],
        w: &Wanted,
        at: &Path,
        left: Duration,
    ) -> Result<(), Failed> {
        let dir = at
            .parent()
            .ok_or_else(|| Failed::Other("no cache directory".into()))?;
        let url = format!("{url}/buildid/{}/{}", w.hex, w.kind);
        let got = http::get(&url, self.timeout.min(left), self.max_size, dir)?;
        verify::check(got.path(), id).map_err(Failed::Wrong)?;
        got.persist(at)
            .map_err(|e| Failed::Other(format!("{}: {}", at.display(), e.error)))?;
        Ok(())
    }

    /// What is said of `url`'s answer for `w` that was not kept.
    fn failed(&self, why: Failed, url: &str, w: &Wanted) -> String {
        let limit = self.max_size;
        match why {
            Failed::NotFound => format!("debuginfod: {w}: not found on {url}"),
            Failed::Declared(n) => format!(
                "debuginfod: {url} declared {n} bytes for the {w}, over the limit of {limit} \
                 ($DEBUGINFOD_MAXSIZE): not fetched"
            ),
            Failed::TooLong => format!(
                "debuginfod: {url} answered more than {limit} bytes for the {w} \
                 ($DEBUGINFOD_MAXSIZE): dropped"
            ),
            Failed::Wrong(bad) => {
                format!("debuginfod: {url} answered {bad} for {}: dropped", w.hex)
            }
            Failed::Other(e) => format!("debuginfod: asking {url} for the {w} failed: {e}"),
        }
    }

    /// Notes `s`, to be said at the end of the export, once.
    fn say(&self, s: String) {
        if let Ok(mut t) = self.trouble.lock() {
            if !t.contains(&s) {
                t.push(s);
            }
        }
    }
}

/// elfutils' client cache directory.
pub(crate) fn cache_dir() -> PathBuf {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(p) = var("DEBUGINFOD_CACHE_PATH") {
        return p;
    }
    let home = var("HOME").unwrap_or_else(|| PathBuf::from("/"));
    let legacy = home.join(".debuginfod_client_cache");
    if legacy.is_dir() {
        return legacy;
    }
    match var("XDG_CACHE_HOME") {
        Some(x) => x.join("debuginfod_client"),
        None => home.join(".cache/debuginfod_client"),
    }
}
