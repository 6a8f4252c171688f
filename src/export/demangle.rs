//! Symbol names as perf prints them: Rust's (legacy and v0) demangled by
//! rustc-demangle without the hash, C++'s (Itanium) by cpp_demangle with
//! neither parameters nor return type (perf's default: libiberty without
//! DMGL_PARAMS); any other name as it is.

use std::borrow::Cow;

use cpp_demangle::{DemangleOptions, Symbol};

/// `name` as perf script prints it (a PLT entry's `@plt` kept).
pub fn demangle(name: &str) -> Cow<'_, str> {
    if let Some(f) = name.strip_suffix("@plt") {
        return match one(f) {
            Cow::Owned(d) => Cow::Owned(d + "@plt"),
            Cow::Borrowed(_) => Cow::Borrowed(name),
        };
    }
    one(name)
}

fn one(name: &str) -> Cow<'_, str> {
    if is_rust(name) {
        if let Ok(d) = rustc_demangle::try_demangle(name) {
            return Cow::Owned(format!("{d:#}"));
        }
    }
    if name.starts_with("_Z") {
        let opts = DemangleOptions::new().no_params().no_return_type();
        if let Some(d) = Symbol::new(name)
            .ok()
            .and_then(|s| s.demangle_with_options(&opts).ok())
        {
            // cpp_demangle writes an empty template parameter pack as
            // `<void, >`; libiberty (perf, c++filt) as `<void>`.
            return Cow::Owned(if d.contains(", >") {
                d.replace(", >", ">")
            } else {
                d
            });
        }
    }
    Cow::Borrowed(name)
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
    body.len() >= 19
        && body[body.len() - 19..].starts_with("17h")
        && body[body.len() - 16..]
            .bytes()
            .all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_cpp_and_plain_names() {
        // Expected as `c++filt --no-params` and rustc-demangle's {:#} print them.
        assert_eq!(
            demangle("_ZN4core3ptr13drop_in_place17h0123456789abcdefE"),
            "core::ptr::drop_in_place"
        );
        assert_eq!(
            demangle("_ZN5perfz5TableIlE4fillEi"),
            "perfz::Table<long>::fill"
        );
        assert_eq!(demangle("memcpy"), "memcpy");
        // `c++filt --no-params`: an empty pack leaves no `, `.
        assert_eq!(
            demangle("_ZN2v88internal28CFunctionBuilderWithFunctionINS_16CTypeInfoBuilderIvJEEEJNS2_INS_5LocalINS_5ValueEEEJEEEEE5BuildEv"),
            "v8::internal::CFunctionBuilderWithFunction<v8::CTypeInfoBuilder<void>, v8::CTypeInfoBuilder<v8::Local<v8::Value>> >::Build"
        );
        assert_eq!(demangle("_Znot_valid"), "_Znot_valid");
    }
}
