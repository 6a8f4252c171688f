//! debuginfod answers not to be trusted (issue 48): another build's debug
//! file, a proxy's HTML page, an endless answer, a huge Content-Length, a
//! 404, from a fake server on 127.0.0.1 ([`super::fake_server`]); and
//! another build's debug file planted where perf looks for debug files.
//! Each leaves the frames as unnamed as no server would and nothing in
//! the cache.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::fake_server::{Answer, FakeServer};
use super::{built, named};
use crate::common::inferno::{parse, Folded};
use crate::common::*;

/// A recording of stripped deep.c, and another build of deep.c with
/// symbols (-O0: another build id, the same names at other addresses).
struct Recorded {
    dir: PathBuf,
    full: PathBuf,
    stripped: PathBuf,
    other: PathBuf,
    hex: String,
    other_hex: String,
    data: PathBuf,
    cache: PathBuf,
}

impl Recorded {
    fn new(name: &str) -> Recorded {
        require_recording();
        let dir = tempdir(name);
        let (full, stripped) = built(&dir);
        let other = dir.join("other/deep");
        std::fs::create_dir_all(other.parent().unwrap()).unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workload/deep.c");
        let st = Command::new("cc")
            .args(["-O0", "-g", "-fno-omit-frame-pointer", "-o"])
            .arg(&other)
            .arg(&src)
            .status_within();
        assert!(st.success(), "building deep.c at -O0");
        let id = |p: &Path| {
            let id = perfz::build_id::of_file(p).expect("gcc writes a build id");
            perfz::build_id::hex(&id)
        };
        let (hex, other_hex) = (id(&stripped), id(&other));
        assert_ne!(hex, other_hex);
        let data = dir.join("r.data");
        let (d, p) = (data.to_str().unwrap(), stripped.to_str().unwrap());
        perfz_ok(&["record", "-q", "-N", "-g", "-o", d, "--", p, "0.4"]);
        let cache = dir.join("client-cache");
        Recorded {
            dir,
            full,
            stripped,
            other,
            hex,
            other_hex,
            data,
            cache,
        }
    }

    /// `perfz export DATA ARGS` with the client cache in `dir`, no perf
    /// build-id cache, and `env` (DEBUGINFOD_URLS only where given).
    fn export(&self, args: &[&str], env: &[(&str, &str)]) -> (Folded, String) {
        let o = Command::new(env!("CARGO_BIN_EXE_perfz"))
            .arg("export")
            .arg(&self.data)
            .args(args)
            .env_remove("DEBUGINFOD_URLS")
            .env_remove("DEBUGINFOD_MAXSIZE")
            .env("DEBUGINFOD_CACHE_PATH", &self.cache)
            .env("PERF_BUILDID_DIR", self.dir.join("no-buildid-cache"))
            .envs(env.iter().copied())
            .output_within();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{err}");
        (parse(&String::from_utf8(o.stdout).unwrap()), err)
    }

    /// The export with `server`'s URL and `env`, checked to name no frame
    /// that no server leaves unnamed, to leave no file in the cache, and
    /// to have asked `server` for the debug file; what it said.
    fn export_from(&self, server: &FakeServer, env: &[(&str, &str)]) -> String {
        let (without, _) = self.export(&["--no-debuginfod"], &[]);
        assert_eq!(named(&without, "perfz_workload_leaf"), 0);
        let url = server.url();
        let env = [env, &[("DEBUGINFOD_URLS", url.as_str())]].concat();
        let (got, said) = self.export(&[], &env);
        assert_eq!(got, without, "frames named from a bad answer: {said}");
        assert_eq!(files_in(&self.cache), Vec::<PathBuf>::new(), "{said}");
        let asked = format!("/buildid/{}/debuginfo", self.hex);
        assert!(server.asked().contains(&asked), "{:?}", server.asked());
        said
    }
}

impl Drop for Recorded {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Every file under `dir` (none where it does not exist).
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            v.extend(files_in(&p));
        } else {
            v.push(p);
        }
    }
    v
}

/// A server answering `body` (200, application/octet-stream or `kind`)
/// for the debug file of `hex`, 404 for anything else.
fn serving(hex: &str, kind: &'static str, body: Vec<u8>) -> FakeServer {
    let want = format!("/buildid/{hex}/debuginfo");
    FakeServer::start(move |path| {
        if path == want {
            Answer::Canned("200 OK", kind, body.clone())
        } else {
            Answer::Canned("404 Not Found", "text/plain", b"not found".to_vec())
        }
    })
}

#[test]
fn another_builds_debug_file_is_dropped_and_not_cached() {
    let r = Recorded::new("debuginfod-other-build");
    let other = std::fs::read(&r.other).unwrap();
    let server = serving(&r.hex, "application/octet-stream", other);
    let said = r.export_from(&server, &[]);
    let dropped = format!(
        "debuginfod: {} answered a file of build id {} for {}: dropped",
        server.url(),
        r.other_hex,
        r.hex
    );
    assert_eq!(said.matches(&dropped).count(), 1, "{said}");
    // Not cached: the next export asks again.
    let asked = server.asked().len();
    r.export_from(&server, &[]);
    assert!(server.asked().len() > asked, "{:?}", server.asked());
}

#[test]
fn another_builds_file_in_the_cache_is_not_used_and_is_replaced() {
    let r = Recorded::new("debuginfod-cached-other");
    // An older perfz kept another build's file.
    let cached = r.cache.join(&r.hex).join("debuginfo");
    std::fs::create_dir_all(cached.parent().unwrap()).unwrap();
    std::fs::copy(&r.other, &cached).unwrap();
    let right = std::fs::read(&r.full).unwrap();
    let server = serving(&r.hex, "application/octet-stream", right.clone());
    let url = server.url();
    let (got, said) = r.export(&[], &[("DEBUGINFOD_URLS", url.as_str())]);
    let not_used = format!("is a file of build id {}: not used", r.other_hex);
    assert!(said.contains(&not_used), "{said}");
    let total: u64 = got.values().sum();
    assert!(named(&got, "perfz_workload_leaf") * 2 > total, "{said}");
    assert_eq!(files_in(&r.cache), std::slice::from_ref(&cached));
    assert_eq!(std::fs::read(&cached).unwrap(), right);
}

#[test]
fn an_html_page_is_dropped_and_not_cached() {
    let r = Recorded::new("debuginfod-html");
    let page = b"<html><body>Sign in to continue</body></html>".to_vec();
    let server = serving(&r.hex, "text/html", page);
    let said = r.export_from(&server, &[]);
    assert!(said.contains("not an ELF file"), "{said}");
    let asked = server.asked().len();
    r.export_from(&server, &[]);
    assert!(
        server.asked().len() > asked,
        "asked again: {:?}",
        server.asked()
    );
}

#[test]
fn an_endless_answer_stops_at_the_limit_and_leaves_nothing() {
    let r = Recorded::new("debuginfod-endless");
    let want = format!("/buildid/{}/debuginfo", r.hex);
    let server = FakeServer::start(move |path| match path == want {
        true => Answer::Endless(None),
        false => Answer::Canned("404 Not Found", "text/plain", Vec::new()),
    });
    let said = r.export_from(&server, &[("DEBUGINFOD_MAXSIZE", "1048576")]);
    assert!(
        said.contains("more than 1048576 bytes") && said.contains("DEBUGINFOD_MAXSIZE"),
        "{said}"
    );
}

#[test]
fn a_huge_content_length_is_refused_before_reading() {
    let r = Recorded::new("debuginfod-huge");
    let want = format!("/buildid/{}/debuginfo", r.hex);
    let server = FakeServer::start(move |path| match path == want {
        true => Answer::Endless(Some(1 << 40)),
        false => Answer::Canned("404 Not Found", "text/plain", Vec::new()),
    });
    // The default limit (2 GiB), DEBUGINFOD_MAXSIZE unset.
    let said = r.export_from(&server, &[]);
    assert!(said.contains("1099511627776 bytes"), "{said}");
}

#[test]
fn a_404_says_not_found() {
    let r = Recorded::new("debuginfod-404");
    let server = FakeServer::start(|_| Answer::Canned("404 Not Found", "text/plain", Vec::new()));
    let said = r.export_from(&server, &[]);
    let p = r.stripped.display();
    let not_found = format!(
        "debuginfod: debuginfo of {p} ({}): not found on {}",
        r.hex,
        server.url()
    );
    assert!(said.contains(&not_found), "{said}");
    let asking = said.lines().find(|l| l.contains(&r.hex)).unwrap_or("");
    assert!(asking.contains("asking"), "{said}");
}

#[test]
fn another_builds_debug_file_on_disk_is_not_used() {
    let r = Recorded::new("debuginfod-planted");
    let symfs = r.dir.join("symfs");
    let p = r.stripped.to_str().unwrap();
    let at = |path: &str| symfs.join(path.trim_start_matches('/'));
    std::fs::create_dir_all(at(p).parent().unwrap()).unwrap();
    std::fs::copy(&r.stripped, at(p)).unwrap();
    let s = symfs.to_str().unwrap();
    let args = ["--symfs", s, "--no-debuginfod"];
    let (without, _) = r.export(&args, &[]);
    assert_eq!(named(&without, "perfz_workload_leaf"), 0);
    // perf's three places: the build-id cache (DIR/.debug under --symfs),
    // /usr/lib/debug/.build-id and /usr/lib/debug/PATH.
    let (xx, rest) = r.hex.split_at(2);
    let by_id = at(&format!("/usr/lib/debug/.build-id/{xx}/{rest}.debug"));
    let places = [
        at(&format!("/.debug/.build-id/{xx}/{rest}/debug")),
        by_id.clone(),
        at(&format!("/usr/lib/debug{p}")),
    ];
    for f in &places {
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::copy(&r.other, f).unwrap();
    }
    let (got, said) = r.export(&args, &[]);
    assert_eq!(
        got, without,
        "named from another build's debug file: {said}"
    );
    // The right one where the wrong ones were is used.
    std::fs::copy(&r.full, &by_id).unwrap();
    let (got, said) = r.export(&args, &[]);
    let total: u64 = got.values().sum();
    let leaf = named(&got, "perfz_workload_leaf");
    assert!(leaf * 2 > total, "named from the right debug file: {said}");
}
