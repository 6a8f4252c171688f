//! One perf mmap ring buffer: a control page plus 2^n data pages.
//!
//! Protocol (format notes 6.1): read `data_head` with **acquire** ordering —
//! it pairs with the kernel's release of the records it wrote before moving
//! the head, so every byte below head is visible; copy (or compress) the bytes
//! in `[tail, head)`; then store `data_tail` with **release** ordering, so our
//! reads of those bytes happen before the kernel may see the space as free and
//! overwrite it. With a writable mapping the kernel never overwrites unread
//! data; it drops records and reports LOST instead.
//!
//! The three steps are `Ring::head` (the acquire load), `Ring::region`
//! (`[tail, head)` as an `Input` of one slice, or two where it wraps, never
//! copied) and `Ring::consume` (the release store). The drain hands a
//! region back piece by piece (push/unit.rs), so the kernel reuses space
//! while the rest of the region is still being compressed.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::{MmapOptions, MmapRaw};
use perfz_codecs::Input;

use super::error::OptionError;

/// Rings by the CPU (or task) they belong to.
pub type Rings = [(u32, Ring)];

/// Offsets of the ring positions inside `struct perf_event_mmap_page`.
const DATA_HEAD: usize = 1024;
const DATA_TAIL: usize = 1032;

/// The page size of this machine.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory effects.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// `-m` as perf reads it: a bare number is pages (a power of two), a number
/// with a suffix is bytes (rounded to whole pages, a power of two).
pub fn parse_mmap_pages(s: &str) -> Result<usize, OptionError> {
    let page = page_size() as u64;
    let pages = if s.chars().all(|c| c.is_ascii_digit()) {
        s.parse::<u64>()
            .map_err(|_| crate::quantity::QuantityError::Size(s.into()))?
    } else {
        crate::quantity::parse_size(s)?.div_ceil(page)
    };
    if pages == 0 || !pages.is_power_of_two() || pages > 1 << 20 {
        return Err(OptionError::MmapPages {
            input: s.into(),
            pages,
        });
    }
    Ok(pages as usize)
}

/// perf's default data size: perf_event_mlock_kb (516 KiB by default) minus the
/// control page, rounded down to a power of two → 128 pages with 4 KiB pages.
pub fn default_pages() -> usize {
    let kb = std::fs::read_to_string("/proc/sys/kernel/perf_event_mlock_kb")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .unwrap_or(516);
    let pages = (kb * 1024 / page_size()).saturating_sub(1).max(1);
    1 << (usize::BITS - 1 - pages.leading_zeros())
}

/// How long a ring sized for a stream must hold it while its reader is
/// away (a few scheduler ticks: the drain's wake-up latency on a busy
/// small machine, docs/BENCHMARKS.md).
pub const HOLD_MS: u64 = 32;

/// Data pages for a stream of `rate` samples a second reserving
/// `sample_bytes` each (a dwarf sample reserves its whole stack size in the
/// ring, whatever it used): enough for [`HOLD_MS`], a power of two, at
/// least `floor` pages and at most `max_bytes` per ring.
pub fn pages_for_stream(rate: u64, sample_bytes: u64, floor: usize, max_bytes: usize) -> usize {
    let want = rate.saturating_mul(sample_bytes).saturating_mul(HOLD_MS) / 1000;
    let page = page_size() as u64;
    let cap = (max_bytes as u64 / page).max(1);
    let pages = want.div_ceil(page).clamp(1, cap).next_power_of_two();
    // next_power_of_two may pass the cap: halve back under it.
    let pages = if pages > cap { pages / 2 } else { pages };
    (pages as usize).max(floor)
}

/// Where `[tail, head)` lies in a data area of `data_size` bytes (a power of
/// two): `(start, first_len, second_len)`, the first slice running from
/// `start` towards the end, the second from 0. Positions are free-running
/// counters; a distance larger than the buffer (a reader that fell behind, or
/// garbage) is clamped to the buffer. Always in bounds.
pub fn split(tail: u64, head: u64, data_size: usize) -> (usize, usize, usize) {
    if data_size == 0 || !data_size.is_power_of_two() {
        return (0, 0, 0);
    }
    let len = head.wrapping_sub(tail).min(data_size as u64) as usize;
    let start = (tail & (data_size as u64 - 1)) as usize;
    let first_len = len.min(data_size - start);
    (start, first_len, len - first_len)
}

/// One mapped ring buffer, read from `data_tail` to `data_head` (see the module).
pub struct Ring {
    map: MmapRaw,
    data_size: u64,
    /// Our copy of data_tail: the position up to which we have consumed.
    tail: u64,
}

// SAFETY: the mapping is owned by the Ring; the only shared state is the
// control page, accessed through atomics.
unsafe impl Send for Ring {}

impl Ring {
    /// Maps `1 + pages` pages of `fd`.
    pub fn map(fd: &OwnedFd, pages: usize) -> io::Result<Ring> {
        let page = page_size();
        let map = MmapOptions::new().len((1 + pages) * page).map_raw(fd)?;
        Ok(Ring {
            map,
            data_size: (pages * page) as u64,
            tail: 0,
        })
    }

    /// A ring over anonymous memory, for tests: they write its records and
    /// publish them with [`Ring::publish`], as the kernel would.
    #[cfg(test)]
    pub fn anonymous(pages: usize) -> Ring {
        let page = page_size();
        let map = MmapOptions::new()
            .len((1 + pages) * page)
            .map_anon()
            .expect("anonymous map")
            .into();
        Ring {
            map,
            data_size: (pages * page) as u64,
            tail: 0,
        }
    }

    /// Tests: copies `bytes` to the data area at `head` (wrapping) and
    /// stores data_head past them (release, as the kernel's).
    #[cfg(test)]
    pub fn publish(&mut self, bytes: &[u8]) {
        let size = self.data_size as usize;
        let head = self.head();
        for (k, b) in bytes.iter().enumerate() {
            let at = page_size() + (head as usize + k) % size;
            // SAFETY: `at` is inside the mapping (control page plus data
            // area); the test is the only writer.
            unsafe { *self.map.as_mut_ptr().add(at) = *b };
        }
        self.ctl(DATA_HEAD)
            .store(head + bytes.len() as u64, Ordering::Release);
    }

    /// The data_tail the kernel sees (tests: when space was handed back).
    #[cfg(test)]
    pub fn kernel_tail(&self) -> &AtomicU64 {
        self.ctl(DATA_TAIL)
    }

    /// Bytes of the data area (pages × page size, a power of two).
    pub fn data_size(&self) -> usize {
        self.data_size as usize
    }

    /// Bytes of the whole mapping (what perf declares as mmap_len).
    pub fn mapping_len(&self) -> usize {
        self.map.len()
    }

    fn ctl(&self, off: usize) -> &AtomicU64 {
        // SAFETY: the control page is the first page of the mapping, which
        // lives as long as self; offsets 1024/1032 are 8-aligned u64 fields of
        // perf_event_mmap_page that the kernel updates concurrently, so they
        // may only be touched atomically.
        unsafe { &*(self.map.as_ptr().add(off) as *const AtomicU64) }
    }

    /// The kernel's write position. Acquire: see the module docs.
    pub fn head(&self) -> u64 {
        self.ctl(DATA_HEAD).load(Ordering::Acquire)
    }

    /// Bytes ready to read.
    pub fn pending(&self) -> u64 {
        self.head().wrapping_sub(self.tail)
    }

    /// The readable region up to `head`: one slice, or two when it wraps. Never
    /// copied to be made contiguous.
    pub fn region(&self, head: u64) -> Input<'_> {
        let (start, first_len, second_len) = split(self.tail, head, self.data_size as usize);
        // SAFETY: the data area is `data_size` bytes right after the control
        // page, inside the mapping, and `split` keeps both slices in bounds.
        // Only the bytes in [tail, head) are turned into slices: they are
        // complete records the kernel will not touch until we publish a tail
        // past them (the acquire load of head made them visible). The rest of
        // the data area, which the kernel writes concurrently, is never
        // referenced.
        unsafe {
            let data = self.map.as_ptr().add(page_size());
            Input::two(
                std::slice::from_raw_parts(data.add(start), first_len),
                std::slice::from_raw_parts(data, second_len),
            )
        }
    }

    /// Gives `[tail, head)` back to the kernel. Release: see the module docs.
    pub fn consume(&mut self, head: u64) {
        self.tail = head;
        self.ctl(DATA_TAIL).store(head, Ordering::Release);
    }

    /// Consumed position (for tests and accounting).
    pub fn tail(&self) -> u64 {
        self.tail
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_mmap_pages("4").unwrap(), 4);
        assert!(parse_mmap_pages("3").is_err());
        assert_eq!(parse_mmap_pages("512K").unwrap() * page_size(), 512 << 10);
        assert!(default_pages().is_power_of_two());
        let p = page_size();
        // 20 kHz of 8 KiB stacks for 32 ms: 5.6 MB -> 8 MiB.
        assert_eq!(
            pages_for_stream(20_000, 8192 + 512, 128, 64 << 20) * p,
            8 << 20
        );
        // Capped, and never under the floor.
        assert_eq!(
            pages_for_stream(20_000, 8192 + 512, 128, 4 << 20) * p,
            4 << 20
        );
        assert_eq!(pages_for_stream(100, 1024, 128, 64 << 20), 128);
        assert!(pages_for_stream(u64::MAX, u64::MAX, 1, usize::MAX).is_power_of_two());
    }

    #[test]
    fn split_wraps_and_clamps() {
        assert_eq!(split(0, 100, 4096), (0, 100, 0));
        assert_eq!(split(4000, 4200, 4096), (4000, 96, 104));
        assert_eq!(split(8192 + 10, 8192 + 10, 4096), (10, 0, 0));
        assert_eq!(
            split(5, 1 << 40, 4096),
            (5, 4091, 5),
            "clamped to the buffer"
        );
        assert_eq!(split(u64::MAX - 3, 4, 4096), (4092, 4, 4), "counter wrap");
        assert_eq!(split(0, 10, 3000), (0, 0, 0), "not a power of two");
    }
}
