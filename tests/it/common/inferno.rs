//! The reference a folded export is compared with: `perf script
//! --no-inline | inferno-collapse-perf`, the pipeline perfz's users run,
//! by perf 6.12 (whose names, GNU's demangler's, perf 7.3 prints too), or
//! by each perf in tests/tools where a test holds perfz to the best.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{perf, perf_7, perf_new, SpawnOwned, WaitWithin, Within};

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

/// `perf script --no-inline -i DATA | inferno-collapse-perf ARGS`, perf
/// 6.12's.
pub fn reference(data: &Path, args: &[&str]) -> Folded {
    reference_with(data, &[], args)
}

/// The same with perf script's `SCRIPT` options too (`--inline` among them
/// replaces `--no-inline`).
pub fn reference_with(data: &Path, script: &[&str], args: &[&str]) -> Folded {
    reference_by(&perf_new(), data, script, args)
}

/// The same by each perf: 6.1, 6.12 and 7.3, named. They differ: 6.1
/// demangles C++ without return types, 6.12 leaves Rust's v0 names
/// mangled, 7.3's unwinder (libdw) stops short in LLD-linked programs.
pub fn references(data: &Path, script: &[&str], args: &[&str]) -> Vec<(&'static str, Folded)> {
    [
        ("perf 6.1", perf()),
        ("perf 6.12", perf_new()),
        ("perf 7.3", perf_7()),
    ]
    .into_iter()
    .map(|(name, p)| (name, reference_by(&p, data, script, args)))
    .collect()
}

/// The weight of the samples that the perf named `name` (one of
/// [`references`]') prints without a frame, which inferno-collapse-perf
/// drops: a sample whose user stack copy is empty (the kernel's copy
/// faulted: a new thread's first instruction, its stack page untouched)
/// and without a kernel chain. perfz names such a sample by its ip, as
/// perf report does.
pub fn frameless_weight(name: &str, data: &Path) -> u64 {
    let perf = match name {
        "perf 6.1" => perf(),
        "perf 6.12" => perf_new(),
        _ => perf_7(),
    };
    let cache = tempfile::tempdir().unwrap();
    let out = Command::new(perf)
        .env("PERF_BUILDID_DIR", cache.path())
        .args(["script", "--no-inline", "-i"])
        .arg(data)
        .output_within();
    let text = String::from_utf8_lossy(&out.stdout);
    text.split("\n\n")
        .map(|rec| rec.trim_matches('\n'))
        .filter(|rec| !rec.is_empty() && !rec.contains('\n'))
        .map(|header| {
            let words: Vec<&str> = header.split_whitespace().collect();
            let event = words.iter().rposition(|w| w.ends_with(':')).unwrap_or(0);
            event
                .checked_sub(1)
                .and_then(|i| words[i].parse::<u64>().ok())
                .unwrap_or(1)
        })
        .sum()
}

/// The same with the perf at `perf`.
pub fn reference_by(perf: &Path, data: &Path, script: &[&str], args: &[&str]) -> Folded {
    collapse(perf, data, script, args, false)
}

/// The reference of a file cut short: perf script prints what it read, and
/// fails at the cut.
pub fn reference_of_cut(data: &Path) -> Folded {
    collapse(&perf_new(), data, &[], &[], true)
}

fn collapse(perf: &Path, data: &Path, script: &[&str], args: &[&str], cut: bool) -> Folded {
    let inline = if script.contains(&"--inline") {
        &[][..]
    } else {
        &["--no-inline"][..]
    };
    // A build-id cache of its own: perf reads each DSO at its path (as on a
    // fresh machine), never an entry of ~/.debug that another test's perf
    // or perfz writes meanwhile.
    let cache = tempfile::tempdir().unwrap();
    let script = Command::new(perf)
        .env("PERF_BUILDID_DIR", cache.path())
        .arg("script")
        .args(inline)
        .args(script)
        .arg("-i")
        .arg(data)
        .output_within();
    assert!(
        cut || script.status.success(),
        "perf script -i {} failed: {}",
        data.display(),
        String::from_utf8_lossy(&script.stderr)
    );
    let mut c = Command::new(inferno())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn_owned()
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
