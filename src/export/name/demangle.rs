//! Symbol names as perf prints them. perf 6.12 and 7.x demangle C++
//! (Itanium) names with GNU's demangler, libstdc++'s `abi::__cxa_demangle`
//! (Debian's perf is built without libbfd), and Rust's with their own: the
//! hash cut from legacy names, v0 names (`_R`) demangled by 7.x.
//!
//! So does perfz: C++ names go through the same `__cxa_demangle`, taken
//! from the libstdc++ every machine with a C++ program has (dlopen, so perfz
//! itself needs no C++ runtime), and come out exactly as perf's: the return
//! type of a template function (`void std::__introsort_loop<...>`), literals
//! with their suffix (`32ul`), the standard abbreviations (`std::istream`).
//! A crate would not: cpp_demangle prints `(unsigned long)32` and spells the
//! abbreviations out, and no other crate promises GNU's text. Where libstdc++
//! cannot be loaded, cpp_demangle is the fallback, which differs in those
//! places. Rust names go through rustc-demangle (`{:#}`: no hash), which
//! prints what perf 6.1 and 7.3 print. OCaml's (`camlStdlib__List__sort_572`)
//! as perf's own demangler writes them ([`ocaml`]: `Stdlib.List.sort_572`).
//!
//! The parameter list is cut, as the folded stacks of `perf script |
//! inferno-collapse-perf` cut it (tidy.rs), so every view names a
//! function alike.
//!
//! A name whose demangled text would be longer than 16 KiB is left
//! mangled, as perf 7.3 leaves such a Rust name ([`bound`]).

use std::borrow::Cow;
use std::ffi::{c_char, c_int, CStr, CString};
use std::sync::OnceLock;

use cpp_demangle::{DemangleOptions, Symbol};

mod bound;
mod ocaml;
use bound::{bounded, NoText, LONGEST_DEMANGLED};

/// `name` as perf script prints it, without its parameters.
pub fn demangle(name: &str) -> Cow<'_, str> {
    demangle_with(name, gnu())
}

fn demangle_with(name: &str, gnu: Option<CxaDemangle>) -> Cow<'_, str> {
    // perf names a PLT entry by its function's demangled name with `@plt`
    // after the parameters, which the cut then takes along:
    // `operator new(unsigned long)@plt` folds to `operator new`, `abs@plt`
    // stays.
    let (f, plt) = match name.strip_suffix("@plt") {
        Some(f) => (f, "@plt"),
        None => (name, ""),
    };
    let Some(mut d) = full(f, gnu) else {
        return Cow::Borrowed(name);
    };
    d.push_str(plt);
    d.truncate(without_parameters(&d));
    Cow::Owned(d)
}

/// The demangled name with its parameters; None for a name that is not
/// mangled (or not understood), or whose text is past the bound.
fn full(name: &str, gnu: Option<CxaDemangle>) -> Option<String> {
    use std::fmt::Write;
    if is_rust(name) {
        if let Ok(d) = rustc_demangle::try_demangle(name) {
            return bounded(LONGEST_DEMANGLED, |out| write!(out, "{d:#}")).ok();
        }
    }
    if !name.starts_with("_Z") {
        return ocaml::demangle(name);
    }
    let d = match gnu {
        // GNU's demangler writes all of a name's text, however long, so
        // the crate measures it first: its text spells out what GNU's
        // abbreviates, so is the longer; past 8 times the bound, GNU is
        // not asked; nor about a name the crate cannot parse: on some,
        // GNU's recursion runs for minutes (`_ZSt1CCCCCCCCsA…`, 56 bytes,
        // found by the demangle fuzz target).
        Some(f) => match by_crate(name, 8 * LONGEST_DEMANGLED) {
            Ok(_) => by_gnu(f, name),
            Err(_) => None,
        },
        None => by_crate(name, LONGEST_DEMANGLED).ok(),
    }?;
    (d.len() <= LONGEST_DEMANGLED).then_some(d)
}

/// Where `func`'s parameter list starts (its length if it has none), as
/// inferno's tidy_generic finds it.
pub(crate) fn without_parameters(func: &str) -> usize {
    let mut depth = 0i32;
    let mut after_dot = None;
    for (i, c) in func.char_indices() {
        match c {
            '<' | '{' | '[' => depth += 1,
            '>' | '}' | ']' | ')' => depth -= 1,
            '(' => {
                if depth == 0
                    && after_dot != Some(i)
                    && !func[i..].starts_with("(anonymous namespace)")
                {
                    return i;
                }
                depth += 1;
            }
            '.' => after_dot = Some(i + 1),
            _ => {}
        }
    }
    func.len()
}

/// `abi::__cxa_demangle(name, NULL, NULL, &status)`.
type CxaDemangle =
    unsafe extern "C" fn(*const c_char, *mut c_char, *mut usize, *mut c_int) -> *mut c_char;

/// Names longer than this are left as they are: GNU's demangler recurses
/// on the name's structure, and no real symbol comes near (the longest in
/// a Debian system's libraries are a few KiB).
const LONGEST: usize = 64 << 10;

/// libstdc++'s `__cxa_demangle`, loaded once; None where there is none.
fn gnu() -> Option<CxaDemangle> {
    static GNU: OnceLock<Option<CxaDemangle>> = OnceLock::new();
    *GNU.get_or_init(|| {
        // SAFETY: dlopen with a NUL-terminated name; libstdc++ runs no
        // initializer that could touch this process's state beyond its
        // own. The handle is kept for the process's life (never dlclosed),
        // so the function pointer stays valid.
        let handle = unsafe {
            libc::dlopen(
                c"libstdc++.so.6".as_ptr(),
                libc::RTLD_NOW | libc::RTLD_LOCAL,
            )
        };
        if handle.is_null() {
            return None;
        }
        // SAFETY: dlsym on a live handle with a NUL-terminated name.
        let f = unsafe { libc::dlsym(handle, c"__cxa_demangle".as_ptr()) };
        // SAFETY: the symbol is `char *__cxa_demangle(const char *, char *,
        // size_t *, int *)` (the Itanium C++ ABI), the type of CxaDemangle.
        (!f.is_null()).then(|| unsafe { std::mem::transmute::<*mut libc::c_void, CxaDemangle>(f) })
    })
}

fn by_gnu(f: CxaDemangle, name: &str) -> Option<String> {
    if name.len() > LONGEST {
        return None;
    }
    let c = CString::new(name).ok()?;
    let mut status: c_int = 0;
    // SAFETY: a NUL-terminated name, no buffer (the demangler mallocs the
    // result), a valid status pointer; __cxa_demangle is thread-safe.
    let out = unsafe {
        f(
            c.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut status,
        )
    };
    if out.is_null() {
        return None;
    }
    // SAFETY: on success `out` is a NUL-terminated string malloc'd for us,
    // read once and freed once.
    let d = unsafe {
        let d = CStr::from_ptr(out).to_string_lossy().into_owned();
        libc::free(out.cast());
        d
    };
    (status == 0).then_some(d)
}

/// The fallback: cpp_demangle with its return types, which are GNU's
/// where it agrees; its text up to `limit` bytes.
fn by_crate(name: &str, limit: usize) -> Result<String, NoText> {
    let sym = Symbol::new(name).map_err(|_| NoText::Failed)?;
    let d = bounded(limit, |out| {
        sym.structured_demangle(out, &DemangleOptions::new())
    })?;
    // cpp_demangle writes an empty template parameter pack as `<void, >`;
    // GNU as `<void>`.
    Ok(if d.contains(", >") {
        d.replace(", >", ">")
    } else {
        d
    })
}

/// v0 (`_R`), or legacy: `_ZN...17h<16 hex digits>E` (perf's test).
fn is_rust(name: &str) -> bool {
    if name.starts_with("_R") {
        return true;
    }
    let Some(inner) = name.strip_prefix("_ZN") else {
        return false;
    };
    // A legacy name may carry an LLVM suffix (`.llvm.123`) after its `E`.
    let end = inner.find(".llvm.").unwrap_or(inner.len());
    let Some(body) = inner[..end].strip_suffix('E') else {
        return false;
    };
    // As bytes: the body's last 19 need not start on a char boundary
    // (`_ZNé` and 18 more bytes).
    let body = body.as_bytes();
    body.len() >= 19
        && body[body.len() - 19..].starts_with(b"17h")
        && body[body.len() - 16..].iter().all(u8::is_ascii_hexdigit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_and_plain_names() {
        // As rustc-demangle's {:#} and perf 7.3 print them.
        assert_eq!(
            demangle("_ZN4core3ptr13drop_in_place17h0123456789abcdefE"),
            "core::ptr::drop_in_place"
        );
        assert_eq!(
            demangle("_RNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal"),
            "std::rt::lang_start_internal"
        );
        assert_eq!(demangle("memcpy"), "memcpy");
        assert_eq!(demangle("_Znot_valid"), "_Znot_valid");
        assert_eq!(demangle("_Znot_valid@plt"), "_Znot_valid@plt");
    }

    /// Expected as perf 6.12 and 7.3 print them (`perf script`), cut at
    /// the parameters: the return type, the literal suffix, the
    /// abbreviation (which binutils' c++filt spells out).
    #[test]
    fn cpp_names_are_gnus() {
        assert!(gnu().is_some(), "libstdc++.so.6 did not load");
        for (mangled, want) in [
            (
                "_ZSt16__introsort_loopIN9__gnu_cxx17__normal_iteratorIPiSt6vectorIiSaIiEEEElNS0_5__ops15_Iter_less_iterEEvT_S9_T0_T1_",
                "void std::__introsort_loop<__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, long, __gnu_cxx::__ops::_Iter_less_iter>",
            ),
            (
                "_ZNSt23mersenne_twister_engineImLm32ELm624ELm397ELm31ELm2567483615ELm11ELm4294967295ELm7ELm2636928640ELm15ELm4022730752ELm18ELm1812433253EE11_M_gen_randEv",
                "std::mersenne_twister_engine<unsigned long, 32ul, 624ul, 397ul, 31ul, 2567483615ul, 11ul, 4294967295ul, 7ul, 2636928640ul, 15ul, 4022730752ul, 18ul, 1812433253ul>::_M_gen_rand",
            ),
            ("_ZNSi6sentryC1ERSib", "std::istream::sentry::sentry"),
            ("_ZN5perfz5TableIlE4fillEi", "perfz::Table<long>::fill"),
            // perf 6.12: `std::locale::id::_M_id() const@plt`, cut.
            ("_ZNKSt6locale2id5_M_idEv@plt", "std::locale::id::_M_id"),
            ("abs@plt", "abs@plt"),
        ] {
            assert_eq!(demangle(mangled), want, "{mangled}");
        }
    }

    #[test]
    fn without_libstdcxx_the_crate_demangles() {
        assert_eq!(
            demangle_with("_ZN5perfz5TableIlE4fillEi", None),
            "perfz::Table<long>::fill"
        );
        // An empty pack as GNU writes it.
        assert_eq!(
            demangle_with("_ZN2v88internal28CFunctionBuilderWithFunctionINS_16CTypeInfoBuilderIvJEEEJNS2_INS_5LocalINS_5ValueEEEJEEEEE5BuildEv", None),
            "v8::internal::CFunctionBuilderWithFunction<v8::CTypeInfoBuilder<void>, v8::CTypeInfoBuilder<v8::Local<v8::Value>> >::Build"
        );
    }

    #[test]
    fn hostile_names_are_left_as_they_are() {
        let long = format!("_ZN{}E", "1a".repeat(LONGEST));
        assert_eq!(demangle(&long), long);
        assert_eq!(demangle("_Z\0x"), "_Z\0x");
        let deep = format!("_Z1f{}", "PFv".repeat(20_000));
        let _ = demangle(&deep);
    }

    /// `_ZNé` and 18 bytes more: the legacy-Rust test looked at the last
    /// 19 bytes as a str, which start inside the `é` (a panic on every
    /// export that names such a symbol).
    #[test]
    fn a_name_whose_tail_starts_inside_a_char_is_no_panic() {
        let name = format!("_ZN\u{e9}{}E", "x".repeat(18));
        assert_eq!(demangle(&name), name);
        let hash = format!("_ZN1\u{e9}17h{}E", "0".repeat(16));
        assert_eq!(demangle(&hash), hash);
    }

    /// A v0 name `_RINvC1a1fh T B_B_E T B_B_E ...E`: generic arguments, each
    /// a tuple of the one before twice (back-references), so the text
    /// doubles with every one, a few bytes each.
    fn doubling_v0(levels: usize) -> String {
        let base62 = |i: usize| -> String {
            let digits = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
            let (mut n, mut out) = (i - 1, Vec::new());
            loop {
                out.push(digits[n % 62]);
                n /= 62;
                if n == 0 {
                    break;
                }
            }
            out.reverse();
            format!("{}_", String::from_utf8(out).unwrap())
        };
        // Positions count from after `_R`; `B_` is position 0.
        let backref = |at: usize| match at {
            0 => "B_".to_string(),
            _ => format!("B{}", base62(at)),
        };
        let mut inner = String::from("INvC1a1f");
        let mut last = inner.len();
        inner.push('h');
        for _ in 0..levels {
            let at = inner.len();
            inner += &format!("T{}{}E", backref(last), backref(last));
            last = at;
        }
        inner.push('E');
        format!("_R{inner}")
    }

    #[test]
    fn a_name_that_demangles_past_the_bound_is_left_mangled() {
        // Within the bound: demangled, every argument whole.
        let small = doubling_v0(8);
        let d = demangle(&small);
        assert!(
            d.starts_with("a::f::<u8, (u8, u8), ((u8, u8), (u8, u8)), "),
            "{d}"
        );
        assert!(
            d.len() > 2000 && d.len() <= LONGEST_DEMANGLED,
            "{}",
            d.len()
        );
        // Past it (rustc-demangle's own limit is 1 MB): mangled, as perf
        // 7.3 leaves it, with or without `@plt`.
        let big = doubling_v0(22);
        assert!(big.len() < 300, "{}", big.len());
        assert_eq!(demangle(&big), big);
        let plt = format!("{big}@plt");
        assert_eq!(demangle(&plt), plt);
    }

    /// `f(A, B<A, A>, B<B<A, A>, B<A, A> >, ...)`: each parameter the
    /// template of the one before twice (substitutions `S1_`, `S2_`, ...).
    fn doubling_cpp(levels: usize) -> String {
        let seq = |i: usize| {
            let digits = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
            format!("S{}_", digits[i - 1] as char)
        };
        let mut name = String::from("_Z1f1A1BIS_S_E");
        for k in 1..levels {
            name += &format!("S0_I{}{}E", seq(k + 1), seq(k + 1));
        }
        name
    }

    /// GNU's demangler has no bound of its own (13 MB of text for this
    /// name of 223 bytes at 20 levels).
    #[test]
    fn a_cpp_name_that_demangles_past_the_bound_is_left_mangled() {
        let small = doubling_cpp(6);
        for gnu in [gnu(), None] {
            let d = full(&small, gnu).unwrap();
            assert!(d.starts_with("f(A, B<A, A>, B<B<A, A>, B<A, A> >"), "{d}");
            assert_eq!(demangle_with(&small, gnu), "f");
        }
        let big = doubling_cpp(20);
        assert!(big.len() < 300, "{}", big.len());
        for gnu in [gnu(), None] {
            assert_eq!(demangle_with(&big, gnu), big);
        }
    }
}
