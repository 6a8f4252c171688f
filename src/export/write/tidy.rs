//! Frames' names tidied as stackcollapse-perf.pl and inferno-collapse-perf
//! tidy perf script's: `[module]` for an unknown function, parameters cut
//! outside `<>`, `{}` and `[]`, each distinct text held once.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::export::name::frames::Named;

/// One frame as perf script prints it: its function (None: `[unknown]`)
/// and its module (None: `[unknown]`).
pub(crate) struct Frame<'a> {
    /// The function, as the symbol table names it.
    pub(crate) func: Option<&'a str>,
    /// The module perf script prints in brackets (the mapped file, `[kernel.kallsyms]`).
    pub(crate) module: Option<&'a str>,
    /// A kernel frame (folded output may mark it `_[k]`).
    pub(crate) kernel: bool,
}

/// Distinct texts, each held once.
#[derive(Default)]
pub(crate) struct Texts {
    ids: FxHashMap<Box<str>, u32>,
}

impl Texts {
    pub(crate) fn id(&mut self, t: String) -> u32 {
        let next = self.ids.len() as u32;
        *self.ids.entry(t.into_boxed_str()).or_insert(next)
    }

    pub(crate) fn all(&self) -> Vec<&str> {
        let mut v = vec![""; self.ids.len()];
        for (t, &i) in &self.ids {
            v[i as usize] = t;
        }
        v
    }
}

/// Each frame's texts (ids in [`Texts`]), outermost function first, those
/// left out left out.
pub(crate) struct Tidied {
    /// Frame i's are `ids[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    ids: Vec<u32>,
}

impl Tidied {
    pub(crate) fn of(&self, frame: u32) -> &[u32] {
        let f = frame as usize;
        &self.ids[self.starts[f] as usize..self.starts[f + 1] as usize]
    }
}

/// Each frame of `frames` (every one some sample holds), tidied (kernel
/// functions ending in `_[k]` with `annotate_kernel`, folded's `--kernel`;
/// each followed by a tab and its module's file name with `modules`).
/// A function's name, and an unknown function's module, is tidied once
/// however many addresses in it the samples hold; frames that tidy alike
/// share a text id.
pub(crate) fn tidy_frames(
    annotate_kernel: bool,
    modules: bool,
    frames: &[Named<'_>],
) -> (Tidied, Texts) {
    let mut texts = Texts::default();
    let tidied = tidy_frames_by(frames, modules, |frame| {
        let mut t = tidy(frame, annotate_kernel);
        if modules {
            t = format!("{t}\t{}", file_name(frame.module));
        }
        // A name that starts with `(` is left out, as the collapse
        // tools leave it (perf's `(anonymous namespace)::f`).
        (!t.starts_with('(')).then(|| texts.id(t))
    });
    (tidied, texts)
}

/// A module's file name as folded lines give it (`[unknown]` for none).
pub(crate) fn file_name(module: Option<&str>) -> &str {
    let m = module.unwrap_or("[unknown]");
    m.rsplit('/').next().unwrap_or(m)
}

/// Each frame of `frames` as the ids `make` gives its functions (None:
/// left out), outermost function first. `make` is asked once per distinct
/// function (by the name's address: the symbol tables hand out one Arc a
/// symbol, the maps one a module), apart by module with `modules`.
pub(crate) fn tidy_frames_by(
    frames: &[Named<'_>],
    modules: bool,
    mut make: impl FnMut(&Frame<'_>) -> Option<u32>,
) -> Tidied {
    let mut tidied = Tidied {
        starts: Vec::with_capacity(frames.len() + 1),
        ids: Vec::with_capacity(frames.len()),
    };
    type Key = (*const u8, *const u8, bool, bool);
    let mut by_name: FxHashMap<Key, Option<u32>> = FxHashMap::default();
    for f in frames {
        tidied.starts.push(tidied.ids.len() as u32);
        let mut one = |func: Option<&Arc<str>>| {
            let module = match (&f.module, modules) {
                (Some(m), true) => m.as_ptr(),
                _ => std::ptr::null(),
            };
            let key = match (func, &f.module) {
                (Some(n), _) => (n.as_ptr(), module, f.kernel, true),
                (None, Some(m)) => (m.as_ptr(), module, f.kernel, false),
                (None, None) => (std::ptr::null(), module, f.kernel, false),
            };
            *by_name.entry(key).or_insert_with(|| {
                make(&Frame {
                    func: func.map(|n| &**n),
                    module: f.module.as_deref(),
                    kernel: f.kernel,
                })
            })
        };
        if f.funcs.is_empty() {
            tidied.ids.extend(one(None));
        }
        // Innermost first: the root-first line wants the outermost first.
        for func in f.funcs.iter().rev() {
            tidied.ids.extend(one(Some(func)));
        }
    }
    tidied.starts.push(tidied.ids.len() as u32);
    tidied
}

/// A function name as inferno-collapse-perf (and stackcollapse-perf.pl)
/// tidies perf script's by default: an unknown function is `[module]` (its
/// file name) or `[unknown]`; `;` becomes `:`; the parameter list goes, cut
/// at the first `(` outside `<>`, `{}` and `[]` that is neither a Go method's
/// `.(` nor `(anonymous namespace)`; a kernel function ends in `_[k]` with
/// `annotate_kernel`.
pub(crate) fn tidy(f: &Frame<'_>, annotate_kernel: bool) -> String {
    let mut func = match (f.func, f.module) {
        (Some(name), _) => crate::export::name::demangle::demangle(name).into_owned(),
        (None, Some(m)) => format!("[{}]", m.rsplit('/').next().unwrap_or(m)),
        (None, None) => "[unknown]".to_string(),
    };
    func = func.replace(';', ":").replace(['\n', '\r'], " ");
    if f.func.is_some() {
        func.truncate(crate::export::name::demangle::without_parameters(&func));
    }
    if annotate_kernel && f.kernel && f.func.is_some() {
        func.push_str("_[k]");
    }
    func
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tidied(func: &str) -> String {
        let f = Frame {
            func: Some(func),
            module: None,
            kernel: false,
        };
        tidy(&f, false)
    }

    #[test]
    fn parameters_go_and_templates_lambdas_and_namespaces_stay() {
        // By inferno 0.12.8's rule (the interop tests compare with the tool).
        assert_eq!(tidied("foo(int, char const*)"), "foo");
        assert_eq!(
            tidied("void sort_it<std::less<int> >(std::vector<int, std::allocator<int> >&)"),
            "void sort_it<std::less<int> >"
        );
        assert_eq!(
            tidied("(anonymous namespace)::work(int)"),
            "(anonymous namespace)::work"
        );
        assert_eq!(
            tidied("main::{lambda(int)#1}::operator()(int) const"),
            "main::{lambda(int)#1}::operator"
        );
        assert_eq!(tidied("net/http.(*Client).Do"), "net/http.(*Client).Do");
        assert_eq!(tidied("a;b"), "a:b");
    }

    #[test]
    fn unknown_functions_are_named_after_their_module_in_brackets() {
        let f = |module| Frame {
            func: None,
            module,
            kernel: false,
        };
        assert_eq!(tidy(&f(Some("/usr/lib/libc.so.6")), false), "[libc.so.6]");
        assert_eq!(
            tidy(&f(Some("[kernel.kallsyms]")), false),
            "[[kernel.kallsyms]]"
        );
        assert_eq!(tidy(&f(None), false), "[unknown]");
    }
}
