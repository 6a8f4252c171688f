//! The shape of the code, kept (issues 33, 50): in src/ and codecs/src no file
//! over 400 lines and no function over 60, every type name defined once
//! (each subcommand's clap `Args` aside), and imports only downward across
//! the layers: format (with quantity and notes) at the bottom, then event and
//! transform, then push, then
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
fn no_file_over_400_lines() {
    let long: Vec<String> = sources()
        .iter()
        .filter(|(_, t)| t.lines().count() > 400)
        .map(|(p, t)| format!("{} ({} lines)", p.display(), t.lines().count()))
        .collect();
    assert!(long.is_empty(), "files over 400 lines: {long:?}");
}

#[test]
fn no_function_over_60_lines() {
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
                    if j - i + 1 > 60 {
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
    assert!(long.is_empty(), "functions over 60 lines: {long:?}");
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
        "format" | "quantity" | "notes" => 0,
        "event" | "transform" => 1,
        "push" => 2,
        "session" | "export" | "eval" | "recover" | "convert" | "replay" | "advice" | "stats"
        | "synth" => 3,
        "cli" => 4,
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

/// The sources under each of `paths` (a file, or a folder ending in `/`),
/// for a guard: a path that names no source fails, so a guard never stops
/// guarding because what it measures moved.
fn guarded(paths: &[&str]) -> Vec<(PathBuf, String)> {
    let all = sources();
    let under = |p: &Path, g: &str| {
        let p = p.display().to_string();
        if g.ends_with('/') {
            p.starts_with(g)
        } else {
            p == g
        }
    };
    let gone: Vec<&&str> = paths
        .iter()
        .filter(|g| !all.iter().any(|(p, _)| under(p, g)))
        .collect();
    assert!(
        gone.is_empty(),
        "guarded paths name no source (moved? point the guard at where it went): {gone:?}"
    );
    all.into_iter()
        .filter(|(p, _)| paths.iter().any(|g| under(p, g)))
        .collect()
}

/// The strategies: how rings are grouped into units, on which threads.
const STRATEGIES: &[&str] = &["src/session/serial.rs", "src/session/threads/"];

#[test]
fn the_strategies_stay_a_few_lines_over_the_core() {
    // How rings are grouped into units, on which threads, into which
    // destination: serial.rs and threads/. Begin, switch, snapshot,
    // salvage, finish and the map history are the core's.
    let lines: usize = guarded(STRATEGIES)
        .iter()
        .map(|(_, t)| t.lines().count())
        .sum();
    assert!(lines > 100, "the check must see the strategies ({lines})");
    assert!(
        lines < 700,
        "the strategies hold {lines} lines: move what they share into the core"
    );
}

#[test]
fn a_guard_fails_where_its_path_is_gone() {
    let gone = std::panic::catch_unwind(|| guarded(&["src/session/no_such_file.rs"]));
    assert!(gone.is_err(), "a guard on a missing path must fail");
    assert!(!guarded(&["src/session/destination/"]).is_empty());
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

/// Import circles between files the session restructuring (issue 43) is
/// taking apart, each as its sorted files. This list must only shrink:
/// a circle not listed fails the test, and so does a listed one that is
/// gone (take it out).
const KNOWN_CIRCLES: &[&[&str]] = &[];

/// `text` with its comments, string literals and char literals emptied
/// (lines kept, so positions keep their line numbers).
fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, s: &[char]| {
        out.extend(s.iter().map(|&x| if x == '\n' { '\n' } else { ' ' }));
    };
    let ident = |x: char| x.is_alphanumeric() || x == '_';
    let mut i = 0;
    while i < c.len() {
        let prev_ident = i > 0 && ident(c[i - 1]);
        let end = match c[i] {
            '/' if c.get(i + 1) == Some(&'/') => {
                let n = c[i..]
                    .iter()
                    .position(|&x| x == '\n')
                    .unwrap_or(c.len() - i);
                i + n
            }
            '/' if c.get(i + 1) == Some(&'*') => {
                let (mut j, mut depth) = (i + 2, 1);
                while j < c.len() && depth > 0 {
                    if c[j] == '/' && c.get(j + 1) == Some(&'*') {
                        (depth, j) = (depth + 1, j + 2);
                    } else if c[j] == '*' && c.get(j + 1) == Some(&'/') {
                        (depth, j) = (depth - 1, j + 2);
                    } else {
                        j += 1;
                    }
                }
                j
            }
            // Raw strings: r"..", r#".."#, br"..".
            'r' if !prev_ident || (c[i - 1] == 'b' && (i < 2 || !ident(c[i - 2]))) => {
                let hashes = c[i + 1..].iter().take_while(|&&x| x == '#').count();
                if c.get(i + 1 + hashes) != Some(&'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                let close: Vec<char> = format!("\"{}", "#".repeat(hashes)).chars().collect();
                let from = i + 2 + hashes;
                let n = c[from..]
                    .windows(close.len())
                    .position(|w| w == close.as_slice())
                    .map_or(c.len(), |n| from + n + close.len());
                out.push_str("\"\"");
                blank(&mut out, &c[i + 2..n.min(c.len())]);
                i = n;
                continue;
            }
            '"' => {
                let mut j = i + 1;
                while j < c.len() && c[j] != '"' {
                    j += if c[j] == '\\' { 2 } else { 1 };
                }
                out.push_str("\"\"");
                blank(&mut out, &c[i + 1..j.min(c.len())]);
                i = j + 1;
                continue;
            }
            // A char literal ('x', '\n', '\'', '\u{1f}', b'{'), not a
            // lifetime ('a).
            '\'' if !prev_ident || (c[i - 1] == 'b' && (i < 2 || !ident(c[i - 2]))) => {
                let n = if c.get(i + 1) == Some(&'\\') {
                    c.get(i + 3..)
                        .and_then(|rest| rest.iter().position(|&x| x == '\''))
                        .map(|n| i + 4 + n)
                } else {
                    (c.get(i + 2) == Some(&'\'')).then_some(i + 3)
                };
                match n {
                    Some(n) => {
                        out.push_str("' '");
                        i = n;
                    }
                    None => {
                        out.push('\'');
                        i += 1;
                    }
                }
                continue;
            }
            x => {
                out.push(x);
                i += 1;
                continue;
            }
        };
        blank(&mut out, &c[i..end]);
        i = end;
    }
    out
}

/// The tokens of code (identifiers, `::`, and single punctuation), each
/// with its line.
fn tokens(code: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\n' {
            line += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let mut w = c.to_string();
            while let Some(&n) = chars.peek().filter(|n| n.is_alphanumeric() || **n == '_') {
                w.push(n);
                chars.next();
            }
            out.push((w, line));
        } else if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            out.push(("::".to_string(), line));
        } else if !c.is_whitespace() {
            out.push((c.to_string(), line));
        }
    }
    out
}

/// The paths a use tree names (`a::{b, c::d}` gives `a::b` and `a::c::d`;
/// `self` in a group names the group's module), from `t[*i]` on.
fn use_paths(t: &[(String, usize)], i: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    while *i < t.len() {
        match t[*i].0.as_str() {
            "::" => *i += 1,
            "{" => {
                *i += 1;
                while *i < t.len() && t[*i].0 != "}" {
                    use_paths(t, i, &path, out);
                    if t.get(*i).is_some_and(|x| x.0 == ",") {
                        *i += 1;
                    }
                }
                *i += 1;
                return;
            }
            "," | "}" | ";" => break,
            "as" => *i += 2,
            "*" => *i += 1,
            // `self` in a group: the group's module.
            "self" if !prefix.is_empty() && path.len() == prefix.len() => *i += 1,
            w => {
                path.push(w.to_string());
                *i += 1;
            }
        }
    }
    out.push(path);
}

/// The module path a file under src/ holds (`src/a/b.rs` and
/// `src/a/b/mod.rs`: `a::b`; src/lib.rs and src/main.rs: the root).
fn module_of(file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file
        .iter()
        .skip(1)
        .map(|p| p.to_string_lossy().to_string())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// One import of a file by another: where it is and what it says.
struct Import {
    line: usize,
    path: String,
}

/// Files by the module path they hold.
type Modules = BTreeMap<Vec<String>, PathBuf>;

/// Which file each file under src/ imports (a `use` item, or a path in
/// the code: `crate::`, `super::`, `self::`, or a child module's name),
/// with the first import that ties them. A path names the file of the
/// deepest module it reaches (`crate::format::FormatError`: format/mod.rs).
/// An import of a file's own parent module (or one above) is not counted:
/// the child is part of it (farm-studio draws that arrow but counts no
/// circle through it). Test code (`#[cfg(test)]` items, tests.rs and
/// *_tests.rs files) is left out.
fn file_imports() -> BTreeMap<PathBuf, BTreeMap<PathBuf, Import>> {
    let files: Vec<(PathBuf, String)> = sources()
        .into_iter()
        .filter(|(p, _)| p.starts_with("src"))
        .filter(|(p, _)| {
            let name = p.file_name().unwrap().to_string_lossy();
            name != "tests.rs" && !name.ends_with("_tests.rs")
        })
        .collect();
    let modules: Modules = files
        .iter()
        .filter(|(p, _)| !p.ends_with("main.rs"))
        .map(|(p, _)| (module_of(p), p.clone()))
        .collect();
    files
        .iter()
        .map(|(file, text)| (file.clone(), imports_of(file, text, &modules)))
        .collect()
}

/// The files `file` imports (see [`file_imports`]).
fn imports_of(file: &Path, text: &str, modules: &Modules) -> BTreeMap<PathBuf, Import> {
    let mine = module_of(file);
    let t = tokens(&code_only(text));
    // Inline modules open here, each with the brace depth it opened at.
    let mut inline: Vec<(String, i32)> = Vec::new();
    let mut depth = 0;
    let mut edges = BTreeMap::new();
    let mut i = 0;
    while i < t.len() {
        let (w, line) = (t[i].0.as_str(), t[i].1);
        let mut paths = Vec::new();
        let starts_path =
            t.get(i + 1).is_some_and(|x| x.0 == "::") && (i == 0 || t[i - 1].0 != "::");
        if w == "#"
            && t[i + 1..]
                .iter()
                .take(6)
                .map(|x| x.0.as_str())
                .eq(["[", "cfg", "(", "test", ")", "]"])
        {
            i = past_test_item(&t, i + 7);
            continue;
        } else if w == "use" {
            i += 1;
            use_paths(&t, &mut i, &[], &mut paths);
        } else if w == "mod" && t.get(i + 2).is_some_and(|x| x.0 == "{") {
            depth += 1;
            inline.push((t[i + 1].0.clone(), depth));
            i += 3;
            continue;
        } else if w == "{" || w == "}" {
            depth += if w == "{" { 1 } else { -1 };
            inline.retain(|m| m.1 <= depth);
            i += 1;
            continue;
        } else if starts_path {
            let mut p = vec![w.to_string()];
            i += 1;
            while t.get(i).is_some_and(|x| x.0 == "::")
                && t.get(i + 1)
                    .is_some_and(|x| x.0.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
            {
                p.push(t[i + 1].0.clone());
                i += 2;
            }
            paths.push(p);
        } else {
            i += 1;
            continue;
        }
        let here: Vec<String> = mine
            .iter()
            .chain(inline.iter().map(|m| &m.0))
            .cloned()
            .collect();
        for p in paths {
            let Some(to) = file_named(&p, &here, modules) else {
                continue;
            };
            let theirs = module_of(to);
            let above = theirs.len() < mine.len() && mine.starts_with(&theirs);
            if to != file && !above {
                edges.entry(to.clone()).or_insert(Import {
                    line,
                    path: p.join("::"),
                });
            }
        }
    }
    edges
}

/// The file of the deepest module path `p` reaches from module `here`;
/// `None` for another crate's path or an item in scope (a first name that
/// is not a child module of `here`).
fn file_named<'a>(p: &[String], here: &[String], modules: &'a Modules) -> Option<&'a PathBuf> {
    let ups = p.iter().take_while(|s| *s == "super").count();
    let mut full = match p.first()?.as_str() {
        "crate" | "perfz" => p[1..].to_vec(),
        "self" => [here, &p[1..]].concat(),
        "super" => [&here[..here.len().saturating_sub(ups)], &p[ups..]].concat(),
        _ => {
            let full = [here, p].concat();
            if !modules.contains_key(&full[..here.len() + 1]) {
                return None;
            }
            full
        }
    };
    while !modules.contains_key(&full) {
        full.pop()?;
    }
    modules.get(&full)
}

/// Where the item after a `#[cfg(test)]` ends: past its other attributes,
/// then to its `;` or the end of its body; `i` is just past the attribute.
fn past_test_item(t: &[(String, usize)], mut i: usize) -> usize {
    let (mut braces, mut inner) = (0, 0);
    while i < t.len() {
        match t[i].0.as_str() {
            ";" if braces == 0 && inner == 0 => return i + 1,
            "(" | "[" => inner += 1,
            ")" | "]" => inner -= 1,
            "{" => braces += 1,
            "}" => {
                braces -= 1;
                if braces == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// The strongly connected components of more than one file (Tarjan's).
fn circles(graph: &BTreeMap<PathBuf, BTreeMap<PathBuf, Import>>) -> Vec<Vec<PathBuf>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<PathBuf, BTreeMap<PathBuf, Import>>,
        index: BTreeMap<&'a PathBuf, (usize, usize)>,
        stack: Vec<&'a PathBuf>,
        out: Vec<Vec<PathBuf>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a PathBuf) {
        let n = w.index.len();
        w.index.insert(v, (n, n));
        w.stack.push(v);
        for to in w.graph.get(v).into_iter().flat_map(|e| e.keys()) {
            let low = match w.index.get(to) {
                None => {
                    visit(w, to);
                    w.index[to].1
                }
                Some(&(i, _)) if w.stack.contains(&to) => i,
                Some(_) => continue,
            };
            let mine = w.index.get_mut(v).unwrap();
            mine.1 = mine.1.min(low);
        }
        if w.index[v].0 == w.index[v].1 {
            let at = w.stack.iter().position(|x| *x == v).unwrap();
            let mut c: Vec<PathBuf> = w.stack.drain(at..).cloned().collect();
            if c.len() > 1 {
                c.sort();
                w.out.push(c);
            }
        }
    }
    let mut w = Walk {
        graph,
        index: BTreeMap::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !w.index.contains_key(v) {
            visit(&mut w, v);
        }
    }
    w.out.sort();
    w.out
}

#[test]
fn no_import_circle_between_files() {
    let graph = file_imports();
    let edges: usize = graph.values().map(|e| e.len()).sum();
    assert!(edges > 300, "the check must see the imports ({edges})");
    let found = circles(&graph);
    let shown =
        |c: &[PathBuf]| -> Vec<String> { c.iter().map(|p| p.display().to_string()).collect() };
    let mut new = String::new();
    for c in &found {
        let files = shown(c);
        if KNOWN_CIRCLES.iter().any(|k| k.iter().eq(files.iter())) {
            continue;
        }
        new += &format!("\n  {}, tied by:", files.join(", "));
        for from in c {
            for (to, i) in graph[from].iter().filter(|(to, _)| c.contains(to)) {
                new += &format!(
                    "\n    {}:{} `{}` -> {}",
                    from.display(),
                    i.line,
                    i.path,
                    to.display()
                );
            }
        }
    }
    assert!(
        new.is_empty(),
        "files that import each other in a circle (move the shared names to the file that owns the idea, or to one both import):{new}"
    );
    let gone: Vec<_> = KNOWN_CIRCLES
        .iter()
        .filter(|k| !found.iter().any(|c| k.iter().eq(shown(c).iter())))
        .collect();
    assert!(
        gone.is_empty(),
        "KNOWN_CIRCLES lists circles that are gone (take them out): {gone:?}"
    );
}

#[test]
fn unit_means_the_drain_unit_only() {
    // docs/ARCHITECTURE.md's words: a *unit* is a drain unit and nothing
    // else. The codecs crate's self-contained output of one call is a
    // chunk, a region's part handed back is a piece, sizes and durations
    // are quantities.
    let mut other = Vec::new();
    for (path, text) in sources() {
        let codecs = path.starts_with("codecs");
        for (i, line) in text.lines().enumerate() {
            let l = line.to_ascii_lowercase();
            for (at, _) in l.match_indices("unit") {
                let glued = l[..at].ends_with(|c: char| c.is_alphanumeric());
                let test = l[at..].starts_with("unit test");
                // The whole identifier around it, for the old names.
                let start = l[..at]
                    .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .map_or(0, |i| i + 1);
                let ident: String = l[start..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let old_name = ["uniterror", "hand_back_unit", "unit_of"].contains(&&*ident)
                    || line[start..].starts_with("units::");
                if !test && (codecs && !glued || old_name) {
                    other.push(format!("{}:{} {}", path.display(), i + 1, line.trim()));
                }
            }
        }
    }
    assert!(other.is_empty(), "unit used for something else: {other:?}");
}

#[test]
fn the_glossary_defines_each_word_once() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let mut seen = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("- **")) {
        for word in line.split("**").skip(1).step_by(2) {
            *seen.entry(word.to_string()).or_insert(0) += 1;
        }
    }
    assert!(
        seen.len() > 15,
        "the check must see the glossary ({seen:?})"
    );
    let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "defined more than once: {twice:?}");
}

/// The methods of `trait name` in `text` that have no default body.
fn required_methods(text: &str, name: &str) -> Vec<String> {
    let lines: Vec<String> = text.lines().map(code_of).collect();
    let start = lines
        .iter()
        .position(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            l.starts_with(&format!("trait {name} ")) || l.starts_with(&format!("trait {name}:"))
        })
        .unwrap_or_else(|| panic!("no trait {name}"));
    let (mut depth, mut out, mut sig) = (0i32, Vec::new(), String::new());
    for l in &lines[start..] {
        if depth == 1 && (l.trim_start().starts_with("fn ") || !sig.is_empty()) {
            sig += l.trim();
            if sig.ends_with(';') {
                out.push(sig.clone());
            }
            if sig.ends_with(';') || sig.ends_with('{') || sig.ends_with('}') {
                sig.clear();
            }
        }
        depth += l.matches('{').count() as i32 - l.matches('}').count() as i32;
        if depth == 0 && l.contains('}') {
            break;
        }
    }
    out
}

#[test]
fn sink_and_drain_require_few_methods() {
    // What every implementation really does (issues 43, 50): a sink writes
    // and says what its output is (lent, handed back; none where it writes
    // nowhere); a drain unit passes, writes plain records, flushes,
    // reports, lends and hands over its output. Everything else has a
    // default.
    for (file, name, most) in [
        ("src/push/sink.rs", "Sink", 6),
        ("src/push/unit.rs", "Unit", 6),
    ] {
        let text = guarded(&[file]).remove(0).1;
        let req = required_methods(&text, name);
        assert!(!req.is_empty(), "the check must see {name}'s methods");
        assert!(
            req.len() <= most,
            "{name} requires {} methods (at most {most}): {req:?}",
            req.len()
        );
    }
}

/// session/ dispatches on what it owns, never with an arm that cannot be
/// reached, and below the strategies nothing imports one (issue 50):
/// only record.rs (which picks one) and the strategies themselves name
/// `serial` or `threads` in a `use`.
#[test]
fn session_has_no_unreachable_arm_and_its_core_imports_no_strategy() {
    // record.rs picks a strategy.
    let picks = [STRATEGIES, &["src/session/record.rs"]].concat();
    let strategies: Vec<PathBuf> = guarded(&picks).into_iter().map(|(p, _)| p).collect();
    let mut bad = Vec::new();
    for (path, text) in sources() {
        let p = path.to_string_lossy().into_owned();
        if !p.starts_with("src/session/") {
            continue;
        }
        let code: Vec<String> = text.lines().map(code_of).collect();
        if code.iter().any(|l| l.contains("unreachable!")) {
            bad.push(format!("{p}: unreachable!"));
        }
        let strategy = strategies.contains(&path);
        let names_one = |l: &String| {
            let l = l.trim_start();
            (l.starts_with("use super::") || l.starts_with("use crate::session::"))
                && l.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|w| w == "threads" || w == "serial")
        };
        if !strategy && code.iter().any(names_one) {
            bad.push(format!("{p}: imports a strategy"));
        }
    }
    assert!(bad.is_empty(), "{bad:?}");
}
