//! perf.data: reading and writing the format perf 6.1 reads
//! (`docs/perf-data-format.md`), with transparent decompression.

pub mod attr;
pub mod compressed2;
pub mod data_stream;
pub mod endian;
mod error;
pub mod feature;
pub mod header;
mod meta;
pub mod reader;
pub mod record;
pub mod sample;
mod sections;
pub mod side_band;
mod stream;
pub mod tracing_data;
pub mod writer;

pub use attr::{Attr, AttrEntry};
pub use compressed2::CompressedFormat;
pub use error::FormatError;
pub use feature::{feat, CompressedInfo, FeatureSet};
pub use reader::{Meta, Mode, PerfReader};
pub use record::{Record, RecordHeader, RecordType};
pub use sample::Sample;

/// Bytes of a file, or of the files of a `--threads` directory (0 where
/// it cannot be read).
pub fn size_on_disk(path: &std::path::Path) -> u64 {
    match std::fs::read_dir(path) {
        Ok(d) => d
            .filter_map(|e| e.ok()?.metadata().ok())
            .map(|m| m.len())
            .sum(),
        Err(_) => std::fs::metadata(path).map_or(0, |m| m.len()),
    }
}
