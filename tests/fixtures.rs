//! Every perf 6.1 fixture is read: per-type record counts equal perf's own
//! `--stats`, and sample tid/time/ip equal perf's own `perf script`.

mod common;

use std::collections::BTreeMap;

use common::*;
use perfz::format::{stats, PerfReader};

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
        let st = stats::collect(PerfReader::open(&fixture(name)).unwrap()).unwrap();
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
    let st = stats::collect(PerfReader::open(&fixture("z1-cmd")).unwrap()).unwrap();
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
    let plain = stats::collect(PerfReader::open(&fixture("plain-cmd")).unwrap()).unwrap();
    assert_eq!(plain.build_ids, 4, "[kernel.kallsyms], dd, [vdso], libc");
    let two = stats::collect(PerfReader::open(&fixture("z-2events-cmd")).unwrap()).unwrap();
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

/// Sample count according to linux-perf-data, an independent reader.
pub fn oracle_samples(path: &std::path::Path) -> usize {
    use linux_perf_data::{PerfFileReader, PerfFileRecord};
    let f = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let PerfFileReader {
        mut perf_file,
        mut record_iter,
    } = PerfFileReader::parse_file(f).unwrap();
    let mut n = 0;
    while let Some(rec) = record_iter.next_record(&mut perf_file).unwrap() {
        if let PerfFileRecord::EventRecord { record, .. } = rec {
            if record.record_type == linux_perf_data::linux_perf_event_reader::RecordType::SAMPLE {
                n += 1;
            }
        }
    }
    n
}
