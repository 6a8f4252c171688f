//! perfz judged by perf's own tests, as Debian's linux-perf installs them
//! in /usr/lib/perf-core/tests: the shell tests (shell.rs) run with a
//! `perf` on PATH that is perfz for `perf record`, and the attr tests
//! (attr.rs) check the perf_event_attr perfz writes into its perf.data.
//! Each test runs with perf itself first, on this machine: what perf
//! passes here, perfz must pass; what perf cannot pass here (hardware it
//! lacks, another architecture) is listed as not run, with the reason.
//! perf 7.3's own shell tests (unpacked under tests/tools by
//! tests/setup.sh) run the same way, with perf 7.3 as the baseline.

mod attr;
mod attr_file;
mod bpf_filter;
mod perf_data_attrs;
mod self_check;
mod shell;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::Within;

/// perf's installed tests, or the fix.
pub fn perf_tests() -> PathBuf {
    let d = Path::new("/usr/lib/perf-core/tests");
    assert!(
        d.join("shell").is_dir() && d.join("attr").is_dir() && d.join("attr.py").is_file(),
        "this test needs perf's own tests in /usr/lib/perf-core/tests: \
         apt-get install -y linux-perf (tests/setup.sh)"
    );
    d.to_path_buf()
}

/// Fails with the fix unless `cmd` is on PATH (a tool perf's tests use).
pub fn require_tool(cmd: &str, package: &str) {
    let runs = Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .output_within()
        .status
        .success();
    assert!(
        runs,
        "this test needs `{cmd}`: apt-get install -y {package} (tests/setup.sh)"
    );
}

/// The last `n` lines of `text`, indented, for a failure message.
pub fn tail(text: &str, n: usize) -> String {
    if text.trim().is_empty() {
        return "      | (no output)\n".to_string();
    }
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| format!("      | {l}\n"))
        .collect()
}

/// `s` quoted for sh.
pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}
