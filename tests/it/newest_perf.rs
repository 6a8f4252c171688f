//! What perf 6.16+ takes that older perfs did not: `-o /dev/null` written
//! as a stream; sample filters (`--filter` on any event); `--uid` as a
//! system-wide recording filtered to the user's tasks.

use crate::common;

use common::*;

/// `-o /dev/null` (scripts test options without keeping a file) records
/// into the device as a stream and exits 0, with a quiet and a busy
/// workload at a high rate; the device stays a device.
#[test]
fn dev_null_takes_a_recording() {
    require_recording();
    use std::os::unix::fs::FileTypeExt;
    perfz_ok(&["record", "-q", "-o", "/dev/null", "--", "true"]);
    let w = workload();
    let o = perfz_ok(&[
        "record",
        "-F",
        "20000",
        "-g",
        "-o",
        "/dev/null",
        "--",
        w.to_str().unwrap(),
        "0.3",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("/dev/null"),
        "the summary names the output: {err}"
    );
    let m = std::fs::metadata("/dev/null").unwrap();
    assert!(m.file_type().is_char_device(), "/dev/null was replaced");
}
