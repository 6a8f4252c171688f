//! The side band: records perf synthesizes before the ring data (kernel map,
//! what /proc says about processes that exist already), built as one buffer.

use crate::event::events::CallGraph;
use crate::event::target::Target;
use crate::format::record::RecordType;
use crate::format::writer::empty_record;
use crate::synth;

/// What to describe.
pub struct SynthSideBand<'a> {
    pub target: &'a Target,
    pub call_graph: CallGraph,
    /// The processes recorded (`-p`, or the workload's pid).
    pub tgids: &'a [i32],
    /// Bytes of the sample_id trailer each record carries.
    pub trailer: usize,
}

impl SynthSideBand<'_> {
    /// The records, ending with FINISHED_INIT; `notes` gets what could not be
    /// synthesized.
    pub fn build(&self, notes: &mut Vec<String>) -> Vec<u8> {
        let trailer = self.trailer;
        let data_mmaps = matches!(self.call_graph, CallGraph::Dwarf(_));
        let mut out = Vec::new();
        match synth::kernel::synthesize(trailer) {
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
                Vec::new()
            }
            Target::Pids(_) | Target::Tids(_) => self.tgids.to_vec(),
        };
        let with_fork = self.target.is_system_wide();
        for pid in pids {
            for rec in synth::proc::process_records(pid, with_fork, data_mmaps, trailer) {
                out.extend_from_slice(&rec);
            }
        }
        out.extend_from_slice(&empty_record(RecordType::FINISHED_INIT));
        out
    }
}
