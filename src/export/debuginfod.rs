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

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::synth::build_id;

/// How long all the requests of one export may take together.
pub const TOTAL: Duration = Duration::from_secs(30);

/// A negative cache entry (elfutils': an empty file) younger than this
/// means the servers had nothing (elfutils' default `cache_miss_s`).
const MISS_KEPT: Duration = Duration::from_secs(600);

type Pending = Arc<OnceLock<Option<PathBuf>>>;

/// The servers, the cache, and what was asked of them this export.
pub struct Debuginfod {
    urls: Vec<String>,
    cache: PathBuf,
    timeout: Duration,
    until: Instant,
    asked: Mutex<HashMap<(String, &'static str), Pending>>,
    /// What went wrong, once each (said at the end of the export).
    trouble: Mutex<Vec<String>>,
}

impl Debuginfod {
    /// The client for `urls` (space-separated, as `$DEBUGINFOD_URLS`);
    /// None where there is none.
    pub fn new(urls: &str) -> Option<Debuginfod> {
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
            until: Instant::now() + TOTAL,
            asked: Mutex::new(HashMap::new()),
            trouble: Mutex::new(Vec::new()),
        })
    }

    /// What went wrong asking the servers, once each.
    pub fn trouble(&self) -> Vec<String> {
        self.trouble.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// The debug file of build id `id` (of the file at `path`, for the message).
    pub fn debuginfo(&self, id: &[u8], path: &str) -> Option<PathBuf> {
        self.find(id, "debuginfo", path)
    }

    /// The file of build id `id` itself.
    pub fn executable(&self, id: &[u8], path: &str) -> Option<PathBuf> {
        self.find(id, "executable", path)
    }

    /// `CACHE/ID/KIND`: cached, else fetched (once an export; callers on
    /// other threads wait for the first).
    fn find(&self, id: &[u8], kind: &'static str, path: &str) -> Option<PathBuf> {
        let hex = build_id::hex(id);
        let at = self.cache.join(&hex).join(kind);
        match std::fs::metadata(&at) {
            Ok(m) if m.len() > 0 => return Some(at),
            Ok(m)
                if m.modified()
                    .is_ok_and(|t| t.elapsed().unwrap_or_default() < MISS_KEPT) =>
            {
                return None
            }
            _ => {}
        }
        let pending = {
            let mut asked = self.asked.lock().ok()?;
            asked.entry((hex.clone(), kind)).or_default().clone()
        };
        pending
            .get_or_init(|| self.fetch(&hex, kind, path, &at))
            .clone()
    }

    /// Asks each server in turn for `KIND` of `hex`, into `at`.
    fn fetch(&self, hex: &str, kind: &str, path: &str, at: &Path) -> Option<PathBuf> {
        let mut said = Vec::new();
        for url in &self.urls {
            let left = self.until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                said.push(format!(
                    "debuginfod: out of time ({} s for all requests)",
                    TOTAL.as_secs()
                ));
                break;
            }
            if !url.starts_with("http://") {
                said.push(format!(
                    "debuginfod: {url} left out (perfz asks http:// servers only)"
                ));
                continue;
            }
            say!("perfz export: debuginfod: {kind} of {path} ({hex}) from {url}");
            match get(
                &format!("{url}/buildid/{hex}/{kind}"),
                self.timeout.min(left),
                at,
            ) {
                Ok(()) => return Some(at.to_path_buf()),
                Err(why) => said.push(format!("debuginfod: {kind} of {path} from {url}: {why}")),
            }
        }
        if let Ok(mut t) = self.trouble.lock() {
            for s in said {
                if !t.contains(&s) {
                    t.push(s);
                }
            }
        }
        None
    }
}

/// GETs `url` into `at` (written whole under another name first, as
/// elfutils writes its cache), within `timeout`.
fn get(url: &str, timeout: Duration, at: &Path) -> Result<(), String> {
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .build();
    let agent: ureq::Agent = config.into();
    let mut resp = agent.get(url).call().map_err(|e| e.to_string())?;
    if resp.status() != 200 {
        return Err(format!("HTTP {}", resp.status().as_u16()));
    }
    let dir = at.parent().ok_or("no cache directory")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".perfz-")
        .tempfile_in(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut body = resp.body_mut().with_config().limit(u64::MAX).reader();
    std::io::copy(&mut body, &mut tmp).map_err(|e| e.to_string())?;
    tmp.flush().map_err(|e| e.to_string())?;
    tmp.persist(at).map_err(|e| e.to_string())?;
    Ok(())
}

/// elfutils' client cache directory.
pub fn cache_dir() -> PathBuf {
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
