//! The files a recording maps: where they are found ([`locate`]: the
//! recorded path, the build-id cache, `--symfs`, [`debuginfod`]), how their
//! bytes are opened ([`file`]) and where those bytes are mapped
//! ([`load_map`]). Naming and unwinding both read through here.

pub mod debuginfod;
pub mod file;
pub mod load_map;
pub mod locate;
