//! Question: whatever bytes a recording's side band or a mapped file holds
//! (a hostile, truncated or replaced binary), do `perfz export`'s side-band
//! decoder, ELF symbol reader (tables, PLT entries, offsets to addresses),
//! unwinder (unwind sections and a stack copy from the same bytes) and
//! DWARF inline reader end without a panic or an overflow?
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfz::{Elf, Inline};
use perfz::format::side_band::SideBand;
use perfz::format::RecordType;

fuzz_target!(|data: &[u8]| {
    let misc = data.first().map_or(0, |&b| u16::from(b) << 8);
    for t in [1, 3, 4, 7, 10] {
        let _ = SideBand::parse(RecordType(t), misc, data);
    }
    if let Some(elf) = Elf::parse(data) {
        for off in [0, 1, 0x1000, data.len() as u64, u64::MAX / 2, u64::MAX] {
            let _ = elf.at_offset(off);
        }
        let _ = perfz::unwind_one(data, data);
        if let Some(dwarf) = Inline::parse(data) {
            for svma in [0, 0x1000, data.len() as u64, u64::MAX] {
                let _ = dwarf.at(svma);
            }
        }
    }
});
