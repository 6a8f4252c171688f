//! The codec crate's integration tests, in one binary (one link): each
//! module is what was its own test file. The modules that need every codec
//! are compiled only with all three; `availability` runs in every build (CI
//! runs it with `--no-default-features`).

mod availability;
#[cfg(all(feature = "zstd", feature = "lz4", feature = "snappy"))]
mod corrupt;
#[cfg(all(feature = "zstd", feature = "lz4", feature = "snappy"))]
mod matrix;
#[cfg(all(feature = "zstd", feature = "lz4", feature = "snappy"))]
mod no_alloc;
#[cfg(all(feature = "zstd", feature = "lz4", feature = "snappy"))]
mod props;
#[cfg(feature = "zstd")]
mod stream;
#[cfg(feature = "zstd")]
mod util;
