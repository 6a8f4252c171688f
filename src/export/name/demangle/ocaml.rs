//! OCaml's names as perf demangles them (util/demangle-ocaml.c): a name
//! that starts with `caml` and an upper-case letter loses the `caml`, each
//! `__` becomes `.` and each `$` with two hexadecimal digits the byte they
//! spell; the rest, the stamp after the last `_` included, stays:
//! `camlStdlib__List__sort_572` is `Stdlib.List.sort_572`.

/// `name` demangled as OCaml, or None where it is not an OCaml name.
pub(super) fn demangle(name: &str) -> Option<String> {
    let rest = name.strip_prefix("caml")?.as_bytes();
    if !rest.first()?.is_ascii_uppercase() {
        return None;
    }
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(rest.len());
    let mut i = 0;
    while i < rest.len() {
        match rest[i..] {
            [b'_', b'_', ..] => {
                out.push(b'.');
                i += 2;
            }
            [b'$', hi, lo, ..] if hex(hi).is_some() && hex(lo).is_some() => {
                out.push(hex(hi)? << 4 | hex(lo)?);
                i += 3;
            }
            [c, ..] => {
                out.push(c);
                i += 1;
            }
            [] => break,
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::demangle;

    /// perf's own cases (tests/demangle-ocaml-test.c), and names of
    /// OCaml 4.13's standard library as perf 6.12 and 7.3 print them.
    #[test]
    fn names_as_perf_demangles_them() {
        for (mangled, want) in [
            ("camlStdlib__array__map_154", Some("Stdlib.array.map_154")),
            (
                "camlStdlib__anon_fn$5bstdlib$2eml$3a334$2c0$2d$2d54$5d_1453",
                Some("Stdlib.anon_fn[stdlib.ml:334,0--54]_1453"),
            ),
            (
                "camlStdlib__bytes__$2b$2b_2205",
                Some("Stdlib.bytes.++_2205"),
            ),
            ("camlStdlib__List__sort_572", Some("Stdlib.List.sort_572")),
            ("camlSortit__entry", Some("Sortit.entry")),
            // Not OCaml's: perf leaves them.
            ("main", None),
            ("caml_program", None),
            ("caml_apply2", None),
            ("caml", None),
            // A `$` without two hex digits stays; a lone byte is not text.
            ("camlA$g1$4", Some("A$g1$4")),
            ("camlA$ff", Some("A\u{fffd}")),
        ] {
            assert_eq!(demangle(mangled).as_deref(), want, "{mangled}");
        }
    }
}
