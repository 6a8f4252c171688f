//! Property: any byte stream, cut at arbitrary points into one- or two-slice
//! pushes, decodes through one decoder to exactly the original bytes.

use crate::util::*;
use proptest::prelude::*;

/// Byte streams that mix random runs with repetitive (compressible) runs.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..2000),
            (any::<u8>(), 1..5000usize).prop_map(|(b, n)| vec![b; n]),
            (0..20_000usize, any::<u64>()).prop_map(|(n, s)| perf_like(n, s)),
        ],
        0..12,
    )
    .prop_map(|runs| runs.concat())
}

/// Cut points: a list of (push length, wrap offset) pairs applied cyclically.
fn cuts() -> impl Strategy<Value = Vec<(usize, usize)>> {
    prop::collection::vec((1..150_000usize, any::<usize>()), 1..8)
}

fn pushes(data: &[u8], cuts: &[(usize, usize)]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    let mut at = 0;
    let mut i = 0;
    while at < data.len() {
        let (len, wrap) = cuts[i % cuts.len()];
        let end = (at + len).min(data.len());
        let chunk = &data[at..end];
        let k = wrap % (chunk.len() + 1);
        out.push((chunk[..k].to_vec(), chunk[k..].to_vec()));
        at = end;
        i += 1;
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_codec_round_trips_any_cut(data in stream(), cuts in cuts()) {
        let pushes = pushes(&data, &cuts);
        for spec in all_specs() {
            roundtrip(&spec, &pushes);
        }
    }
}
