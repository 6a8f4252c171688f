//! `-k/--clockid`: the clock samples are timed by, as perf spells it
//! (`perf record -k mono`, the clock JITs write their jitdumps in), and
//! what the recording says of it (HEADER_CLOCKID, HEADER_CLOCK_DATA).

use crate::format::{feat, FeatureSet};

/// perf's names for the clocks `-k` takes (util/clockid.c), with their ids.
const CLOCKS: &[(&str, i32)] = &[
    ("monotonic", libc::CLOCK_MONOTONIC),
    ("mono", libc::CLOCK_MONOTONIC),
    ("monotonic_raw", libc::CLOCK_MONOTONIC_RAW),
    ("raw", libc::CLOCK_MONOTONIC_RAW),
    ("realtime", libc::CLOCK_REALTIME),
    ("real", libc::CLOCK_REALTIME),
    ("boottime", libc::CLOCK_BOOTTIME),
    ("boot", libc::CLOCK_BOOTTIME),
    ("tai", libc::CLOCK_TAI),
];

/// A clock as `-k` takes it: a name (any case, `CLOCK_` before it or not)
/// or a number.
pub fn parse(s: &str) -> Result<i32, String> {
    if let Ok(n) = s.parse::<i32>() {
        return Ok(n);
    }
    let lower = s.to_ascii_lowercase();
    let name = lower.strip_prefix("clock_").unwrap_or(&lower);
    CLOCKS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, id)| id)
        .ok_or_else(|| {
            format!(
                "unknown clock {s:?} for -k: perf's are monotonic (mono), monotonic_raw (raw), \
                 realtime (real), boottime (boot), tai, or a clock id"
            )
        })
}

/// Notes `clockid` in the recording's features as perf does: its
/// resolution (HEADER_CLOCKID, in ns) and the wall-clock time beside the
/// clock's (HEADER_CLOCK_DATA, version 1), so times convert to dates.
pub fn note(f: &mut FeatureSet, clockid: i32) {
    let read = |id: i32, res: bool| -> Option<u64> {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid pointer to a local timespec; the call fills it.
        let rc = unsafe {
            if res {
                libc::clock_getres(id, &mut t)
            } else {
                libc::clock_gettime(id, &mut t)
            }
        };
        (rc == 0).then(|| t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64)
    };
    if let Some(res) = read(clockid, true) {
        f.set(feat::CLOCKID, res.to_le_bytes().to_vec());
    }
    // perf's record__init_clock: the time of day by gettimeofday (whole
    // microseconds), then the clock's time right after it.
    let tod = || -> Option<u64> {
        let mut tv = libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        };
        // SAFETY: a valid pointer to a local timeval; no timezone asked.
        let rc = unsafe { libc::gettimeofday(&mut tv, std::ptr::null_mut()) };
        (rc == 0).then(|| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1_000)
    };
    if let (Some(wall), Some(clock)) = (tod(), read(clockid, false)) {
        let mut b = Vec::with_capacity(24);
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&(clockid as u32).to_le_bytes());
        b.extend_from_slice(&wall.to_le_bytes());
        b.extend_from_slice(&clock.to_le_bytes());
        f.set(feat::CLOCK_DATA, b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfs_clock_names_and_numbers() {
        assert_eq!(parse("mono"), Ok(libc::CLOCK_MONOTONIC));
        assert_eq!(parse("CLOCK_MONOTONIC"), Ok(libc::CLOCK_MONOTONIC));
        assert_eq!(parse("raw"), Ok(libc::CLOCK_MONOTONIC_RAW));
        assert_eq!(parse("boot"), Ok(libc::CLOCK_BOOTTIME));
        assert_eq!(parse("1"), Ok(1));
        assert!(parse("sundial").unwrap_err().contains("monotonic"));
    }

    #[test]
    fn the_features_say_the_clock() {
        let mut f = FeatureSet::default();
        note(&mut f, libc::CLOCK_MONOTONIC);
        let res = f.get(feat::CLOCKID).expect("HEADER_CLOCKID");
        assert_eq!(res.len(), 8);
        let data = f.get(feat::CLOCK_DATA).expect("HEADER_CLOCK_DATA");
        assert_eq!(data.len(), 24);
        assert_eq!(
            &data[..8],
            &[1, 0, 0, 0, libc::CLOCK_MONOTONIC as u8, 0, 0, 0]
        );
        let wall = u64::from_le_bytes(data[8..16].try_into().unwrap());
        assert_eq!(wall % 1000, 0, "gettimeofday's microseconds, as perf");
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid pointer to a local timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
        let mono = u64::from_le_bytes(data[16..24].try_into().unwrap());
        let now = now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64;
        assert!(mono <= now && now - mono < 10_000_000_000);
    }
}
