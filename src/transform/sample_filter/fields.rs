//! The fields a sample filter reads, as perf's bpf-filter.l names them, and
//! the named values its grammar takes (perf's `PERF_MEM_*` constants).

use crate::format::attr::sample_type as st;

/// A field of a sample (or of its task: `uid`, `gid`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Term {
    /// `ip`
    Ip,
    /// `id`
    Id,
    /// `tid`
    Tid,
    /// `pid`: the TID word's pid
    Pid,
    /// `cpu`
    Cpu,
    /// `time`
    Time,
    /// `addr`
    Addr,
    /// `period`
    Period,
    /// `txn`: TRANSACTION
    Txn,
    /// `weight`: WEIGHT, whole
    Weight,
    /// `weight1`, `weight2` (`ins_lat`), `weight3` (`p_stage_cyc`,
    /// `retire_lat`): the parts of WEIGHT_STRUCT.
    WeightPart(u8),
    /// `phys_addr`
    PhysAddr,
    /// `code_pgsz`
    CodePgsz,
    /// `data_pgsz`
    DataPgsz,
    /// `mem_op` (1), `mem_lvl`/`mem_lvlnum` (2), `mem_snoop` (3),
    /// `mem_remote` (4), `mem_lock` (5), `mem_dtlb` (6), `mem_blk` (7),
    /// `mem_hops` (8): the parts of DATA_SRC, as perf's BPF program reads them.
    Mem(u8),
    /// `uid`: the task's (real) user
    Uid,
    /// `gid`: the task's (real) group
    Gid,
    /// `cgroup`: CGROUP, the id of the path given
    Cgroup,
}

/// The field names, as perf's lexer takes them.
const NAMES: &[(&str, Term)] = &[
    ("ip", Term::Ip),
    ("id", Term::Id),
    ("tid", Term::Tid),
    ("pid", Term::Pid),
    ("cpu", Term::Cpu),
    ("time", Term::Time),
    ("addr", Term::Addr),
    ("period", Term::Period),
    ("txn", Term::Txn),
    ("weight", Term::Weight),
    ("weight1", Term::WeightPart(1)),
    ("weight2", Term::WeightPart(2)),
    ("weight3", Term::WeightPart(3)),
    ("ins_lat", Term::WeightPart(2)),
    ("p_stage_cyc", Term::WeightPart(3)),
    ("retire_lat", Term::WeightPart(3)),
    ("phys_addr", Term::PhysAddr),
    ("code_pgsz", Term::CodePgsz),
    ("data_pgsz", Term::DataPgsz),
    ("mem_op", Term::Mem(1)),
    ("mem_lvlnum", Term::Mem(2)),
    ("mem_lvl", Term::Mem(2)),
    ("mem_snoop", Term::Mem(3)),
    ("mem_remote", Term::Mem(4)),
    ("mem_lock", Term::Mem(5)),
    ("mem_dtlb", Term::Mem(6)),
    ("mem_blk", Term::Mem(7)),
    ("mem_hops", Term::Mem(8)),
    ("uid", Term::Uid),
    ("gid", Term::Gid),
    ("cgroup", Term::Cgroup),
];

/// The named values (perf's uapi `PERF_MEM_*`), usable wherever a number is.
const VALUES: &[(&str, u64)] = &[
    ("na", 0x01),
    ("load", 0x02),
    ("store", 0x04),
    ("pfetch", 0x08),
    ("exec", 0x10),
    ("l1", 0x01),
    ("l2", 0x02),
    ("l3", 0x03),
    ("l4", 0x04),
    ("cxl", 0x09),
    ("io", 0x0a),
    ("any_cache", 0x0b),
    ("lfb", 0x0c),
    ("ram", 0x0d),
    ("pmem", 0x0e),
    ("none", 0x02),
    ("hit", 0x04),
    ("miss", 0x08),
    ("hitm", 0x10),
    // PERF_MEM_SNOOPX_FWD and _PEER as perf's lexer gives them (unshifted).
    ("fwd", 0x01),
    ("peer", 0x02),
    ("remote", 0x01),
    ("locked", 0x02),
    ("l1_hit", 0x08 | 0x02),
    ("l1_miss", 0x08 | 0x04),
    ("l2_hit", 0x10 | 0x02),
    ("l2_miss", 0x10 | 0x04),
    ("any_hit", 0x02),
    ("any_miss", 0x04),
    ("walk", 0x20),
    ("os", 0x40),
    ("fault", 0x40),
    ("by_data", 0x02),
    ("by_addr", 0x04),
    ("hops0", 0x01),
    ("hops1", 0x02),
    ("hops2", 0x03),
    ("hops3", 0x04),
];

/// The field named `word`.
pub fn term(word: &str) -> Option<Term> {
    NAMES.iter().find(|(n, _)| *n == word).map(|(_, t)| *t)
}

/// perf's name of `t` (the first, where it has several).
pub fn name(t: Term) -> &'static str {
    NAMES.iter().find(|(_, x)| *x == t).map_or("?", |(n, _)| n)
}

/// The value named `word`.
pub fn value(word: &str) -> Option<u64> {
    VALUES.iter().find(|(n, _)| *n == word).map(|(_, v)| *v)
}

impl Term {
    /// The `sample_type` bit the field is read from (None: `uid` and
    /// `gid`, read from the task).
    pub fn bit(self) -> Option<u64> {
        Some(match self {
            Term::Ip => st::IP,
            Term::Id => st::ID,
            Term::Tid | Term::Pid => st::TID,
            Term::Cpu => st::CPU,
            Term::Time => st::TIME,
            Term::Addr => st::ADDR,
            Term::Period => st::PERIOD,
            Term::Txn => st::TRANSACTION,
            Term::Weight => st::WEIGHT,
            Term::WeightPart(_) => st::WEIGHT_STRUCT,
            Term::PhysAddr => st::PHYS_ADDR,
            Term::CodePgsz => st::CODE_PAGE_SIZE,
            Term::DataPgsz => st::DATA_PAGE_SIZE,
            Term::Mem(_) => st::DATA_SRC,
            Term::Cgroup => st::CGROUP,
            Term::Uid | Term::Gid => return None,
        })
    }

    /// perf's name of the bit and the option that asks for it (perf's
    /// `sample_table`, util/bpf-filter.c), for the error where an event
    /// does not sample it.
    pub fn wants(self) -> (&'static str, Option<&'static str>) {
        match self {
            Term::Ip => ("PERF_SAMPLE_IP", None),
            Term::Tid | Term::Pid => ("PERF_SAMPLE_TID", None),
            Term::Period => ("PERF_SAMPLE_PERIOD", None),
            Term::Id => ("PERF_SAMPLE_ID", Some("--sample-identifier")),
            Term::Cpu => ("PERF_SAMPLE_CPU", Some("--sample-cpu")),
            Term::Time => ("PERF_SAMPLE_TIME", Some("-T")),
            Term::Addr => ("PERF_SAMPLE_ADDR", Some("-d")),
            Term::Mem(_) => ("PERF_SAMPLE_DATA_SRC", Some("-d")),
            Term::PhysAddr => ("PERF_SAMPLE_PHYS_ADDR", Some("--phys-data")),
            Term::Weight => ("PERF_SAMPLE_WEIGHT", Some("-W")),
            Term::WeightPart(_) => ("PERF_SAMPLE_WEIGHT_STRUCT", Some("-W")),
            Term::Txn => ("PERF_SAMPLE_TRANSACTION", Some("--transaction")),
            Term::CodePgsz => ("PERF_SAMPLE_CODE_PAGE_SIZE", Some("--code-page-size")),
            Term::DataPgsz => ("PERF_SAMPLE_DATA_PAGE_SIZE", Some("--data-page-size")),
            Term::Cgroup => ("PERF_SAMPLE_CGROUP", Some("--all-cgroups")),
            Term::Uid | Term::Gid => ("PERF_SAMPLE_TID", None),
        }
    }

    /// The field's value out of the sample word it is read from, as perf's
    /// BPF program reads it (util/bpf_skel/sample_filter.bpf.c).
    #[inline]
    pub fn part_of(self, w: u64) -> u64 {
        match self {
            Term::Tid => w >> 32,
            Term::Pid | Term::Cpu => w & 0xffff_ffff,
            Term::WeightPart(1) => w & 0xffff_ffff,
            Term::WeightPart(2) => (w >> 32) & 0xffff,
            Term::WeightPart(_) => w >> 48,
            Term::Mem(p) => mem_part(w, p),
            _ => w,
        }
    }
}

/// A part of `union perf_mem_data_src` (uapi perf_event.h's bit fields).
fn mem_part(w: u64, part: u8) -> u64 {
    let bits = |from: u32, n: u32| (w >> from) & ((1 << n) - 1);
    match part {
        1 => bits(0, 5),                       // mem_op
        2 => bits(33, 4),                      // mem_lvl_num
        3 => (bits(38, 2) << 5) | bits(19, 5), // snoopx, snoop
        4 => bits(37, 1),                      // mem_remote
        5 => bits(24, 2),                      // mem_lock
        6 => bits(26, 7),                      // mem_dtlb
        7 => bits(40, 3),                      // mem_blk
        _ => bits(43, 3),                      // mem_hops
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_read_as_perfs_program_reads_them() {
        let tid_word = (7u64 << 32) | 5; // pid 5, tid 7
        assert_eq!(Term::Pid.part_of(tid_word), 5);
        assert_eq!(Term::Tid.part_of(tid_word), 7);
        let w = 0x0003_0002_0000_0001u64;
        assert_eq!(Term::WeightPart(1).part_of(w), 1);
        assert_eq!(Term::WeightPart(2).part_of(w), 2);
        assert_eq!(Term::WeightPart(3).part_of(w), 3);
        // A load (mem_op 2) hitting L1 (lvl_num 1) with a TLB L1 hit.
        let src = 0x02 | (1u64 << 33) | (0x0au64 << 26);
        assert_eq!(Term::Mem(1).part_of(src), value("load").unwrap());
        assert_eq!(Term::Mem(2).part_of(src), value("l1").unwrap());
        assert_eq!(Term::Mem(6).part_of(src), value("l1_hit").unwrap());
    }

    #[test]
    fn every_name_is_a_field_or_a_value_never_both() {
        for (n, _) in NAMES {
            assert!(value(n).is_none(), "{n}");
        }
        assert_eq!(term("ins_lat"), Some(Term::WeightPart(2)));
        assert_eq!(term("ipx"), None);
    }
}
