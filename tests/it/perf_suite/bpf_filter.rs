//! perf 7.3's sample-filter shell tests with perfz as `perf record`. perf
//! 7.3 skips record_bpf_filter.sh here (Debian builds it without BPF
//! skeletons: "Skipped missing BPF support"); perfz filters in the kernel
//! with its own BPF program (in the push path where it cannot) and passes
//! every case of it. test_bpf_metadata.sh looks for the
//! PERF_RECORD_BPF_METADATA perf writes for its own BPF filter program;
//! perfz writes none for its program: its recording is taken, the metadata
//! is not there (perf 7.3 here fails it earlier, at the recording).

use super::require_tool;
use super::shell::{run, write_shims, Verdict};
use crate::common::{perf_7, require_recording, tempdir};

#[test]
fn perfz_passes_perf_7_3s_sample_filter_tests() {
    require_recording();
    require_tool("timeout", "coreutils");
    let perf = perf_7();
    let shell = perf
        .parent()
        .unwrap()
        .join("root/usr/lib/perf-core/tests/shell");
    assert!(
        shell.join("record_bpf_filter.sh").is_file(),
        "this test needs perf 7.3's shell tests in {}: run tests/setup.sh (as root)",
        shell.display()
    );
    let root = tempdir("perf-suite-bpf-filter");
    let (_, perfz_shim) = write_shims(&root, &perf);
    let filter = run(
        &shell.join("record_bpf_filter.sh"),
        &perfz_shim,
        &[],
        &root,
        300,
    );
    assert_eq!(filter.verdict, Verdict::Pass, "{}", filter.output);
    for case in ["Basic", "Failing", "Group", "Multiple", "Cgroup"] {
        assert!(
            filter
                .output
                .contains(&format!("{case} bpf-filter test [Success]")),
            "{case}: {}",
            filter.output
        );
    }
    let meta = run(
        &shell.join("test_bpf_metadata.sh"),
        &perfz_shim,
        &[],
        &root,
        300,
    );
    assert!(
        meta.output.contains("[Failed invalid output]") || meta.output.contains("[skipping"),
        "test_bpf_metadata.sh with perfz: the recording is taken, perf's BPF program's \
         metadata is not in it (perfz writes none for its program); if it passes now, say so here: {}",
        meta.output
    );
    let _ = std::fs::remove_dir_all(&root);
}
