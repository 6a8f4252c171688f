//! debuginfod (issue 42): a recording of a stripped binary is named from
//! the debug file a debuginfod server has for its build id. The server is
//! elfutils' own `debuginfod`, indexing the unstripped build, in a network
//! namespace of its own (only a loopback there: it listens on no outside
//! address); the export runs in that namespace with DEBUGINFOD_URLS, and
//! the file lands where elfutils' client caches it. Answers not to be
//! trusted come from a fake server (hostile.rs).

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::inferno::{parse, Folded};
use crate::common::*;

mod fake_server;
mod hostile;

/// The port the server listens on, in its namespace.
const PORT: u16 = 8002;

/// elfutils' debuginfod serving `dir` in a network namespace of its own,
/// killed when dropped (unshare --kill-child takes the server with it),
/// and the thread reading its log, joined then.
struct Server(Owned, Option<std::thread::JoinHandle<()>>);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
        if let Some(t) = self.1.take() {
            let _ = t.join();
        }
    }
}

impl Server {
    /// Started, and waited for until its first scan of `dir` is done (its
    /// `fts traversed` line), at most a minute.
    fn start(dir: &Path, db: &Path) -> Server {
        let ok = Command::new("debuginfod").arg("--version").output();
        assert!(
            ok.is_ok_and(|o| o.status.success()),
            "this test runs debuginfod, which is missing: run tests/setup.sh (apt-get install debuginfod)"
        );
        let script = format!(
            "ip link set lo up && exec debuginfod -v -F -p {PORT} -d '{}' '{}'",
            db.display(),
            dir.display()
        );
        let mut child = Command::new("unshare")
            .args(["--net", "--fork", "--kill-child", "sh", "-c", &script])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn_owned()
            .expect("unshare (util-linux)");
        let log = child.stderr.take().unwrap();
        let mut server = Server(child, None);
        let (tx, rx) = std::sync::mpsc::channel();
        server.1 = Some(std::thread::spawn(move || {
            for line in std::io::BufReader::new(log).lines().map_while(Result::ok) {
                if line.contains("fts traversed") {
                    let _ = tx.send(());
                }
            }
        }));
        rx.recv_timeout(Duration::from_secs(60))
            .expect("debuginfod indexed its directory within a minute");
        server
    }

    /// `perfz export ARGS` in the server's network namespace, with `env`.
    fn export(&self, args: &[&str], env: &[(&str, &str)]) -> (Folded, String) {
        let ns = format!("--net=/proc/{}/ns/net", self.0.id());
        let o = Command::new("nsenter")
            .arg(ns)
            .arg("--")
            .arg(env!("CARGO_BIN_EXE_perfz"))
            .arg("export")
            .args(args)
            .envs(env.iter().copied())
            .output_within();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{err}");
        (parse(&String::from_utf8(o.stdout).unwrap()), err)
    }
}

fn named(f: &Folded, func: &str) -> u64 {
    f.iter()
        .filter(|(k, _)| k.contains(func))
        .map(|(_, n)| n)
        .sum()
}

/// deep.c built with symbols into `dir/debug`, and its stripped copy in `dir/run`.
fn built(dir: &Path) -> (PathBuf, PathBuf) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workload/deep.c");
    let (full, stripped) = (dir.join("debug/deep"), dir.join("run/deep"));
    for d in [&full, &stripped] {
        std::fs::create_dir_all(d.parent().unwrap()).unwrap();
    }
    let st = Command::new("cc")
        .args(["-O1", "-g", "-fno-omit-frame-pointer", "-fno-inline", "-o"])
        .arg(&full)
        .arg(&src)
        .status_within();
    assert!(st.success(), "building deep.c");
    let st = Command::new("strip")
        .arg("-o")
        .arg(&stripped)
        .arg(&full)
        .status_within();
    assert!(st.success(), "strip (binutils)");
    (full, stripped)
}

#[test]
fn a_stripped_binary_is_named_from_a_debuginfod_server() {
    require_recording();
    let dir = tempdir("export-debuginfod");
    let (full, stripped) = built(&dir);
    let id = perfz::build_id::of_file(&stripped).expect("gcc writes a build id");
    let hex = perfz::build_id::hex(&id);
    let data = dir.join("r.data");
    let (d, p) = (data.to_str().unwrap(), stripped.to_str().unwrap());
    perfz_ok(&["record", "-q", "-N", "-g", "-o", d, "--", p, "0.4"]);
    let server = Server::start(full.parent().unwrap(), &dir.join("db.sqlite"));
    let cache = dir.join("client-cache");
    let no_cache = dir.join("no-buildid-cache");
    let env = [
        ("DEBUGINFOD_CACHE_PATH", cache.to_str().unwrap()),
        ("PERF_BUILDID_DIR", no_cache.to_str().unwrap()),
    ];
    let leaf = "perfz_workload_leaf";
    let (without, _) = server.export(&[d, "--no-debuginfod"], &env);
    assert_eq!(
        named(&without, leaf),
        0,
        "the stripped binary names nothing by itself"
    );

    let url = format!("http://127.0.0.1:{PORT}");
    let with_url = [&env[..], &[("DEBUGINFOD_URLS", url.as_str())]].concat();
    let (got, said) = server.export(&[d], &with_url);
    let total: u64 = got.values().sum();
    assert!(
        named(&got, leaf) * 2 > total,
        "named from debuginfod: {said}"
    );
    let lines = said.lines().filter(|l| l.contains("debuginfod:")).count();
    assert_eq!(lines, 1, "one line for the one build id fetched: {said}");
    let cached = cache.join(&hex).join("debuginfo");
    assert_eq!(
        std::fs::read(&cached).unwrap(),
        std::fs::read(&full).unwrap()
    );

    // The server gone, the cache names the frames, and nothing is asked.
    drop(server);
    let o = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args(["export", d])
        .envs(with_url.iter().copied())
        .output_within();
    assert!(o.status.success());
    assert_eq!(parse(&String::from_utf8(o.stdout).unwrap()), got);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("debuginfod:"));
    let _ = std::fs::remove_dir_all(&dir);
}
