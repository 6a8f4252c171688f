//! The integration tests, as one test binary (one link of the crate instead
//! of one per file): a module per area, the helpers in `common`.
//! `cargo test --test it MODULE::` runs one area, e.g. `hostile_surroundings::`.

mod common;

mod build_ids;
mod cli_codecs;
mod code_shape;
mod compressed2;
mod damaged_files;
mod eval;
mod event_terms;
mod events;
mod export;
mod export_debuginfod;
mod export_diff;
mod export_fp_fallback;
mod export_inline;
mod export_inputs;
mod export_otlp;
mod export_otlp_push;
mod export_pprof;
mod export_symfs;
mod export_tools;
mod export_views;
mod fixtures;
mod flight_recorder;
mod header_features;
mod hostile_dsos;
mod hostile_names;
mod hostile_surroundings;
mod interop;
mod ktext_cache;
mod languages;
mod latency;
mod layouts;
mod libc_plt;
mod long_captures;
mod loss_advice;
mod newer_perf;
mod newest_perf;
mod no_dyn;
mod off_cpu;
mod owned;
mod perf_habits;
mod perf_suite;
mod pressure;
mod push_paths;
mod record;
mod record_options;
mod reliability;
mod report;
mod stack_cut;
mod switches;
mod threads;
mod wild_files;
mod writer_props;
