//! The reference a folded export is compared with: `perf script
//! --no-inline | inferno-collapse-perf`, the pipeline perfz's users run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{perf, WaitWithin, Within};

/// inferno-collapse-perf: tests/setup.sh's, else one on PATH.
pub fn inferno() -> PathBuf {
    let ours =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/inferno/bin/inferno-collapse-perf");
    if ours.exists() {
        return ours;
    }
    let on_path = Command::new("inferno-collapse-perf")
        .arg("--help")
        .stdout(Stdio::null())
        .output_within();
    assert!(
        on_path.status.success(),
        "this test compares with inferno-collapse-perf, which is missing: run tests/setup.sh"
    );
    PathBuf::from("inferno-collapse-perf")
}

/// Folded stacks: `comm;root;...;leaf` -> weight.
pub type Folded = BTreeMap<String, u64>;

pub fn parse(text: &str) -> Folded {
    let mut m = Folded::new();
    for l in text.lines().filter(|l| !l.is_empty()) {
        let (stack, n) = l.rsplit_once(' ').unwrap();
        *m.entry(stack.to_string()).or_default() += n.parse::<u64>().unwrap();
    }
    m
}

/// `perf script --no-inline -i DATA | inferno-collapse-perf ARGS`.
pub fn reference(data: &Path, args: &[&str]) -> Folded {
    reference_with(data, &[], args)
}

/// The same with perf script's `SCRIPT` options too (`--inline` among them
/// replaces `--no-inline`).
pub fn reference_with(data: &Path, script: &[&str], args: &[&str]) -> Folded {
    reference_by(&perf(), data, script, args)
}

/// The same with the perf at `perf`.
pub fn reference_by(perf: &Path, data: &Path, script: &[&str], args: &[&str]) -> Folded {
    let inline = if script.contains(&"--inline") {
        &[][..]
    } else {
        &["--no-inline"][..]
    };
    let script = Command::new(perf)
        .arg("script")
        .args(inline)
        .args(script)
        .arg("-i")
        .arg(data)
        .stderr(Stdio::null())
        .output_within();
    // Not its status: on a file cut short perf script prints what it read
    // and fails at the cut (the callers compare weights, which shows a
    // reference that read nothing).
    let mut c = Command::new(inferno())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = c.stdin.take().unwrap();
    let feed = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(&script.stdout);
    });
    let o = c.output_within("inferno-collapse-perf");
    feed.join().unwrap();
    assert!(o.status.success());
    parse(&String::from_utf8(o.stdout).unwrap())
}
