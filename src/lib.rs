//! perfz: a Linux event recorder that writes compressed perf.data files.
//!
//! The data flow shows in the module tree: `event` (kernel side) → `push`
//! (ring → codec → sink) → `format` (perf.data), with `session` running one
//! recording around them. docs/ARCHITECTURE.md has the words, the picture
//! and the module map; each module's own docs have the details.
//!
//! Imports only go down the layers (tests/it/code_shape.rs): `format`,
//! `quantity` and `notes` at the bottom; `event` and `transform` (the record
//! transforms: edits over a region); `push`; then `session`, `export`,
//! `eval`, `recover`, `convert`, `replay`, `advice`, `stats` and `synth`;
//! `cli` on top. The `perfz-codecs` crate (codecs/) is below them all.
//!
//! The door (ripgrep's searcher style): five public modules, the APIs a
//! library user and the benches build on: `event` (events and their rings),
//! `format` (perf.data read and written), `push` (the push path: pusher,
//! sinks, meters, the unit, re-exported at its root, and `compressor`;
//! its other submodules are `pub(crate)`), `codecs` (the codecs crate) and `build_id`
//! (build ids of files and the kernel). Every other module is `pub(crate)`;
//! the few items the binary, the fuzz targets, the benches and the
//! integration tests take from them are re-exported below, one `pub use`
//! block: the command's [`main`], the record transforms ([`StackCut`],
//! [`Edit`], [`for_each_slice`]), ring streams for replay
//! ([`ring_stream`], [`varied_stream`], [`pushes`]), export's parts the
//! fuzz targets and tests drive ([`demangle`], [`unwind_one`], [`Elf`],
//! [`Inline`]), [`collect_stats`] (a file's [`Stats`]) and [`kernel_text_range`].
//!
//! Hostile surroundings (tests/it/hostile_surroundings.rs): every file perfz creates
//! where others may write (outputs, snapshots, conversions, recover's copy,
//! build-id cache entries) is created exclusively under a random name and
//! renamed or linked in, so a symlink planted at any name is never written
//! through, and an existing cache entry is left alone; a directory at the
//! output or its `.old` name is moved aside or replaced only when it is a
//! perf recording, a device or FIFO never (session/place.rs);
//! `--control` lines are at most 256 bytes and 64 KiB are read per tick,
//! `ack` lines are ignored and unknown commands get no answer, as perf's
//! (session/control.rs); memory the options ask for is checked against
//! MemAvailable before anything is allocated (session/memory_asks.rs).

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

/// `eprintln!` that never panics: a line for standard error, lost where
/// standard error is closed or full (`perfz record --bogus 2>&1 | head -2`),
/// as perf's `fprintf(stderr, ...)` loses it; `eprintln!` would panic.
macro_rules! say {
    ($($t:tt)*) => {
        $crate::notes::say(&format!("{}\n", format_args!($($t)*)))
    };
}

pub(crate) mod advice;
pub(crate) mod cli;
pub(crate) mod convert;
pub(crate) mod eval;
pub mod event;
pub(crate) mod export;

pub use perfz_codecs as codecs;
pub mod format;
pub(crate) mod notes;
pub mod push;
pub(crate) mod quantity;
pub(crate) mod recover;
pub(crate) mod replay;
pub(crate) mod session;
pub(crate) mod stats;
pub(crate) mod synth;
pub(crate) mod transform;

pub use export::FORMATS as EXPORT_FORMATS;
pub use export::{demangle, unwind_one, Elf, Inline};
pub use replay::{pushes, ring_stream, varied_stream};
pub use stats::{collect as collect_stats, Stats};
pub use synth::build_id;
pub use synth::kernel_range::kernel_text_range;
pub use transform::sample_filter::kernel::{
    load_from as load_sample_filter, OBJECT as SAMPLE_FILTER_OBJECT,
    PUSH_PATH_ENV as SAMPLE_FILTER_PUSH_PATH_ENV,
};
pub use transform::sample_filter::{
    compile as compile_sample_filter, parse as parse_sample_filter,
};
pub use transform::{for_each_slice, Edit, StackCut};

/// The `perfz` command: parses the arguments and runs it (src/main.rs).
pub use cli::main;
