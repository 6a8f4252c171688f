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
//! The door: public are only the modules the binary (`cli`), the fuzz
//! targets, the benches and the integration tests reach (`event`, `export`,
//! `format`, `push`, `replay`, `stats`, `synth`, `transform`, and `codecs`
//! re-exported); the rest is `pub(crate)` (issue 56 asks for at most five:
//! that needs a façade over the items those users take, not yet done).
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
pub mod cli;
pub(crate) mod convert;
pub(crate) mod eval;
pub mod event;
pub mod export;

pub use perfz_codecs as codecs;
pub mod format;
pub(crate) mod notes;
pub mod push;
pub(crate) mod quantity;
pub(crate) mod recover;
pub mod replay;
pub(crate) mod session;
pub mod stats;
pub mod synth;
pub mod transform;
