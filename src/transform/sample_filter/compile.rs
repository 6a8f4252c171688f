//! A parsed filter bound to one event's sample layout: each comparison
//! knows where in the sample its word sits. The fixed words before READ
//! (IDENTIFIER .. PERIOD) are at offsets from the sample's start; the fixed
//! words after the stack (WEIGHT, DATA_SRC, TRANSACTION, then PHYS_ADDR,
//! CGROUP, DATA_PAGE_SIZE, CODE_PAGE_SIZE) at offsets from its end, which
//! holds where nothing of variable size follows them (no AUX; for the
//! first three, no REGS_INTR): perfz refuses a filter on them otherwise.
//!
//! A field the event does not sample is refused as perf 7.x refuses it
//! (util/bpf-filter.c, `check_sample_flags`: "event does not have
//! PERF_SAMPLE_CPU" with the option that adds it); perf adds no
//! sample_type bit for a filter, and neither does perfz.

use super::fields::Term;
use super::parse::{Filter, Op};
use crate::format::attr::sample_type as st;
use crate::format::sample::FIXED_WORDS;

/// Where a comparison reads its word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    /// Bytes from the start of the sample's body.
    Start(usize),
    /// Bytes from the end of the record back to the word's start.
    End(usize),
}

/// One comparison, placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    /// The sample word read (for `uid`, `gid`: the TID word).
    pub loc: Loc,
    /// The field.
    pub term: Term,
    /// How it compares.
    pub op: Op,
    /// With what.
    pub value: u64,
}

/// A filter placed in one event's samples: groups (and) of checks (or).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiled {
    /// Every group must hold one check that does.
    pub groups: Vec<Vec<Probe>>,
    /// Some check reads the task's owner (`uid`, `gid`).
    pub owners: bool,
}

/// The tail words in the kernel's order, after the stack dump.
const MID: [u64; 3] = [
    st::WEIGHT | st::WEIGHT_STRUCT,
    st::DATA_SRC,
    st::TRANSACTION,
];
const LAST: [u64; 4] = [
    st::PHYS_ADDR,
    st::CGROUP,
    st::DATA_PAGE_SIZE,
    st::CODE_PAGE_SIZE,
];

/// Where `bit`'s word sits in samples of `t`, or why it cannot be placed.
fn place(t: u64, bit: u64) -> Result<Loc, &'static str> {
    let set = |bits: &[u64]| bits.iter().filter(|&&b| t & b != 0).count() * 8;
    if let Some(i) = FIXED_WORDS.iter().position(|&b| b == bit) {
        return Ok(Loc::Start(set(&FIXED_WORDS[..i])));
    }
    if t & st::AUX != 0 {
        return Err("AUX data");
    }
    if let Some(i) = LAST.iter().position(|&b| b == bit) {
        return Ok(Loc::End(8 + set(&LAST[i + 1..])));
    }
    if t & st::REGS_INTR != 0 {
        return Err("--intr-regs");
    }
    let i = MID.iter().position(|&b| b & bit != 0).ok_or("")?;
    Ok(Loc::End(8 + set(&MID[i + 1..]) + set(&LAST)))
}

/// `f` placed in the samples of the event `name` whose sample_type is `t`;
/// perf's error where the event does not sample a field.
pub fn compile(f: &Filter, name: &str, t: u64) -> Result<Compiled, String> {
    let mut owners = false;
    let mut groups = Vec::new();
    for g in &f.groups {
        let mut checks = Vec::new();
        for c in g {
            let bit = c.term.bit();
            owners |= bit.is_none();
            let bit = bit.unwrap_or(st::TID);
            if t & bit == 0 {
                let (flag, option) = c.term.wants();
                let mut m = format!("Error: {name} event does not have {flag}");
                if let Some(o) = option {
                    m += &format!("\n Hint: please add {o} option to perf record");
                }
                return Err(m);
            }
            let loc = place(t, bit).map_err(|why| {
                format!(
                    "{name}: perfz filters on {flag} only in samples without {why}",
                    flag = c.term.wants().0
                )
            })?;
            checks.push(Probe {
                loc,
                term: c.term,
                op: c.op,
                value: c.value,
            });
        }
        groups.push(checks);
    }
    Ok(Compiled { groups, owners })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::sample_filter::parse;

    fn compiled(s: &str, t: u64) -> Result<Compiled, String> {
        compile(&parse(s, |_| 0).unwrap(), "task-clock", t)
    }

    #[test]
    fn words_are_placed_as_the_kernel_writes_them() {
        let t = st::IDENTIFIER | st::IP | st::TID | st::TIME | st::CPU | st::PERIOD;
        let c = compiled("pid == 1, cpu > 0, period > 1, ip > 0", t).unwrap();
        let locs: Vec<Loc> = c.groups.iter().map(|g| g[0].loc).collect();
        assert_eq!(
            locs,
            [
                Loc::Start(16),
                Loc::Start(32),
                Loc::Start(40),
                Loc::Start(8)
            ]
        );
        let t = st::IP
            | st::TID
            | st::CALLCHAIN
            | st::WEIGHT_STRUCT
            | st::DATA_SRC
            | st::PHYS_ADDR
            | st::CODE_PAGE_SIZE;
        let c = compiled(
            "weight2 > 0, mem_op == load, phys_addr > 0, code_pgsz > 0",
            t,
        )
        .unwrap();
        let locs: Vec<Loc> = c.groups.iter().map(|g| g[0].loc).collect();
        assert_eq!(
            locs,
            [Loc::End(32), Loc::End(24), Loc::End(16), Loc::End(8)]
        );
        assert!(!c.owners);
        assert!(compiled("uid == 0", t).unwrap().owners);
    }

    #[test]
    fn a_field_not_sampled_is_refused_in_perfs_words() {
        let t = st::IP | st::TID | st::PERIOD;
        assert_eq!(
            compiled("cpu > 0", t).unwrap_err(),
            "Error: task-clock event does not have PERF_SAMPLE_CPU\n Hint: please add --sample-cpu option to perf record"
        );
        let e = compiled("period > 0 || code_pgsz > 4096", t).unwrap_err();
        assert!(e.contains("PERF_SAMPLE_CODE_PAGE_SIZE"), "{e}");
        let e = compiled("cgroup == 0", t).unwrap_err();
        assert!(e.contains("PERF_SAMPLE_CGROUP"), "{e}");
        let e = compiled("weight > 0", t | st::WEIGHT | st::REGS_INTR).unwrap_err();
        assert!(e.contains("--intr-regs"), "{e}");
    }
}
