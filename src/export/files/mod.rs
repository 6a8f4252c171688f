//! The files a recording maps: where they are found ([`locate`]: the
//! recorded path, the build-id cache, `--symfs`, [`debuginfod`]), how their
//! bytes are opened ([`file`]) and where those bytes are mapped
//! ([`load_map`]). Naming and unwinding both read through here.

pub(crate) mod debuginfod;
pub(crate) mod file;
pub(crate) mod load_map;
pub(crate) mod locate;
