//! CPU lists as the kernel and perf write them: `0-3,5,7-8`.

/// Parses a CPU list; errors name the bad part.
pub fn parse_list(s: &str) -> Result<Vec<u32>, super::error::OptionError> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        let bad = || super::error::OptionError::CpuList {
            list: s.into(),
            part: part.into(),
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) =
                    (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
                if a > b || b - a > 65535 {
                    return Err(bad());
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().map_err(|_| bad())?),
        }
    }
    // An empty list (a script's empty `$CPUS`: `-C ''`, `-C ,`) names no
    // CPU: perf fails there rather than record nothing.
    if out.is_empty() {
        return Err(super::error::OptionError::CpuList {
            list: s.into(),
            part: s.into(),
        });
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The online CPUs.
pub fn online() -> std::io::Result<Vec<u32>> {
    let s = std::fs::read_to_string("/sys/devices/system/cpu/online")?;
    parse_list(&s).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// The possible CPUs (what perf calls "available").
pub fn possible() -> std::io::Result<Vec<u32>> {
    let s = std::fs::read_to_string("/sys/devices/system/cpu/possible")?;
    parse_list(&s).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// Formats a sorted list back into ranges.
pub fn format_list(cpus: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Pins the calling thread to `cpus` (none: left as it is).
pub fn pin_this_thread(cpus: &[u32]) -> std::io::Result<()> {
    if cpus.is_empty() {
        return Ok(());
    }
    // SAFETY: cpu_set_t is plain data; zeroed is an empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        // SAFETY: CPU_SET writes a bit inside `set` (it checks the bound).
        unsafe { libc::CPU_SET(c as usize, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed; 0 = this thread.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_round_trip() {
        assert_eq!(parse_list("0-3,5,7-8\n").unwrap(), [0, 1, 2, 3, 5, 7, 8]);
        assert_eq!(format_list(&[0, 1, 2, 3, 5, 7, 8]), "0-3,5,7-8");
        assert!(parse_list("3-1").is_err());
        assert!(parse_list("x").is_err());
        for empty in ["", ",", " ", " , "] {
            assert!(parse_list(empty).is_err(), "{empty:?} names no CPU");
        }
    }
}
