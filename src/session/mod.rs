//! One recording, shaped like ripgrep's searcher: plain setup code
//! (`setup`, `destination`, `synth_side_band`), one runtime choice of codec,
//! sink and meter (`unit_build`), one generic unit that drains rings
//! ([`crate::push::unit`]), and a plain loop (`run`) and finish around it.
//! Only the unit is generic; the rest is compiled once. Calls go down:
//! `record` picks a strategy, the strategies call the core and the parts;
//! nothing below imports a strategy.
//!
//! ```text
//! record::run ─ validate (options, output path, memory; nothing touched)
//!   ─ Recording::prepare: setup::prepare (command resolved and forked held
//!     before exec, events opened), features, stack cut
//!   ─ Destination::begin: a Place (a hidden temporary name) ─ unit_build
//!     (CodecSpec::visit) ─▶ Unit ─ side band written plain
//!   ─ Recording::start: enable / exec, then Place::commit
//!   ─ the drain loop (run::drain_all); at a switch Destination::switch:
//!     each unit hands its output over (Unit::hand_over, Units) and the
//!     destination finishes it (finish.rs), names it, and starts the next
//!   ─ the end: each unit hands its output over for the last time, and
//!     Destination::finish finishes it the same way; the summary
//!
//! top         record.rs       the entry: options checked, strategy chosen
//! strategies  serial.rs       one unit on this thread, any Destination
//!             threads/        a unit per ring group on a thread of its own
//!                             (mod.rs: groups, spawn, the main thread's
//!                             wait; job.rs: a thread's loop and its Units;
//!                             line.rs: a thread's summary line)
//! core        recording.rs    events, features, side band, start, run,
//!                             supervisor, lost samples, build ids, summary
//!             destination.rs  where the recording goes: begin, switch, finish
//!               destination/file.rs    a file or a pipe
//!               destination/dir.rs     a --threads directory (data + data.N)
//!               destination/flight.rs  the flight recorder's snapshots
//!             finish.rs       the one finish of an output handed back
//!             unit_build.rs   codec × sink (serial, io_uring, pwrite thread)
//!                             × meter over an Output ─▶ Unit
//!             unit.rs         Units and a unit's answer to a request:
//!                             the units as a destination reaches them
//!             run.rs          the drain loop every unit runs; a Supervisor
//!                             says Go / Stop / Switch
//!             supervisor.rs   the main thread's Supervisor: signals, workload
//!             map_history.rs  maps seen: later side bands and build ids
//!             mailbox.rs      the main thread's requests to a drain thread
//!             place.rs        -o on disk: temporary name, commit, FILE.old
//!             rotation.rs     --switch-output names, --switch-max-files
//! parts       options.rs limits.rs control.rs signals.rs status.rs setup.rs
//!             layout.rs synth_side_band.rs build_ids.rs dso_capture/
//!             cpu_wait.rs memory_asks.rs error.rs summary.rs
//! ```
//!
//! The order of the start is the design: the output is created only once
//! the events are open and the command is forked, and an existing one is
//! moved to `FILE.old` only once the workload exec'd or the events are
//! enabled, so a failed start (a command that cannot exec, events refused)
//! leaves the directory as it was. What runs between the enable and the
//! first drain runs while the rings fill (a 512 KiB ring holds under a
//! millisecond of a 20 kHz dwarf stream), so it is short: the held child
//! execs the path `setup` resolved (no `$PATH` search), and the commit holds
//! a replaced `FILE.old` open instead of waiting for its blocks to be freed
//! (`place::Displaced`).

mod build_ids;
mod control;
mod cpu_wait;
mod destination;
mod dso_capture;
mod error;
mod finish;
mod layout;
mod limits;
mod mailbox;
mod map_history;
mod memory_asks;
mod options;
mod place;
pub mod record;
mod recording;
mod rotation;
mod run;
mod serial;
mod setup;
pub mod signals;
mod status;
mod summary;
mod supervisor;
mod switch_event;
mod synth_side_band;
mod threads;
mod unit;
mod unit_build;

pub use control::ControlSpec;
pub use error::Kept;
pub use layout::ThreadSpec;
pub use options::{
    AioBackend, BuildIdOptions, RecordOptions, SwitchOutput, Synth, DEFAULT_FREQUENCY,
};
pub use rotation::stamped as timestamped;
