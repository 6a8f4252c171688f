use super::*;

fn words(w: &[&str]) -> Vec<OsString> {
    w.iter().map(OsString::from).collect()
}

/// The options read, as (name, negated, value).
fn opts(w: &[&str]) -> Vec<(String, bool, Option<String>)> {
    read(&words(w))
        .into_iter()
        .flat_map(|r| match r {
            Read::Options(o, _) => o,
            _ => Vec::new(),
        })
        .map(|o| {
            let v = o.value.map(|v| v.to_string_lossy().into_owned());
            (o.name, o.negated, v)
        })
        .collect()
}

fn opt(name: &str, value: Option<&str>) -> (String, bool, Option<String>) {
    (name.into(), false, value.map(String::from))
}

#[test]
fn values_are_taken_by_the_options_that_take_them() {
    // perf report's table: -k, --kallsyms and --comms take a value.
    assert_eq!(
        opts(&[
            "-k",
            "Cargo.toml",
            "--kallsyms",
            "/proc/kallsyms",
            "--comms",
            "x"
        ]),
        [
            opt("vmlinux", Some("Cargo.toml")),
            opt("kallsyms", Some("/proc/kallsyms")),
            opt("comms", Some("x")),
        ]
    );
    // Attached, clustered, abbreviated, negated.
    assert_eq!(
        opts(&["-nvif.data", "--percent-l=2", "--no-ch", "--sort=sym"]),
        [
            opt("show-nr-samples", None),
            opt("verbose", None),
            opt("input", Some("f.data")),
            opt("percent-limit", Some("2")),
            ("children".into(), true, None),
            opt("sort", Some("sym")),
        ]
    );
    // -g takes the next word only where it is no option.
    assert_eq!(
        opts(&["-g", "--stdio", "-g", "caller"]),
        [
            opt("call-graph", None),
            opt("stdio", None),
            opt("call-graph", Some("caller")),
        ]
    );
    assert_eq!(opts(&["-g"]), [opt("call-graph", None)]);
}

#[test]
fn options_go_on_after_a_plain_word_and_end_at_dashes() {
    let r = read(&words(&["main", "--stdio", "--", "-i"]));
    assert_eq!(r.len(), 4, "{r:?}");
    assert_eq!(r[0], Read::Plain("main".into(), false));
    assert!(matches!(&r[1], Read::Options(o, said) if o[0].name == "stdio" && said.len() == 1));
    assert_eq!(r[2], Read::Dashes);
    assert_eq!(r[3], Read::Plain("-i".into(), true));
}

#[test]
fn what_perf_refuses_is_said_in_its_words() {
    let bad = |w: &[&str]| match read(&words(w)).pop() {
        Some(Read::Bad(_, why)) => why,
        other => panic!("{w:?}: {other:?}"),
    };
    assert_eq!(
        bad(&["--no-such-option"]),
        "unknown option `no-such-option'"
    );
    assert_eq!(bad(&["-i"]), "option `input' requires a value");
    assert_eq!(bad(&["--stdio=1"]), "option `stdio' takes no value");
    assert_eq!(bad(&["-j"]), "unknown switch `j'");
    // perfz's own options are read beside perf's.
    assert_eq!(
        opts(&["--rows", "3", "--own"]),
        [opt("rows", Some("3")), opt("own", None)]
    );
}
