//! What a recording's options ask of the machine's memory (the flight
//! recorder's SIZE, `-m`'s rings, the `--aio` buffers), checked against
//! MemAvailable before anything is allocated, so a recording that cannot
//! fit fails with a message instead of an allocation failure midway.

use super::error::RecordError;

/// What a recording asks of memory: `--flight-recorder`, `-m` and `--aio`.
pub struct Asks {
    pub flight_recorder: Option<u64>,
    pub pages: Option<usize>,
    pub aio: Option<usize>,
}

/// The memory a recording's options ask for, against what the machine has
/// available now (`MemAvailable`), before anything is allocated: the
/// flight recorder's SIZE, the rings (-m pages × online CPUs) and the
/// --aio buffers (N × a ring).
pub(super) fn check(o: &Asks) -> Result<(), RecordError> {
    let Some(avail) = mem_available() else {
        return Ok(()); // no /proc/meminfo: the allocation itself will say
    };
    let page = crate::event::ring::page_size() as u64;
    let ring = o.pages.map_or(0, |p| p as u64 * page);
    let cpus = crate::event::cpus::online().map_or(1, |c| c.len() as u64);
    let asks = [
        ("--flight-recorder", o.flight_recorder.unwrap_or(0)),
        ("-m (per CPU, × online CPUs)", ring.saturating_mul(cpus)),
        (
            "--aio buffers",
            o.aio
                .map_or(0, |n| (n as u64).saturating_mul(ring.max(1 << 20))),
        ),
    ];
    let total = asks.iter().fold(0u64, |t, (_, b)| t.saturating_add(*b));
    if total > avail {
        let (what, b) = asks.iter().max_by_key(|(_, b)| *b).expect("three");
        return Err(RecordError::Usage(format!(
            "{what} asks for {} MiB, and the recording {} MiB in all, but this machine has {} MiB \
             available: choose a smaller size",
            b >> 20,
            total >> 20,
            avail >> 20
        )));
    }
    Ok(())
}

/// `MemAvailable` of /proc/meminfo, in bytes.
fn mem_available() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
