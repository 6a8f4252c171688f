//! Where a recording's sample filter runs: in the kernel where perfz's BPF
//! program loads and attaches to every sampling fd of the filtered events
//! (before they are enabled), else in the push path, with the reason; and
//! what it dropped, for the summary and perf's LOST_SAMPLES record.

use std::os::fd::AsFd;

use super::Recording;
use crate::event::EventSet;
use crate::session::summary::SampleFilterSummary;
use crate::transform::sample_filter::kernel::{self, KernelFilter};
use crate::transform::sample_filter::SampleFilter;

/// Where the filter runs.
#[derive(Debug, Default)]
pub struct FilterPlace {
    /// The push path's filter (where the kernel's is not whole).
    pub push: Option<SampleFilter>,
    /// The programs attached in the kernel.
    pub kernel: Option<KernelFilter>,
    /// Why the filter runs in the push path.
    pub why: Option<String>,
}

/// `f` in the kernel where it can run there, else in the push path.
pub fn place(f: Option<SampleFilter>, set: &EventSet) -> FilterPlace {
    let Some(f) = f else {
        return FilterPlace::default();
    };
    // Only sampling fds take a program (a counting group member refuses).
    let fds: Vec<_> = set
        .fds
        .iter()
        .filter(|e| set.attrs[e.attr_index].attr.sample_period() != 0)
        .map(|e| (e.attr_index, e.fd.as_fd()))
        .collect();
    let (k, why) = kernel::load(f.compiled(), &fds);
    FilterPlace {
        push: why.is_some().then_some(f),
        kernel: Some(k),
        why,
    }
}

impl Recording<'_> {
    /// What the filter did, with `push_dropped` (the push path's count).
    pub(super) fn filter_summary(&self, push_dropped: Option<u64>) -> Option<SampleFilterSummary> {
        let k = self.filter.kernel.as_ref()?;
        let in_kernel: u64 = k.dropped().iter().map(|(_, n)| n).sum();
        Some(SampleFilterSummary {
            filtered: if self.filter.why.is_some() {
                "push path"
            } else {
                "kernel"
            },
            samples_dropped: in_kernel + push_dropped.unwrap_or(0),
            why: self.filter.why.clone(),
        })
    }

    /// perf's LOST_SAMPLES record of each event whose program dropped
    /// samples: marked PERF_RECORD_MISC_LOST_SAMPLES_BPF, stamped with the
    /// event's first id.
    pub(super) fn bpf_lost_samples(&self, sample_type: u64, trailer: usize) -> Vec<u8> {
        let Some(k) = &self.filter.kernel else {
            return Vec::new();
        };
        let set = &self.prepared.set;
        let mut recs = Vec::new();
        for (i, n) in k.dropped().into_iter().filter(|&(_, n)| n > 0) {
            let id = set
                .fds
                .iter()
                .find(|f| f.attr_index == i)
                .map_or(0, |f| f.id);
            recs.extend(super::synthesized::lost_samples_record(
                n,
                id,
                sample_type,
                trailer,
                crate::format::record::misc::LOST_SAMPLES_BPF,
            ));
        }
        recs
    }
}
