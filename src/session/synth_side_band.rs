//! The side band: records perf synthesizes before the ring data (kernel map,
//! what /proc says about processes that exist already: their COMM, FORK
//! and MMAP2 records), built as one buffer ending with FINISHED_INIT.

use crate::event::events::CallGraph;
use crate::event::target::Target;
use crate::format::record::RecordType;
use crate::format::writer::empty_record;
use crate::notes::Notes;
use crate::synth;

/// The most CGROUP records written at the start.
const MAX_CGROUPS: usize = 100_000;

/// What to describe.
pub struct SynthSideBand<'a> {
    pub target: &'a Target,
    pub call_graph: CallGraph,
    /// `--synth`: which side band of existing tasks.
    pub synth: crate::session::Synth,
    /// The tracking event's attr flags (namespaces, cgroup, mmap_data).
    pub tracking_flags: u64,
    /// `--proc-map-timeout`.
    pub map_timeout: std::time::Duration,
    /// The processes recorded (`-p`, or the workload's pid).
    pub tgids: &'a [i32],
    /// Bytes of the sample_id trailer each record carries.
    pub trailer: usize,
}

impl SynthSideBand<'_> {
    /// The records, ending with FINISHED_INIT; `notes` gets what could not be
    /// synthesized.
    pub fn build(&self, notes: &mut Notes) -> Vec<u8> {
        use crate::format::attr::flags;
        let trailer = self.trailer;
        let data_mmaps = matches!(self.call_graph, CallGraph::Dwarf(_))
            || self.tracking_flags & flags::MMAP_DATA != 0;
        let namespaces = self.tracking_flags & flags::NAMESPACES != 0;
        let mut out = Vec::new();
        match synth::kernel::synthesize(trailer, notes) {
            Ok(rec) => out.extend_from_slice(&rec),
            Err(why) => notes.push(why),
        }
        let pids: Vec<i32> = match self.target {
            Target::Cpus(_) => synth::proc::all_pids(),
            Target::Workload(_) => {
                // The workload has not exec'd yet: its COMM is perfz's until
                // the kernel reports the exec.
                let pid = self.tgids[0];
                let comm = synth::proc::comm_of(pid, pid).unwrap_or_else(|| "perfz-exec".into());
                out.extend_from_slice(&synth::proc::comm_record(pid, pid, &comm, trailer));
                if namespaces {
                    out.extend(synth::ns_cgroup::namespaces_record(pid, pid, trailer));
                }
                Vec::new()
            }
            Target::Pids(_) | Target::Tids(_) => self.tgids.to_vec(),
        };
        if self.synth.cgroup && self.tracking_flags & flags::CGROUP != 0 {
            for rec in synth::ns_cgroup::cgroup_records(trailer, MAX_CGROUPS) {
                out.extend_from_slice(&rec);
            }
        }
        let describe = synth::proc::Describe {
            fork: self.target.is_system_wide(),
            namespaces,
            maps: self.synth.mmap,
            data_mmaps,
            map_timeout: self.map_timeout,
            trailer,
        };
        let mut late = Vec::new();
        for pid in pids.into_iter().filter(|_| self.synth.task) {
            let (recs, timed_out) = synth::proc::process_records(pid, &describe);
            for rec in recs {
                out.extend_from_slice(&rec);
            }
            if timed_out {
                late.push(pid.to_string());
            }
        }
        if !late.is_empty() {
            notes.push(format!(
                "reading /proc/PID/maps of {} timed out after {} ms: their later maps are missing                  (a longer --proc-map-timeout reads them)",
                late.join(", "),
                self.map_timeout.as_millis()
            ));
        }
        out.extend_from_slice(&empty_record(RecordType::FINISHED_INIT));
        out
    }
}
