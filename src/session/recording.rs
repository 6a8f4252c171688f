//! The recording core every strategy (serial, threads, flight) runs on:
//! the prepared events, the features, the side band, the start, the
//! control loop's limits and switches, the lost-sample count, build ids and
//! the summary. Strategies say only how rings are grouped and where the
//! compressed bytes go; they call down into this, never the other way.

use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

use super::build_ids;
use super::control::Channel;
use super::error::io_err;
use super::error::RecordError;
use super::limits::{Gate, Limits};
use super::options::RecordOptions;
use super::options::SwitchOutput;
use super::place::Place;
use super::run::{self, Drained, LoopOptions};
use super::setup::Prepared;
use super::status::StatusLine;
use super::supervisor::{Ended, SessionSupervisor};
use super::synth_side_band::SynthSideBand;
use super::unit::Unit;
use super::unit_build::UnitBuild;
use crate::event::ring::Ring;
use crate::event::sys;
use crate::event::target::Target;
use crate::format::attr::sample_type as st;
use crate::format::record::RecordType;
use crate::format::sample::id_trailer_offset;
use crate::format::{CompressedInfo, FeatureSet};
use crate::notes::Notes;
use crate::push::drain::DrainSettings;
use crate::push::records::declared_mmap_len;
use crate::push::Output;
use crate::synth;
use crate::transform::off_cpu::OffCpu;
use crate::transform::scan::Hits;
use crate::transform::StackCut;

mod summary_of;

/// One recording's shared state: what was asked, the events opened for
/// it, and the features every output of it carries.
pub struct Recording<'o> {
    o: &'o RecordOptions,
    prepared: Prepared,
    features: FeatureSet,
    started: Instant,
    /// `--control`, until the loop takes it.
    channel: Option<Channel>,
    /// The dwarf stack cut for every drain unit (None: off or not dwarf).
    stack_cut: Option<StackCut>,
    /// The largest ring's data size, taken before strategies take the rings.
    ring_size: usize,
    /// `--off-cpu`'s conversion, shared by every drain unit.
    off_cpu: Option<OffCpu>,
}

impl<'o> Recording<'o> {
    /// Opens the control channel and the events, and describes them.
    pub fn prepare(
        o: &'o RecordOptions,
        started: Instant,
        notes: &mut Notes,
    ) -> Result<Self, RecordError> {
        let channel = o
            .control
            .as_ref()
            .map(Channel::open)
            .transpose()
            .map_err(|e| RecordError::Usage(e.to_string()))?;
        let mut prepared = super::setup::prepare(o)?;
        notes.append(&mut prepared.set.notes);
        let fp = o.call_graph == crate::event::events::CallGraph::FramePointer;
        // Checked by RecordOptions::validate: it fits.
        let thresh = u64::try_from(o.off_cpu_thresh.as_nanos()).unwrap_or(u64::MAX);
        let threads = crate::event::target::threads_at_start(&o.target, &prepared.tgids);
        let off_cpu = OffCpu::for_attrs(&mut prepared.set.attrs, fp, thresh, threads);
        let mut features = synth::features::session_features(&prepared.set.attrs, &o.argv);
        synth::features::event_features(&mut features, &o.events)
            .map_err(io_err("describing the events (tracefs)"))?;
        if let Some(c) = o.clockid {
            crate::event::clock::note(&mut features, c);
        }
        let stack_cut = prepared.stack_cut(o.keep_stack_padding, notes);
        let ring_size = prepared.ring_size();
        Ok(Recording {
            ring_size,
            o,
            prepared,
            features,
            started,
            channel,
            stack_cut,
            off_cpu,
        })
    }

    /// What was asked.
    pub fn options(&self) -> &'o RecordOptions {
        self.o
    }

    /// The features every output of the recording carries.
    pub fn features(&self) -> &FeatureSet {
        &self.features
    }

    /// The events' attributes, as every output's header holds them.
    pub fn attrs(&self) -> &[crate::format::AttrEntry] {
        &self.prepared.set.attrs
    }

    /// Each ring's CPU, in ring order (before strategies take the rings).
    pub fn ring_cpus(&self) -> Vec<u32> {
        self.prepared.set.rings.iter().map(|(c, _)| *c).collect()
    }

    /// The fds of the events whose records go to `rings` (ring indexes).
    pub fn event_fds(&self, rings: &[usize]) -> Vec<RawFd> {
        let fds = self.prepared.set.fds.iter();
        fds.filter(|f| rings.contains(&f.ring))
            .map(|f| f.fd.as_raw_fd())
            .collect()
    }

    /// Disables every event (the drain threads' final passes see all).
    pub fn disable_events(&self) -> std::io::Result<()> {
        self.prepared.set.disable()
    }

    /// `--control`'s channel, for a loop of its own (`--threads`).
    pub fn take_channel(&mut self) -> Option<Channel> {
        self.channel.take()
    }

    /// The drain loop on this thread, from the start to the end: the rings
    /// taken, drained by `unit` until the recording ends, acting on each
    /// `--switch-output` (or, for the flight recorder, each snapshot) with
    /// `on_switch` (false ends the recording), and put back.
    pub fn run(
        &mut self,
        unit: &mut Unit,
        child: Option<std::process::Child>,
        mut on_switch: impl FnMut(&Recording<'o>, &mut Unit, &mut Drained) -> bool,
    ) -> Ended {
        let (mut rings, fds) = self.take_rings();
        let flight = self.o.flight_recorder.is_some();
        // A flight recorder's memory has no checkpoints.
        let checkpoint = self.o.checkpoint.filter(|_| !flight);
        let channel = self.channel.take();
        let features = self.features.clone();
        let ended = {
            let this = &*self;
            let opts = this.loop_options(&features, checkpoint);
            let mut ctl = this.supervisor(channel, child, true);
            if flight {
                // SIGUSR2 asks for a snapshot, as perf's --switch-output does.
                ctl.limits.switch = Some(SwitchOutput::Signal);
            }
            let drained = run::drain_all(unit, &mut rings, &fds, &mut ctl, &opts, |u, d| {
                on_switch(this, u, d)
            });
            ctl.end(drained)
        };
        self.prepared.set.rings = rings;
        ended
    }

    /// What every unit of the recording does besides pushing (its record
    /// type, stack cut and off-CPU conversion), writing no FINISHED_ROUND
    /// and gathering no hits: a destination sets those.
    pub fn drain_settings(&self) -> DrainSettings {
        DrainSettings {
            format: self.o.compressed_format,
            stack_cut: self.stack_cut.clone(),
            off_cpu: self.off_cpu.clone(),
            rounds: false,
            hits: false,
        }
    }

    /// A drain unit writing to `output`, with the recording's codec, async
    /// choice and meter, doing what `settings` say. Notes on the choices
    /// made go to `notes`.
    pub fn drain_unit(
        &self,
        output: Output,
        settings: DrainSettings,
        notes: &mut Notes,
    ) -> Result<Unit, RecordError> {
        let o = self.o;
        let built = o.codec.visit(UnitBuild {
            output,
            aio: o.aio,
            aio_backend: o.aio_backend,
            copy_meter: o.copy_meter,
            ring_size: self.ring_size,
            settings,
        })??;
        notes.extend(built.notes);
        Ok(built.unit)
    }

    /// The rings, taken for a drain loop on this thread, and every event
    /// fd (to poll: they report their ring's wakeups and hang up when their
    /// task is gone). Put the rings back before the summary.
    pub fn take_rings(&mut self) -> (Vec<(u32, Ring)>, Vec<RawFd>) {
        let set = &mut self.prepared.set;
        let fds = set.fds.iter().map(|f| f.fd.as_raw_fd()).collect();
        (std::mem::take(&mut set.rings), fds)
    }

    /// How a drain loop of this recording paces itself.
    pub fn loop_options<'f>(
        &self,
        features: &'f FeatureSet,
        checkpoint: Option<Duration>,
    ) -> LoopOptions<'f> {
        LoopOptions {
            min_bytes: self.o.mmap_flush.max(1) as u64,
            // A sixteenth of the ring: well under the kernel's wakeup
            // watermark (half the ring), so a woken drain always finds it.
            min_push: (self.ring_size / 16) as u64,
            checkpoint,
            features,
        }
    }

    /// The records perf synthesizes before the ring data.
    pub fn side_band(&self, notes: &mut Notes) -> Vec<u8> {
        self.side_band_of(&self.o.target, notes)
    }

    fn side_band_of(&self, target: &Target, notes: &mut Notes) -> Vec<u8> {
        SynthSideBand {
            target,
            call_graph: self.o.call_graph,
            synth: self.o.synth,
            tracking_flags: self.o.attr_extra.tracking_flags,
            map_timeout: self.o.proc_map_timeout,
            tgids: &self.prepared.tgids,
            trailer: self.prepared.trailer_size(),
        }
        .build(notes)
    }

    /// The side band of an output started after the recording's start (a
    /// switched output, a flight-recorder snapshot): the processes as /proc
    /// shows them now (a forked workload has exec'd since), plus every map
    /// and comm record seen so far, before FINISHED_INIT — a process exiting
    /// (or gone) by now has nothing left in /proc, but its samples are there.
    pub fn later_side_band(&self, map_history: &[u8], notes: &mut Notes) -> Vec<u8> {
        let target = match &self.o.target {
            Target::Workload(_) => Target::Pids(self.prepared.tgids.clone()),
            t => t.clone(),
        };
        let mut sb = self.side_band_of(&target, notes);
        let init = sb.split_off(sb.len() - 8);
        sb.extend_from_slice(map_history);
        sb.extend_from_slice(&init);
        sb
    }

    /// Starts the recording: enables the events (a forked workload enables
    /// its own, on exec), starts the workload or timing command, and only
    /// then lets the output replace an existing one.
    pub fn start(&mut self, out: &mut Place) -> Result<Option<std::process::Child>, RecordError> {
        let o = self.o;
        if !matches!(o.target, Target::Workload(_)) {
            let set = &self.prepared.set;
            if o.delay_ms.is_some() {
                set.enable_tracking()
            } else {
                set.enable()
            }
            .map_err(io_err("cannot enable the events"))?;
            if let Some(sw) = &self.prepared.switch_events {
                sw.enable()
                    .map_err(io_err("cannot enable --switch-output-event"))?;
            }
        }
        let child = match self.prepared.workload.take() {
            Some(w) => {
                let cmd = match &o.target {
                    Target::Workload(argv) => &argv[0],
                    _ => &o.timing_command[0],
                };
                let cmd = cmd.to_string_lossy().into_owned();
                Some(w.start().map_err(|err| RecordError::Start { cmd, err })?)
            }
            None => None,
        };
        // The workload runs (it must not inherit the policy): the drain
        // takes its realtime priority now (`--threads` drains take it
        // each, as they start).
        if let Some(prio) = o.realtime {
            if let Err(e) = set_realtime(prio) {
                if let Some(mut c) = child {
                    let _ = c.kill();
                    let _ = c.wait();
                }
                return Err(RecordError::Usage(format!(
                    "-r {prio}: cannot run at SCHED_FIFO priority {prio} ({e}): run as root, \
                     grant CAP_SYS_NICE, or raise `ulimit -r`"
                )));
            }
        }
        // Started: only now may an existing file become FILE.old.
        if let Err(e) = out.commit() {
            if let Some(mut c) = child {
                let _ = c.kill();
                let _ = c.wait();
            }
            return Err(RecordError::Output(e));
        }
        Ok(child)
    }

    /// The control of the loop from now: the workload, `-D`, `--control`,
    /// `--duration`, `--max-size`, `--switch-output` (`switch` overrides
    /// the last: the flight recorder snapshots on SIGUSR2).
    /// `channel` is [`Recording::channel`], taken by the strategy.
    pub fn supervisor(
        &self,
        channel: Option<Channel>,
        child: Option<std::process::Child>,
        status: bool,
    ) -> SessionSupervisor<'_> {
        let o = self.o;
        let now = Instant::now();
        let gate = Gate {
            enable_at: o
                .delay_ms
                .filter(|&d| d >= 0)
                .map(|d| now + Duration::from_millis(d as u64)),
            channel,
            ..Default::default()
        };
        let status = (status && o.status).then(StatusLine::new);
        let mut ctl = SessionSupervisor::new(&self.prepared.set, child, status, gate);
        ctl.limits = Limits {
            end_at: o.duration.map(|d| now + d),
            max_size: o.max_size,
            switch: o.switch_output,
            output_since: Some(now),
            reason: None,
        };
        ctl
    }

    /// LOST_SAMPLES records for every event fd whose PERF_FORMAT_LOST count
    /// is non-zero, and the total.
    pub fn lost_samples(&self) -> (Vec<u8>, u64) {
        let p = &self.prepared;
        let (mut recs, mut total) = (Vec::new(), 0u64);
        let sample_type = p.set.attrs[0].attr.sample_type();
        for f in &p.set.fds {
            if let Ok(lost) = sys::read_lost(&f.fd, f.id) {
                if lost > 0 {
                    total += lost;
                    recs.extend(lost_samples_record(
                        lost,
                        f.id,
                        sample_type,
                        p.trailer_size(),
                    ));
                }
            }
        }
        (recs, total)
    }

    /// HEADER_BUILD_ID (and the cache) for what `hits` saw, where asked.
    pub fn add_build_ids(&self, f: &mut FeatureSet, hits: &Hits, notes: &mut Notes) {
        if self.o.build_ids.table {
            let vmlinux = self.o.vmlinux.as_deref();
            build_ids::add(f, hits, &self.o.build_ids, vmlinux, notes);
        }
    }

    /// HEADER_COMPRESSED as an output announces it before its first
    /// COMPRESSED record (a pipe, a `--threads` directory): the ratio is
    /// unknown until the end (perf writes 0).
    pub fn announced_codec(&self) -> Option<CompressedInfo> {
        let id = self.o.codec.id();
        (id != perfz_codecs::CodecId::NONE).then(|| CompressedInfo {
            version: 0,
            codec: id.0,
            level: self.o.codec.level() as u32,
            ratio: 0,
            mmap_len: declared_mmap_len(id, 0),
        })
    }
}

/// The calling thread at SCHED_FIFO priority `prio`; children it forks
/// later start with the normal policy (SCHED_RESET_ON_FORK).
pub(super) fn set_realtime(prio: i32) -> std::io::Result<()> {
    let param = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: sched_setscheduler reads `param` (a valid sched_param on our
    // stack) for the calling thread (pid 0) and keeps no pointer to it.
    let r = unsafe {
        libc::sched_setscheduler(0, libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK, &param)
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// LOST_SAMPLES: `u64 lost` and a sample_id trailer carrying the event's id.
fn lost_samples_record(lost: u64, id: u64, sample_type: u64, trailer: usize) -> Vec<u8> {
    let mut rec = synth::record(RecordType::LOST_SAMPLES.0, 0, &lost.to_le_bytes(), trailer);
    if trailer > 0 {
        if let Some(off) = id_trailer_offset(sample_type, st::ID) {
            let at = rec.len() - trailer + off;
            rec[at..at + 8].copy_from_slice(&id.to_le_bytes());
        }
    }
    rec
}

/// A write error with what was being written.
pub fn io_err_context(e: std::io::Error, what: &str) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{what}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_samples_carries_the_id_where_the_trailer_has_it() {
        let stype = st::TID | st::TIME | st::ID | st::CPU;
        let rec = lost_samples_record(5, 0xabcd, stype, 32);
        assert_eq!(rec.len(), 8 + 8 + 32);
        assert_eq!(u32::from_le_bytes(rec[0..4].try_into().unwrap()), 13);
        assert_eq!(u64::from_le_bytes(rec[8..16].try_into().unwrap()), 5);
        // tid (8) + time (8), then the id.
        assert_eq!(u64::from_le_bytes(rec[32..40].try_into().unwrap()), 0xabcd);
    }
}
