//! A codec left out of the build is still recognised, and refused with a
//! message that says how to get it. Run with `--no-default-features` in CI.

use perfz_codecs::{AnyDecoder, CodecKind, CodecSpec, Error};

#[test]
fn missing_codecs_are_named_with_the_feature_to_enable() {
    for (spec, kind) in [
        ("zstd:3", CodecKind::Zstd),
        ("lz4", CodecKind::Lz4),
        ("snappy", CodecKind::Snappy),
    ] {
        let parsed = CodecSpec::parse_grammar(spec).expect("the grammar knows every codec");
        assert_eq!(parsed.kind(), kind);
        let res = spec.parse::<CodecSpec>();
        if kind.is_built() {
            assert!(res.is_ok(), "{spec}");
            assert!(AnyDecoder::for_id(parsed.id()).is_ok());
        } else {
            let msg = res.unwrap_err().to_string();
            let want = format!(
                "this build of perfz was compiled without {0}; rebuild with --features {0}",
                kind.name()
            );
            assert_eq!(msg, want);
            assert!(matches!(
                AnyDecoder::for_id(parsed.id()),
                Err(Error::NotBuilt(_))
            ));
        }
    }
    assert!("none".parse::<CodecSpec>().is_ok(), "none is always built");
}
