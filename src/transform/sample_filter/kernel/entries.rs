//! A compiled filter as the BPF program's `filter` map holds it: a list of
//! entries, each a comparison or a group marker, ended by DONE (the layout
//! and codes of bpf/sample_filter.bpf.c, perf's `perf_bpf_filter_entry`
//! with GROUP_BEGIN/END around a `||` group). Only the fields the program
//! reads without CO-RE have a code: a filter on another runs in the push
//! path, and [`entries`] says why.

use super::super::compile::Compiled;
use super::super::fields::{self, Term};
use super::super::parse::Op;

/// Entries the program reads at most (its `MAX_ENTRIES`).
pub const MAX_ENTRIES: usize = 64;

/// One entry: `op` compares the field `term` with `value`, or marks a
/// group (`term` 0).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FilterEntry {
    /// perf's `enum perf_bpf_filter_op`.
    pub op: u32,
    /// The program's `enum term`.
    pub term: u32,
    /// What the field is compared with.
    pub value: u64,
}

/// The `filter` map's one value.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct FilterValue {
    /// Entries up to the first DONE are read.
    pub entries: [FilterEntry; MAX_ENTRIES],
}

// SAFETY: FilterValue is repr(C) words (u32, u32, u64 per entry: no
// padding), and any bytes are a valid value.
unsafe impl aya::Pod for FilterValue {}

const OP_GROUP_BEGIN: u32 = 7;
const OP_GROUP_END: u32 = 8;
const OP_DONE: u32 = 9;

/// The program's code of a comparison.
fn op_code(op: Op) -> u32 {
    match op {
        Op::Eq => 0,
        Op::Ne => 1,
        Op::Gt => 2,
        Op::Ge => 3,
        Op::Lt => 4,
        Op::Le => 5,
        Op::And => 6,
    }
}

/// What the machine lets the program read as the sample has it.
#[derive(Clone, Copy, Debug)]
pub struct Machine {
    /// perfz runs in the initial pid namespace: the pid and tid the
    /// kernel's helper gives are the samples'.
    pub initial_pid_ns: bool,
    /// The cgroup hierarchy is v2 only: the helper's cgroup id is the
    /// samples'.
    pub cgroup_v2: bool,
}

/// The program's code of `t`, or why it cannot read it as samples have it.
fn term_code(t: Term, m: Machine) -> Result<u32, String> {
    let ns = "perfz runs in a pid namespace of its own (the kernel program reads the initial one's pid and tid)";
    Ok(match t {
        Term::Ip => 1,
        Term::Tid if m.initial_pid_ns => 2,
        Term::Pid if m.initial_pid_ns => 3,
        Term::Tid | Term::Pid => return Err(ns.into()),
        Term::Cpu => 4,
        Term::Period => 5,
        Term::Addr => 6,
        Term::Uid => 7,
        Term::Gid => 8,
        Term::Cgroup if m.cgroup_v2 => 9,
        Term::Cgroup => {
            return Err(
                "the cgroup hierarchy is not v2 only (the kernel program reads the v2 cgroup)"
                    .into(),
            )
        }
        _ => {
            return Err(format!(
                "the kernel program reads `{}` only through CO-RE and the kfunc \
                 bpf_cast_to_kern_ctx, which perfz's BPF loader (aya 0.13) does not link",
                fields::name(t)
            ))
        }
    })
}

/// `c` as the program's entries, or why the program cannot run it.
pub fn entries(c: &Compiled, m: Machine) -> Result<FilterValue, String> {
    let mut out = Vec::with_capacity(MAX_ENTRIES);
    for g in &c.groups {
        let grouped = g.len() > 1;
        if grouped {
            out.push(marker(OP_GROUP_BEGIN));
        }
        for k in g {
            out.push(FilterEntry {
                op: op_code(k.op),
                term: term_code(k.term, m)?,
                value: k.value,
            });
        }
        if grouped {
            out.push(marker(OP_GROUP_END));
        }
    }
    if out.len() >= MAX_ENTRIES {
        return Err(format!(
            "the filter takes {} entries, more than the kernel program's {}",
            out.len() + 1,
            MAX_ENTRIES
        ));
    }
    let mut v = FilterValue {
        entries: [marker(OP_DONE); MAX_ENTRIES],
    };
    v.entries[..out.len()].copy_from_slice(&out);
    Ok(v)
}

fn marker(op: u32) -> FilterEntry {
    FilterEntry {
        op,
        term: 0,
        value: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::attr::sample_type as st;
    use crate::transform::sample_filter::{compile, parse};

    const HERE: Machine = Machine {
        initial_pid_ns: true,
        cgroup_v2: true,
    };

    fn of(s: &str, t: u64, m: Machine) -> Result<Vec<FilterEntry>, String> {
        let c = compile(&parse(s, |_| 7).unwrap(), "task-clock", t)?;
        let v = entries(&c, m)?;
        let n = v.entries.iter().position(|e| e.op == OP_DONE).unwrap();
        Ok(v.entries[..n].to_vec())
    }

    #[test]
    fn groups_are_marked_and_single_terms_are_not() {
        let t = st::IP | st::TID | st::PERIOD | st::CPU;
        let e = of("period > 1, pid == 5 || cpu & 2", t, HERE).unwrap();
        let e: Vec<(u32, u32, u64)> = e.iter().map(|e| (e.op, e.term, e.value)).collect();
        assert_eq!(
            e,
            [
                (2, 5, 1),
                (OP_GROUP_BEGIN, 0, 0),
                (0, 3, 5),
                (6, 4, 2),
                (OP_GROUP_END, 0, 0)
            ]
        );
    }

    #[test]
    fn a_field_the_program_cannot_read_says_why() {
        let t = st::IP | st::TID | st::TIME | st::CGROUP;
        let e = of("ip > 0, time > 1", t, HERE).unwrap_err();
        assert!(e.contains("`time`") && e.contains("CO-RE"), "{e}");
        let away = Machine {
            initial_pid_ns: false,
            cgroup_v2: false,
        };
        assert!(of("tid > 1", t, away)
            .unwrap_err()
            .contains("pid namespace"));
        assert!(of("cgroup == /x", t, away).unwrap_err().contains("v2"));
        assert_eq!(of("uid == 0, gid != 1", t, away).unwrap().len(), 2);
        let long = vec!["ip > 0"; 64].join(",");
        assert!(of(&long, t, HERE).unwrap_err().contains("more than"));
        assert_eq!(
            of(&vec!["ip > 0"; 63].join(","), t, HERE).unwrap().len(),
            63
        );
    }
}
