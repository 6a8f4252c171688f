//! The recording core every strategy (serial, threads, flight) runs on:
//! the prepared events, the features, the side band, the start, the
//! drain loop's supervisor, limits and switches, the lost-sample count, build ids and
//! the summary. Strategies say only how rings are grouped and where the
//! compressed bytes go; they call down into this, never the other way.

use std::cell::Cell;
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

use super::control::Channel;
use super::error::io_err;
use super::error::RecordError;
use super::options::RecordOptions;
use super::run::{self, Drained, LoopOptions};
use super::setup::Prepared;
use super::supervisor::Ended;
use super::unit_build::UnitBuild;
use crate::event::ring::Ring;
use crate::format::FeatureSet;
use crate::notes::Notes;
use crate::push::unit::Unit;
use crate::push::unit::UnitSettings;
use crate::push::Output;
use crate::synth;
use crate::transform::off_cpu::OffCpu;
use crate::transform::StackCut;

mod filter_place;
mod start;
mod summary_of;
mod synthesized;

pub(super) use start::set_realtime;

/// One recording's shared state: what was asked, the events opened for
/// it, and the features every output of it carries.
pub struct Recording<'o> {
    o: &'o RecordOptions,
    prepared: Prepared,
    features: FeatureSet,
    started: Instant,
    /// `--control`, until the supervisor takes it.
    channel: Cell<Option<Channel>>,
    /// The dwarf stack cut for every drain unit (None: off or not dwarf).
    stack_cut: Option<StackCut>,
    /// The largest ring's data size, taken before strategies take the rings.
    ring_size: usize,
    /// `--off-cpu`'s conversion, shared by every drain unit.
    off_cpu: Option<OffCpu>,
    /// `--filter` on non-tracepoint events: in the kernel or the push path.
    filter: filter_place::FilterPlace,
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
        let filters: Vec<Option<&str>> = o
            .events
            .iter()
            .map(|e| e.sample_filter.as_deref())
            .collect();
        let sample_filter =
            crate::transform::sample_filter::for_attrs(&prepared.set.attrs, &filters)
                .map_err(RecordError::Usage)?;
        let filter = filter_place::place(sample_filter, &prepared.set);
        let ring_size = prepared.ring_size();
        Ok(Recording {
            ring_size,
            o,
            prepared,
            features,
            started,
            channel: Cell::new(channel),
            stack_cut,
            off_cpu,
            filter,
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

    /// The drain loop on this thread, from the start to the end: the rings
    /// taken, drained by `unit` until the recording ends, acting on each
    /// `--switch-output` (or, for the flight recorder, each snapshot) with
    /// `on_switch` (false ends the recording), and put back.
    pub fn run(
        &mut self,
        unit: &mut dyn Unit,
        child: Option<std::process::Child>,
        mut on_switch: impl FnMut(&Recording<'o>, &mut dyn Unit, &mut Drained) -> bool,
    ) -> Ended {
        let (mut rings, fds) = self.take_rings();
        let flight = self.o.flight_recorder.is_some();
        // A flight recorder's memory has no checkpoints.
        let checkpoint = self.o.checkpoint.filter(|_| !flight);
        let features = self.features.clone();
        let ended = {
            let this = &*self;
            let opts = this.loop_options(&features, checkpoint);
            let mut supervisor = this.supervisor(child, true);
            let drained = run::drain_all(unit, &mut rings, &fds, &mut supervisor, &opts, |u, d| {
                on_switch(this, u, d)
            });
            supervisor.end(drained)
        };
        self.prepared.set.rings = rings;
        ended
    }

    /// A drain unit writing to `output`, with the recording's codec, async
    /// choice, meter and what every unit does besides pushing (record type,
    /// stack cut, off-CPU conversion), built here once into the settings
    /// the unit takes; `rounds`: each pass ends with FINISHED_ROUND (not in
    /// a `data.N`, as perf's); `hits`: it gathers what the build-id pass and
    /// later side bands need. Notes on the choices made go to `notes`.
    pub fn drain_unit(
        &self,
        output: Output,
        rounds: bool,
        hits: bool,
        notes: &mut Notes,
    ) -> Result<Box<dyn Unit + Send>, RecordError> {
        let o = self.o;
        let settings = UnitSettings {
            format: o.compressed_format,
            stack_cut: self.stack_cut.clone(),
            off_cpu: self.off_cpu.clone(),
            sample_filter: self.filter.push.clone(),
            rounds,
            hits,
        };
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
}
