//! PMUs as sysfs describes them (/sys/bus/event_source/devices/NAME): the
//! attr type, the `format/` files saying which config bits a term sets, and
//! the `events/` aliases (`msr/tsc/` = `msr/event=0x00/`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::format::attr::{TYPE_HARDWARE, TYPE_HW_CACHE, TYPE_RAW};

const DEVICES: &str = "/sys/bus/event_source/devices";

/// Which attr field a format term writes, and which bits of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// 0 = config, 1 = config1, 2 = config2.
    pub word: usize,
    /// Bit ranges (lo, hi) inclusive, filled from the value's low bits up.
    pub bits: Vec<(u32, u32)>,
}

impl Field {
    /// Parses a `format/` file: `config:0-7,32-35` or `config1:5`.
    pub fn parse(s: &str) -> Option<Field> {
        let (w, ranges) = s.trim().split_once(':')?;
        let word = match w {
            "config" => 0,
            "config1" => 1,
            "config2" => 2,
            _ => return None,
        };
        let bits = ranges
            .split(',')
            .map(|r| match r.split_once('-') {
                Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
                None => r.parse().ok().map(|a| (a, a)),
            })
            .collect::<Option<Vec<(u32, u32)>>>()?;
        bits.iter()
            .all(|&(a, b)| a <= b && b < 64)
            .then_some(Field { word, bits })
    }

    /// Writes `value` into `words`; false if it does not fit the bits.
    pub fn apply(&self, value: u64, words: &mut [u64; 3]) -> bool {
        let mut v = value;
        for &(lo, hi) in &self.bits {
            let n = hi - lo + 1;
            let mask = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
            words[self.word] |= (v & mask) << lo;
            v = if n == 64 { 0 } else { v >> n };
        }
        v == 0
    }
}

/// One PMU.
#[derive(Clone, Debug, Default)]
pub struct Pmu {
    /// The PMU's directory name in sysfs (`cpu`, `msr`, `cpu_core`).
    pub name: String,
    /// Its `type` file: the `perf_event_attr.type` that selects it.
    pub type_: u32,
    /// Its `format/` terms: name -> the config bits the term sets.
    pub formats: BTreeMap<String, Field>,
    /// Event aliases: name -> terms (`event=0x00`).
    pub events: BTreeMap<String, String>,
}

fn read(p: PathBuf) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

impl Pmu {
    /// Reads PMU `name` from /sys/bus/event_source/devices; `None` if absent.
    pub fn load(name: &str) -> Option<Pmu> {
        if name.contains('/') || name.starts_with('.') {
            return None;
        }
        let dir = PathBuf::from(DEVICES).join(name);
        let type_ = read(dir.join("type"))?.parse().ok()?;
        let files = |sub: &str| -> Vec<(String, String)> {
            std::fs::read_dir(dir.join(sub))
                .map(|d| {
                    d.filter_map(|e| {
                        let e = e.ok()?;
                        let n = e.file_name().to_string_lossy().into_owned();
                        Some((n, read(e.path())?))
                    })
                    .collect()
                })
                .unwrap_or_default()
        };
        Some(Pmu {
            name: name.into(),
            type_,
            formats: files("format")
                .into_iter()
                .filter_map(|(n, s)| Some((n, Field::parse(&s)?)))
                .collect(),
            // `.scale` / `.unit` files describe counters, not events.
            events: files("events")
                .into_iter()
                .filter(|(n, _)| !n.contains('.'))
                .collect(),
        })
    }
}

/// Every PMU's name and type, in the order sysfs lists them (as perf's
/// PMU_MAPPINGS).
pub fn mappings() -> Vec<(u32, String)> {
    std::fs::read_dir(DEVICES)
        .map(|d| {
            d.filter_map(|e| {
                let n = e.ok()?.file_name().to_string_lossy().into_owned();
                let t = read(PathBuf::from(DEVICES).join(&n).join("type"))?
                    .parse()
                    .ok()?;
                Some((t, n))
            })
            .collect()
        })
        .unwrap_or_default()
}

/// Whether PMU `name` is a CPU's own, as perf's is_pmu_core: `cpu`,
/// s390's `cpum_cf`, or one whose directory lists its CPUs (`cpu_core`,
/// `cpu_atom`, `armv8_pmuv3_0`).
pub fn is_core(name: &str) -> bool {
    name == "cpu"
        || name == "cpum_cf"
        || (!name.contains('/') && PathBuf::from(DEVICES).join(name).join("cpus").is_file())
}

/// The PMU an event of attr type `type_` counts on: a hardware, cache or
/// raw event's is the CPU's (`cpu`; on a hybrid machine the first core
/// PMU), another's the PMU of that type; `None` where sysfs has none.
pub fn of_type(type_: u32) -> Option<Pmu> {
    let all = mappings();
    let name = if matches!(type_, TYPE_HARDWARE | TYPE_HW_CACHE | TYPE_RAW) {
        let mut core: Vec<&String> = all.iter().map(|(_, n)| n).filter(|n| is_core(n)).collect();
        core.sort();
        core.first().map(|n| n.to_string())
    } else {
        all.iter()
            .find(|(t, _)| *t == type_)
            .map(|(_, n)| n.clone())
    };
    Pmu::load(&name?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_fields_split_values_over_their_bits() {
        let f = Field::parse("config:0-7,32-35").unwrap();
        let mut w = [0u64; 3];
        assert!(f.apply(0xabc, &mut w));
        assert_eq!(w[0], 0xbc | (0xa << 32));
        let mut w = [0u64; 3];
        assert!(!f.apply(0x1000, &mut w), "too wide");
        let g = Field::parse("config1:5").unwrap();
        let mut w = [0u64; 3];
        assert!(g.apply(1, &mut w));
        assert_eq!(w[1], 1 << 5);
        assert!(Field::parse("config3:1").is_none());
        assert!(Field::parse("config:9-2").is_none());
        let all = Field::parse("config:0-63").unwrap();
        let mut w = [0u64; 3];
        assert!(all.apply(u64::MAX, &mut w));
        assert_eq!(w[0], u64::MAX);
    }

    #[test]
    fn this_machines_pmus_load() {
        let m = mappings();
        assert!(m.iter().any(|(t, n)| *t == 1 && n == "software"), "{m:?}");
        let sw = Pmu::load("software").unwrap();
        assert_eq!(sw.type_, 1);
        assert!(Pmu::load("../etc").is_none());
    }
}
