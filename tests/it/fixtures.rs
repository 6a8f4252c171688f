//! Every perf 6.1 fixture is read: per-type record counts equal perf's own
//! `--stats`, and sample tid/time/ip equal perf's own `perf script`.

use crate::common;

use std::collections::BTreeMap;

use common::*;
use perfz::collect_stats;
use perfz::format::PerfReader;

/// `NAME -> count` from the "Aggregated stats" part of a `--stats` dump.
fn expected_counts(name: &str) -> Option<BTreeMap<String, u64>> {
    let text =
        std::fs::read_to_string(fixtures().join(format!("expected/{name}.stats.txt"))).unwrap();
    if text.contains("Couldn't decompress") {
        return None; // perf's own --stats fails on compressed pipe input (fixtures README)
    }
    let mut out = BTreeMap::new();
    for line in text
        .lines()
        .skip_while(|l| !l.contains("Aggregated stats"))
        .skip(1)
    {
        let line = line.trim();
        if line.ends_with("stats:") {
            break; // the per-event part
        }
        let mut it = line.split_whitespace();
        if let (Some(name), Some("events:"), Some(n)) = (it.next(), it.next(), it.next()) {
            out.insert(name.to_string(), n.parse().unwrap());
        }
    }
    Some(out)
}

#[test]
fn record_counts_match_perf_stats() {
    for name in FIXTURES {
        let st = collect_stats(PerfReader::open(&fixture(name)).unwrap()).unwrap();
        let mut got: BTreeMap<String, u64> = st.counts.values().cloned().collect();
        got.insert("TOTAL".into(), st.total_records);
        match expected_counts(name) {
            Some(want) => assert_eq!(got, want, "{name}"),
            None => assert_eq!(got["SAMPLE"], samples(&fixture(name)).len() as u64),
        }
    }
}

#[test]
fn samples_match_perf_script() {
    for name in FIXTURES {
        let text = std::fs::read_to_string(fixtures().join(format!("expected/{name}.script.txt")))
            .unwrap();
        let want = parse_script(&text);
        assert!(
            !want.is_empty(),
            "{name}: no samples parsed from the expected script"
        );
        assert_eq!(samples(&fixture(name)), want, "{name}");
    }
}

#[test]
fn header_facts_are_read() {
    let st = collect_stats(PerfReader::open(&fixture("z1-cmd")).unwrap()).unwrap();
    assert_eq!(st.perf_version.as_deref(), Some("6.1.187"));
    assert_eq!(st.arch.as_deref(), Some("x86_64"));
    assert_eq!(
        (st.nr_cpus_available, st.nr_cpus_online),
        (Some(2), Some(2))
    );
    assert_eq!(st.cmdline.as_ref().unwrap()[0], "/usr/bin/perf");
    assert_eq!(st.events[0].name.as_deref(), Some("cpu-clock"));
    let c = st.compression.unwrap();
    assert_eq!(
        (c.codec.as_str(), c.level, c.declared_ratio, c.mmap_len),
        ("zstd", 1, 6, 528384)
    );
    let plain = collect_stats(PerfReader::open(&fixture("plain-cmd")).unwrap()).unwrap();
    assert_eq!(plain.build_ids, 4, "[kernel.kallsyms], dd, [vdso], libc");
    let two = collect_stats(PerfReader::open(&fixture("z-2events-cmd")).unwrap()).unwrap();
    let names: Vec<_> = two
        .events
        .iter()
        .map(|e| (e.name.clone().unwrap(), e.samples))
        .collect();
    assert_eq!(
        names,
        [
            ("cpu-clock".to_string(), 106),
            ("task-clock".to_string(), 106)
        ]
    );
}

#[test]
fn linux_perf_data_agrees_on_the_fixtures() {
    for name in [
        "plain-cmd",
        "z1-cmd",
        "z3-wrap-cmd",
        "z-2events-cmd",
        "z-sysw-switch",
    ] {
        assert_eq!(
            oracle_samples(&fixture(name)),
            samples(&fixture(name)).len(),
            "{name}"
        );
    }
}

/// Rewrites every COMPRESSED (81) record of a file-mode fixture as newer
/// perf's COMPRESSED2 (83): u64 data_size, the data, zero padding to 8 bytes.
fn as_compressed2(name: &str) -> Vec<u8> {
    let b = std::fs::read(fixture(name)).unwrap();
    let rd = |at: usize, n: usize| {
        let mut v = [0u8; 8];
        v[..n].copy_from_slice(&b[at..at + n]);
        u64::from_le_bytes(v) as usize
    };
    let (data_off, data_size) = (rd(40, 8), rd(48, 8));
    let mut data = Vec::new();
    let mut at = data_off;
    while at < data_off + data_size {
        let (t, size) = (rd(at, 4), rd(at + 6, 2));
        if t == 81 {
            let payload = &b[at + 8..at + size];
            let total = (16 + payload.len()).div_ceil(8) * 8;
            data.extend_from_slice(&83u32.to_le_bytes());
            data.extend_from_slice(&0u16.to_le_bytes());
            data.extend_from_slice(&(total as u16).to_le_bytes());
            data.extend_from_slice(&(payload.len() as u64).to_le_bytes());
            data.extend_from_slice(payload);
            data.resize(data.len() + total - 16 - payload.len(), 0);
        } else {
            data.extend_from_slice(&b[at..at + size]);
        }
        at += size;
    }
    // Same header and attrs, new data, the feature table and sections moved.
    let features = &b[data_off + data_size..];
    let mut out = b[..data_off].to_vec();
    out.extend_from_slice(&data);
    let delta = data.len() as i64 - data_size as i64;
    out[48..56].copy_from_slice(&(data.len() as u64).to_le_bytes());
    let mut feats = features.to_vec();
    let nr = (0..4)
        .map(|w| u64::from_le_bytes(b[72 + 8 * w..80 + 8 * w].try_into().unwrap()).count_ones())
        .sum::<u32>() as usize;
    for i in 0..nr {
        let off = u64::from_le_bytes(feats[16 * i..16 * i + 8].try_into().unwrap());
        feats[16 * i..16 * i + 8].copy_from_slice(&((off as i64 + delta) as u64).to_le_bytes());
    }
    out.extend_from_slice(&feats);
    out
}

#[test]
fn compressed2_records_of_newer_perf_are_read() {
    let dir = std::env::temp_dir().join(format!("perfz-c2-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["z1-cmd", "z3-wrap-cmd"] {
        let p = dir.join(format!("{name}.c2.data"));
        std::fs::write(&p, as_compressed2(name)).unwrap();
        let st = collect_stats(PerfReader::open(&p).unwrap()).unwrap();
        assert!(
            st.counts.get(&83).is_some_and(|(_, n)| *n > 0),
            "{name}: no COMPRESSED2 seen"
        );
        assert_eq!(samples(&p), samples(&fixture(name)), "{name}");
    }
}

#[test]
fn stat_json_is_valid_and_complete() {
    let out = perfz_ok(&["stat", "--json", fixture("z1-cmd").to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["compression"]["codec"], "zstd");
    assert_eq!(v["events"][0]["name"], "cpu-clock");
    assert_eq!(v["lost_samples"], 0);
    assert!(v["total_records"].as_u64().unwrap() > 100);
}
