//! `perfz codecs`: the README's first command until the recorder exists.

use std::process::Command;

use crate::common::Within;

fn perfz(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args(args)
        .output_within()
}

#[test]
fn lists_every_codec_with_its_id() {
    let out = perfz(&["codecs"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for line in [
        "none     yes",
        "zstd     yes    0x1",
        "lz4      yes    0x707a0004",
        "snappy   yes    0x707a0002",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
}

#[test]
fn bad_spec_is_a_one_line_reason_and_exit_1() {
    let out = perfz(&["codecs", "--check", "gzip"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("perfz: invalid codec spec \"gzip\": unknown codec"),
        "{err}"
    );
    assert!(err.contains("valid forms"), "{err}");
}

#[test]
fn check_prints_the_canonical_form() {
    let out = perfz(&["codecs", "--check", "zstd,long"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        "zstd:1,long (HEADER_COMPRESSED type 1)"
    );
}
