//! The shape of the code, kept (issue 33): in src/ and codecs/src no file
//! over 450 lines and no function over 80, every type name defined once
//! (each subcommand's clap `Args` aside), and imports only downward across
//! the layers: format (and units) at the bottom, then event and push, then
//! the recording, export and the other commands, cli on top.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every .rs file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The sources checked, with their text.
fn sources() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("codecs/src"), &mut files);
    assert!(
        files.len() > 100,
        "the check must see the tree ({} files)",
        files.len()
    );
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p.strip_prefix(root).unwrap().to_path_buf(), text)
        })
        .collect()
}

/// A line with its string and char literals emptied and its `//` comment
/// cut, so braces in them are not counted.
fn code_of(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_str {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => {
                    in_str = false;
                    out.push('"');
                }
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_str = true;
                out.push('"');
            }
            // A char literal such as '{' (a lifetime has no closing quote
            // two or three characters on).
            '\'' => {
                let rest: String = chars.clone().take(3).collect();
                let skip = if rest.starts_with('\\') {
                    rest.find('\'').filter(|&i| i > 0).map(|i| i + 1)
                } else {
                    (rest.chars().nth(1) == Some('\'')).then_some(2)
                };
                match skip {
                    Some(n) => {
                        for _ in 0..n {
                            chars.next();
                        }
                    }
                    None => out.push(c),
                }
            }
            '/' if chars.peek() == Some(&'/') => break,
            _ => out.push(c),
        }
    }
    out
}

/// The name of the function a line declares, if it does.
fn fn_name(line: &str) -> Option<&str> {
    let mut t = line.trim_start();
    for prefix in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "async ",
        "unsafe ",
    ] {
        t = t.strip_prefix(prefix).unwrap_or(t);
    }
    let t = t.strip_prefix("fn ")?;
    let end = t.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    Some(&t[..end])
}

#[test]
fn no_file_over_450_lines() {
    let long: Vec<String> = sources()
        .iter()
        .filter(|(_, t)| t.lines().count() > 450)
        .map(|(p, t)| format!("{} ({} lines)", p.display(), t.lines().count()))
        .collect();
    assert!(long.is_empty(), "files over 450 lines: {long:?}");
}

#[test]
fn no_function_over_80_lines() {
    let mut long = Vec::new();
    for (path, text) in sources() {
        let lines: Vec<String> = text.lines().map(code_of).collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(name) = fn_name(line) else {
                continue;
            };
            // From the declaration to the brace that closes its body.
            let (mut depth, mut opened) = (0i32, false);
            for (j, l) in lines.iter().enumerate().skip(i) {
                if !opened && l.trim_end().ends_with(';') {
                    break; // a declaration without a body
                }
                for c in l.chars() {
                    match c {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                if opened && depth <= 0 {
                    if j - i + 1 > 80 {
                        long.push(format!(
                            "{}:{} {name} ({} lines)",
                            path.display(),
                            i + 1,
                            j - i + 1
                        ));
                    }
                    break;
                }
            }
        }
    }
    assert!(long.is_empty(), "functions over 80 lines: {long:?}");
}

#[test]
fn every_type_name_is_defined_once() {
    let mut defined: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (path, text) in sources() {
        for (i, line) in text.lines().enumerate() {
            // Associated types (`type Error = ...;` in an impl) are indented.
            let indented = line.starts_with(char::is_whitespace);
            let mut t = line.trim_start();
            for prefix in ["pub(crate) ", "pub(super) ", "pub "] {
                t = t.strip_prefix(prefix).unwrap_or(t);
            }
            for kind in ["struct ", "enum ", "trait ", "type ", "union "] {
                let Some(rest) = t.strip_prefix(kind) else {
                    continue;
                };
                if kind == "type " && indented {
                    continue;
                }
                let end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                let name = &rest[..end];
                if !name.is_empty() && name != "Args" {
                    defined.entry(name.to_string()).or_default().push(format!(
                        "{}:{}",
                        path.display(),
                        i + 1
                    ));
                }
            }
        }
    }
    let twice: Vec<_> = defined.iter().filter(|(_, at)| at.len() > 1).collect();
    assert!(
        twice.is_empty(),
        "type names defined more than once: {twice:?}"
    );
}

/// A top-level module's layer: the lowest is 0.
fn layer(module: &str) -> Option<u32> {
    Some(match module {
        "format" | "units" => 0,
        "event" | "push" => 1,
        "session" | "export" | "eval" | "recover" | "convert" | "replay" | "advice" | "stats"
        | "synth" => 2,
        "cli" => 3,
        _ => return None,
    })
}

#[test]
fn imports_only_go_down_the_layers() {
    let mut up = Vec::new();
    for (path, text) in sources() {
        let mut parts = path.iter().map(|p| p.to_string_lossy());
        if parts.next().as_deref() != Some("src") {
            continue; // codecs/ is below everything and imports none of it
        }
        let Some(top) = parts.next() else { continue };
        let top = top.trim_end_matches(".rs").to_string();
        let Some(mine) = layer(&top) else { continue };
        for (i, line) in text.lines().enumerate() {
            let code = code_of(line);
            for (at, _) in code.match_indices("crate::") {
                let rest = &code[at + "crate::".len()..];
                let end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                let target = &rest[..end];
                if target != top && layer(target).is_some_and(|l| l > mine) {
                    up.push(format!("{}:{} {top} -> {target}", path.display(), i + 1));
                }
            }
        }
    }
    assert!(up.is_empty(), "imports up the layers: {up:?}");
}

#[test]
fn the_benchmarks_reference_stays_short() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/BENCHMARKS.md")).unwrap();
    let n = text.lines().count();
    assert!(
        n < 500,
        "docs/BENCHMARKS.md has {n} lines: keep one current table per question (git keeps the history)"
    );
}

#[test]
fn architecture_names_only_files_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let mut files = Vec::new();
    for dir in ["src", "codecs", "tests", "benches", "fuzz/fuzz_targets"] {
        rust_files(&root.join(dir), &mut files);
    }
    let files: Vec<String> = files
        .iter()
        .filter(|p| !p.components().any(|c| c.as_os_str() == "target"))
        .map(|p| p.strip_prefix(root).unwrap().display().to_string())
        .collect();
    // Every `name.rs` or `dir/name.rs` the document names.
    let mut named = Vec::new();
    for word in doc.split(|c: char| !(c.is_alphanumeric() || "_/.".contains(c))) {
        let word = word.trim_end_matches('.');
        if word.ends_with(".rs") && word.len() > 3 {
            named.push(word.to_string());
        }
    }
    assert!(
        named.len() > 50,
        "the check must see the names ({})",
        named.len()
    );
    let missing: Vec<&String> = named
        .iter()
        .filter(|n| {
            !files
                .iter()
                .any(|f| f == *n || f.ends_with(&format!("/{n}")))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "docs/ARCHITECTURE.md names files that do not exist: {missing:?}"
    );
}

#[test]
fn the_strategies_stay_a_few_lines_over_the_core() {
    // How rings are grouped into units, on which threads, into which
    // output: serial.rs, flight.rs and threads/. Begin, switch, snapshot,
    // salvage, finish and the map history are the core's.
    let lines: usize = sources()
        .iter()
        .filter(|(p, _)| {
            let p = p.display().to_string();
            p == "src/session/serial.rs"
                || p == "src/session/flight.rs"
                || p.starts_with("src/session/threads/")
        })
        .map(|(_, t)| t.lines().count())
        .sum();
    assert!(lines > 100, "the check must see the strategies ({lines})");
    assert!(
        lines < 700,
        "the strategies hold {lines} lines: move what they share into the core"
    );
}

#[test]
fn the_write_side_is_at_most_three_traits() {
    // Traits of the layers records are written through (format, push), the
    // copy meter aside: it counts, it does not write.
    let mut traits = Vec::new();
    for (p, text) in sources() {
        let p = p.display().to_string();
        if !(p.starts_with("src/format/") || p.starts_with("src/push/")) {
            continue;
        }
        for line in text.lines().map(code_of) {
            let l = line.trim_start();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            let l = l.strip_prefix("pub(crate) ").unwrap_or(l);
            if let Some(rest) = l.strip_prefix("trait ") {
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric()).collect();
                if name != "Meter" {
                    traits.push(format!("{name} ({p})"));
                }
            }
        }
    }
    assert!(!traits.is_empty(), "the check must see the traits");
    assert!(traits.len() <= 3, "write-side traits: {traits:?}");
}
