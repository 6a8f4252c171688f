//! Where a mapped ELF file's bytes are: its load map, the PT_LOAD entries
//! of its program headers (ELF calls them segments; in perfz a segment is
//! the flight recorder's), each a file range and the address (SVMA) the
//! file states for it, and from them the bias a mapping adds (AVMA = SVMA +
//! bias). Symbols, inline frames and the unwinder all translate through
//! here.

use object::{Object, ObjectSegment};

/// One PT_LOAD entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Load {
    /// Its first byte in the file.
    pub(crate) offset: u64,
    /// Its bytes in the file.
    pub(crate) size: u64,
    /// Its bytes in memory (p_memsz: .bss beyond the file's).
    pub(crate) mem_size: u64,
    /// The address the file states for its first byte (SVMA).
    pub(crate) address: u64,
    /// Mapped executable (PF_X).
    pub(crate) exec: bool,
}

/// A file's PT_LOAD entries, in file order.
#[derive(Clone, Debug, Default)]
pub(crate) struct LoadMap(Vec<Load>);

impl LoadMap {
    pub(crate) fn of(file: &object::File<'_>) -> LoadMap {
        LoadMap(
            file.segments()
                .map(|s| {
                    let (offset, size) = s.file_range();
                    let exec = match s.flags() {
                        object::SegmentFlags::Elf { p_flags } => p_flags & object::elf::PF_X != 0,
                        _ => false,
                    };
                    Load {
                        offset,
                        size,
                        mem_size: s.size().max(size),
                        address: s.address(),
                        exec,
                    }
                })
                .collect(),
        )
    }

    #[cfg(test)]
    pub(crate) fn new(loads: Vec<Load>) -> LoadMap {
        LoadMap(loads)
    }

    /// The address (SVMA) of file offset `off`, if a load holds it: in its
    /// bytes in the file, else past them in its memory (a mapping's last
    /// page runs on into .bss, where Go's g0 stacks keep a garbage return
    /// address that perf names by its data object).
    pub(crate) fn svma(&self, off: u64) -> Option<u64> {
        let holds = |s: &&Load, size: u64| (s.offset..s.offset.saturating_add(size)).contains(&off);
        let s = (self.0.iter().find(|s| holds(s, s.size)))
            .or_else(|| self.0.iter().find(|s| holds(s, s.mem_size)))?;
        Some((off - s.offset).wrapping_add(s.address))
    }

    /// What to add to an address the file states (SVMA) to get its address
    /// in a process that maps the file at `start..end` from file offset
    /// `pgoff` (a code mapping: samples and stacks hold code addresses).
    ///
    /// A load's file offset and address need not be a page multiple
    /// apart: LLD (rustc's default linker) puts a PIE's code at offset
    /// 0x740 and address 0x1740 right after a first load ending at 0x738,
    /// so the code mapping's page-aligned `pgoff` (0) lies in the first
    /// load, whose bias is 0x1000 off. The bias is the one of the load the
    /// mapping holds: of those whose file range the mapping overlaps, the
    /// executable one (the tiny file's first page holds both), else the one
    /// it overlaps most.
    pub(crate) fn bias(&self, start: u64, end: u64, pgoff: u64) -> Option<u64> {
        let mapped = pgoff..pgoff.saturating_add(end.saturating_sub(start));
        let overlap = |s: &Load| {
            let to = s.offset.saturating_add(s.size).min(mapped.end);
            to.saturating_sub(s.offset.max(mapped.start))
        };
        let mut best: Option<(&Load, (bool, u64))> = None;
        for s in &self.0 {
            let rank = (s.exec, overlap(s));
            // The first of equals, in file order.
            if rank.1 > 0 && best.is_none_or(|(_, most)| rank > most) {
                best = Some((s, rank));
            }
        }
        let (s, _) = best?;
        // avma = start + (file offset - pgoff); svma = address + (file offset - offset).
        Some(
            start
                .wrapping_sub(pgoff)
                .wrapping_add(s.offset)
                .wrapping_sub(s.address),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(offset: u64, size: u64, address: u64, exec: bool) -> Load {
        Load {
            offset,
            size,
            mem_size: size,
            address,
            exec,
        }
    }

    #[test]
    fn an_offset_past_a_loads_file_bytes_is_in_its_memory() {
        // A Go binary (go build, readelf -lW): the data load's 0x18180 bytes
        // in the file and 0x4bd08 in memory; its mapping's last page runs
        // past the file's bytes into .bss (runtime.scavenger at 0x506880).
        let mut data = load(0xee000, 0x18180, 0x4ee000, false);
        data.mem_size = 0x4bd08;
        let go = LoadMap::new(vec![load(0, 0x6fcec, 0x400000, true), data]);
        assert_eq!(go.svma(0x10691f), Some(0x50691f));
        assert_eq!(go.svma(0xee000 + 0x4bd08), None);
        // A file offset in a load's file bytes is that load's, though an
        // earlier load's memory runs over it.
        let mut bss = load(0, 0x100, 0x1000, false);
        bss.mem_size = 0x10000;
        let two = LoadMap::new(vec![bss, load(0x200, 0x100, 0x3200, true)]);
        assert_eq!(two.svma(0x280), Some(0x3280));
        assert_eq!(two.svma(0x180), Some(0x1180));
    }

    #[test]
    fn the_bias_comes_from_the_load_the_mapping_holds() {
        // An LLD PIE (cargo --release, readelf -lW): the code load's
        // offset and address are 0x1000 apart, and its mapping's
        // page-aligned offset lies inside the first load.
        let lld = LoadMap::new(vec![
            load(0, 0xca098, 0, false),
            load(0xca0a0, 0x2b6f00, 0xcb0a0, true),
            load(0x380fa0, 0x1c3f8, 0x382fa0, false),
        ]);
        let (start, end) = (0x5555_5561_f000, 0x5555_558d_6000);
        let bias = lld.bias(start, end, 0xca000).unwrap();
        // File offset 0xca1a0 is at start + 0x1a0 in the process, and the
        // file states address 0xcb1a0 for it.
        assert_eq!(lld.svma(0xca1a0), Some(0xcb1a0));
        assert_eq!(0xcb1a0_u64.wrapping_add(bias), start + 0x1a0);
        // A tiny LLD PIE (cc -fuse-ld=lld): the code mapping's one page
        // holds all of the first load and all of the code.
        let tiny = LoadMap::new(vec![
            load(0, 0x738, 0, false),
            load(0x740, 0x2e0, 0x1740, true),
            load(0xa20, 0x1d8, 0x2a20, false),
        ]);
        assert_eq!(tiny.bias(0x7000_1000, 0x7000_2000, 0), Some(0x7000_0000));
        // GNU ld: offsets and addresses a page multiple apart.
        let gnu = LoadMap::new(vec![
            load(0, 0x630, 0, false),
            load(0x1000, 0x1d5, 0x1000, true),
        ]);
        assert_eq!(gnu.bias(0x4000, 0x5000, 0x1000), Some(0x3000));
        assert_eq!(gnu.bias(0x3000, 0x4000, 0), Some(0x3000));
        // A mapping of no load (past the file's last) has no bias.
        assert_eq!(gnu.bias(0x9000, 0xa000, 0x8000), None);
    }
}
