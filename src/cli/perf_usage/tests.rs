use super::*;

fn words(s: &[&str]) -> Vec<OsString> {
    s.iter().map(OsString::from).collect()
}

fn known() -> Vec<OptionSpec> {
    perf_options().into_iter().map(|e| e.spec).collect()
}

#[test]
fn perfs_usage_has_its_82_long_options() {
    let opts = perf_options();
    assert_eq!(opts.iter().filter(|o| o.spec.long.is_some()).count(), 82);
    let z = opts.iter().find(|o| o.spec.short == Some('z')).unwrap();
    assert_eq!(z.spec.long.as_deref(), Some("compression-level"));
    assert_eq!(z.spec.takes, Takes::Optional);
    let g = opts.iter().find(|o| o.spec.short == Some('g')).unwrap();
    assert_eq!(
        (g.spec.long.as_deref(), g.spec.takes),
        (None, Takes::Nothing)
    );
    let cg = opts
        .iter()
        .find(|o| o.spec.long.as_deref() == Some("call-graph"))
        .unwrap();
    assert_eq!(cg.spec.takes, Takes::Value);
    assert!(
        cg.lines.ends_with("Default: fp"),
        "continuation lines belong to it"
    );
}

#[test]
fn short_options_combine_as_perfs_parse_options_combines_them() {
    let s = split(
        &words(&["-asdg", "-F99", "-c", "7", "-z", "-z3", "ls", "-l"]),
        &known(),
    )
    .unwrap();
    assert_eq!(
        s.options,
        [
            "--all-cpus",
            "--stat",
            "--data",
            "-g",
            "--freq=99",
            "--count=7",
            "--compression-level",
            "--compression-level=3"
        ]
    );
    assert_eq!(s.command, ["ls", "-l"]);
}

#[test]
fn long_options_take_values_attached_or_next_and_may_be_abbreviated() {
    let s = split(
        &words(&[
            "--freq",
            "99",
            "--output=x",
            "--aio",
            "--no-buildid-c",
            "--",
            "-weird",
        ]),
        &known(),
    )
    .unwrap();
    assert_eq!(
        s.options,
        ["--freq=99", "--output=x", "--aio", "--no-buildid-cache"]
    );
    assert_eq!(s.command, ["-weird"], "after -- a word is the command");
}

#[test]
fn an_unknown_option_is_an_error_never_a_command() {
    let k = known();
    assert_eq!(
        split(&words(&["--bogus", "ls"]), &k),
        Err(BadOption::UnknownLong("bogus".into()))
    );
    assert_eq!(
        split(&words(&["-aY", "ls"]), &k),
        Err(BadOption::UnknownShort('Y'))
    );
    assert_eq!(
        split(&words(&["-o"]), &k),
        Err(BadOption::NeedsValue("o".into()))
    );
    assert_eq!(
        split(&words(&["--all-cpus=1"]), &k),
        Err(BadOption::TakesNoValue("all-cpus".into()))
    );
    assert!(matches!(
        split(&words(&["--no-bu"]), &k),
        Err(BadOption::Ambiguous(..))
    ));
    assert_eq!(
        BadOption::UnknownLong("bogus".into()).to_string(),
        "unknown option `bogus'"
    );
}

#[test]
fn negative_values_and_a_lone_dash_are_values() {
    let s = split(&words(&["-D", "-1", "-o", "-", "true"]), &known()).unwrap();
    assert_eq!(s.options, ["--delay=-1", "--output=-"]);
    assert_eq!(s.command, ["true"]);
}

#[test]
fn usage_lines_are_laid_out_as_perfs() {
    let all = OptionSpec {
        short: Some('a'),
        long: Some("all-cpus".into()),
        takes: Takes::Nothing,
    };
    assert_eq!(
        usage_line(&all, "", "system-wide collection from all CPUs"),
        "    -a, --all-cpus        system-wide collection from all CPUs"
    );
    // A long head goes on its own line, the help under it.
    let mf = OptionSpec {
        short: None,
        long: Some("mmap-flush".into()),
        takes: Takes::Value,
    };
    assert_eq!(
        usage_line(&mf, "number", "Minimal number"),
        "        --mmap-flush <number>\n                          Minimal number"
    );
    // perf's own lines come out of the same layout.
    let perf = perf_options();
    let line = &perf
        .iter()
        .find(|e| e.spec.long.as_deref() == Some("mmap-flush"))
        .unwrap()
        .lines;
    assert_eq!(
        *line,
        usage_line(
            &mf,
            "number",
            "Minimal number of bytes that is extracted from mmap data pages (default: 1)"
        )
    );
}

#[test]
fn negations_are_read_as_perfs_parse_options_reads_them() {
    let s = split(
        &words(&[
            "--no-call-graph",
            "--inherit",
            "--no-compression",
            "--buildid-c",
            "--no-all-cp",
            "true",
        ]),
        &known(),
    )
    .unwrap();
    assert_eq!(
        s.options,
        [
            "!call-graph",
            "!no-inherit",
            "!compression-level",
            "!no-buildid-cache",
            "!all-cpus"
        ]
    );
    assert_eq!(
        split(&words(&["--no-freq=9"]), &known()),
        Err(BadOption::TakesNoValue("no-freq".into()))
    );
    assert!(matches!(
        split(&words(&["--no-a"]), &known()),
        Err(BadOption::Ambiguous(..))
    ));
    assert_eq!(
        split(&words(&["--no-such"]), &known()),
        Err(BadOption::UnknownLong("no-such".into()))
    );
}

#[test]
fn values_and_the_command_are_bytes_as_perf_passes_them() {
    use std::os::unix::ffi::OsStringExt;
    let bytes = |b: &[u8]| OsString::from_vec(b.to_vec());
    let line = [
        bytes(b"-o\xff.data"),
        bytes(b"--output"),
        bytes(b"x\xfe"),
        bytes(b"ls"),
        bytes(b"\xff"),
    ];
    let s = split(&line, &known()).unwrap();
    assert_eq!(
        s.options,
        [bytes(b"--output=\xff.data"), bytes(b"--output=x\xfe")]
    );
    assert_eq!(s.command, [bytes(b"ls"), bytes(b"\xff")]);
    let e = split(&[bytes(b"-\xff")], &known()).unwrap_err();
    assert_eq!(e, BadOption::UnknownShort('\u{fffd}'));
}
