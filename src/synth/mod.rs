//! Records and features perf synthesizes in user space, so that `perf report`
//! can name processes and symbolize: the kernel map, COMM/FORK/MMAP2 of
//! processes that exist before the recording, and the header features.

pub mod build_id;
pub mod features;
pub mod kernel;
pub mod kernel_cache;
pub mod kernel_image;
pub mod kernel_range;
pub mod ns_cgroup;
pub mod pmus;
pub mod proc;
pub mod topology;
pub mod tracing;

/// Builds one record: header, body, then a zeroed sample_id trailer of
/// `trailer` bytes (perf's synthesized records carry all-zero trailers).
pub fn record(type_: u32, misc: u16, body: &[u8], trailer: usize) -> Vec<u8> {
    let size = 8 + body.len().div_ceil(8) * 8 + trailer;
    let mut r = Vec::with_capacity(size);
    r.extend_from_slice(&type_.to_le_bytes());
    r.extend_from_slice(&misc.to_le_bytes());
    r.extend_from_slice(&(size as u16).to_le_bytes());
    r.extend_from_slice(body);
    r.resize(size, 0);
    r
}

/// A NUL-terminated string padded to 8 bytes, as record bodies hold them.
pub fn cstr8(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(s);
    out.push(0);
    while out.len() % 8 != 0 {
        out.push(0);
    }
}
