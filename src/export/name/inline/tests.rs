use super::*;

/// `.debug_abbrev`: a compile unit, a subprogram and an inlined
/// subroutine, each with a name, low_pc and high_pc (a length), and
/// children.
fn abbrevs() -> Vec<u8> {
    let mut a = Vec::new();
    // code, tag, children; (DW_AT_name, string) (low_pc, addr)
    // (high_pc, data4); 0, 0.
    for (code, tag) in [(1u8, 0x11u8), (2, 0x2e), (3, 0x1d)] {
        a.extend([code, tag, 1, 0x03, 0x08, 0x11, 0x01, 0x12, 0x06, 0, 0]);
    }
    a.push(0);
    a
}

/// `.debug_info`: one DWARF 4 unit holding `f` at [0x1000, 0x1100), with
/// `depth` inlined subroutines nested in it, each over the same range.
fn info(depth: usize) -> Vec<u8> {
    let entry = |out: &mut Vec<u8>, code: u8, name: &str| {
        out.push(code);
        out.extend(name.as_bytes());
        out.push(0);
        out.extend(0x1000u64.to_le_bytes());
        out.extend(0x100u32.to_le_bytes());
    };
    let mut body = Vec::new();
    entry(&mut body, 1, "cu");
    entry(&mut body, 2, "f");
    for i in 0..depth {
        entry(&mut body, 3, &format!("i{i}"));
    }
    // The null entries that end each level's children.
    body.resize(body.len() + depth + 2, 0);
    let mut unit = Vec::new();
    unit.extend(((body.len() + 7) as u32).to_le_bytes());
    unit.extend(4u16.to_le_bytes()); // version
    unit.extend(0u32.to_le_bytes()); // abbrev offset
    unit.push(8); // address size
    unit.extend(body);
    unit
}

/// A relocatable x86-64 ELF with `.text` at 0x1000 and the given sections.
fn elf(sections: &[(&str, u64, &[u8])]) -> Vec<u8> {
    let mut names = vec![0u8];
    let mut name_at = Vec::new();
    for (n, _, _) in sections.iter().chain(&[(".shstrtab", 0, &[][..])]) {
        name_at.push(names.len() as u32);
        names.extend(n.as_bytes());
        names.push(0);
    }
    let mut out = vec![0u8; 64];
    let mut headers = vec![0u8; 64]; // the null section
    let mut add = |out: &mut Vec<u8>, name: u32, kind: u32, flags: u64, addr: u64, data: &[u8]| {
        let offset = out.len() as u64;
        out.extend(data);
        for v in [name, kind] {
            headers.extend(v.to_le_bytes());
        }
        for v in [flags, addr, offset, data.len() as u64] {
            headers.extend(v.to_le_bytes());
        }
        headers.extend([0u8; 8]); // link, info
        headers.extend(1u64.to_le_bytes()); // addralign
        headers.extend(0u64.to_le_bytes()); // entsize
    };
    for (i, (name, flags, data)) in sections.iter().enumerate() {
        let (kind, addr) = if *name == ".text" {
            (1, 0x1000)
        } else {
            (1, 0)
        };
        add(&mut out, name_at[i], kind, *flags, addr, data);
    }
    add(&mut out, name_at[sections.len()], 3, 0, 0, &names);
    while out.len() % 8 != 0 {
        out.push(0);
    }
    let shoff = out.len() as u64;
    let shnum = (sections.len() + 2) as u16;
    out.extend(headers);
    let mut h = Vec::new();
    h.extend([0x7f, b'E', b'L', b'F', 2, 1, 1, 0]);
    h.extend([0u8; 8]);
    h.extend(1u16.to_le_bytes()); // ET_REL
    h.extend(62u16.to_le_bytes()); // EM_X86_64
    h.extend(1u32.to_le_bytes());
    h.extend(0u64.to_le_bytes()); // entry
    h.extend(0u64.to_le_bytes()); // phoff
    h.extend(shoff.to_le_bytes());
    h.extend(0u32.to_le_bytes()); // flags
    for v in [64u16, 0, 0, 64, shnum, shnum - 1] {
        h.extend(v.to_le_bytes());
    }
    out[..64].copy_from_slice(&h);
    out
}

fn with_inlines(depth: usize) -> Vec<u8> {
    const ALLOC_EXEC: u64 = 0x2 | 0x4;
    elf(&[
        (".text", ALLOC_EXEC, &[0x90; 0x100]),
        (".debug_abbrev", 0, &abbrevs()),
        (".debug_info", 0, &info(depth)),
    ])
}

#[test]
fn inlined_functions_come_innermost_first_without_the_one_holding_them() {
    // `f` holds them: its frame is the symbol table's to name.
    let dwarf = Inline::parse(&with_inlines(2)).expect("DWARF");
    let names: Vec<String> = dwarf.at(0x1010).iter().map(|n| n.to_string()).collect();
    assert_eq!(names, ["i1", "i0"]);
    assert!(Inline::parse(&with_inlines(0))
        .expect("DWARF")
        .at(0x1010)
        .is_empty());
    assert!(dwarf.at(0x2000).is_empty());
}

#[test]
fn inlining_as_deep_as_perfz_reads_is_read_whole() {
    // addr2line reads a level on a stack frame of its own: a debug build
    // needs more than a test thread's 2 MiB for this many.
    let deepest = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(|| {
            let dwarf = Inline::parse(&with_inlines(MOST_INLINE_DEPTH)).expect("DWARF");
            dwarf.at(0x1010).len()
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(deepest, MOST_INLINE_DEPTH);
}

#[test]
fn deeper_inlining_is_left_unread_without_a_stack_overflow() {
    // 50 000 levels aborted the export (issue 48); one past the limit is
    // refused the same way.
    for depth in [MOST_INLINE_DEPTH + 1, 50_000] {
        assert!(Inline::parse(&with_inlines(depth)).is_none(), "{depth}");
    }
}

#[test]
fn too_deep_inlining_in_any_unit_is_found() {
    // The units are walked in two halves (by bytes), each on a thread: the
    // deep unit is found first, last, in the middle, and beside big ones.
    const ALLOC_EXEC: u64 = 0x2 | 0x4;
    let image = |depths: &[usize]| {
        let units: Vec<u8> = depths.iter().flat_map(|&d| info(d)).collect();
        let image = elf(&[
            (".text", ALLOC_EXEC, &[0x90; 0x100]),
            (".debug_abbrev", 0, &abbrevs()),
            (".debug_info", 0, &units),
        ]);
        Inline::parse(&image).is_some()
    };
    let deep = MOST_INLINE_DEPTH + 1;
    assert!(image(&[3, 900, 1, 5, 2]));
    for depths in [
        [deep, 1, 2, 3, 4],
        [1, 2, 3, 4, deep],
        [1, 2, deep, 3, 4],
        [900, 900, 900, 1, deep],
        [deep, 1, 1, 900, 900],
    ] {
        assert!(!image(&depths), "{depths:?}");
    }
}

#[test]
fn inlined_subroutines_side_by_side_are_not_nested() {
    // Siblings: each closes before the next opens (null entries between).
    let mut info = info(0);
    let body_end = info.len() - 2;
    let mut siblings = Vec::new();
    for i in 0..(MOST_INLINE_DEPTH + 10) {
        siblings.push(3u8);
        siblings.extend(format!("s{i}\0").as_bytes());
        siblings.extend(0x1000u64.to_le_bytes());
        siblings.extend(0x100u32.to_le_bytes());
        siblings.push(0); // no children
    }
    info.splice(body_end..body_end, siblings);
    let len = (info.len() - 4) as u32;
    info[..4].copy_from_slice(&len.to_le_bytes());
    const ALLOC_EXEC: u64 = 0x2 | 0x4;
    let image = elf(&[
        (".text", ALLOC_EXEC, &[0x90; 0x100]),
        (".debug_abbrev", 0, &abbrevs()),
        (".debug_info", 0, &info),
    ]);
    assert!(Inline::parse(&image).is_some());
}

/// `data` as an SHF_COMPRESSED section's bytes: the ELF64 compression
/// header (zlib, `declared` inflated bytes) then the zlib stream.
fn zlib_section(data: &[u8], declared: u64) -> Vec<u8> {
    use std::io::Write;
    let mut out = Vec::new();
    out.extend(1u32.to_le_bytes()); // ELFCOMPRESS_ZLIB
    out.extend(0u32.to_le_bytes());
    out.extend(declared.to_le_bytes());
    out.extend(1u64.to_le_bytes()); // addralign
    let mut z = flate2::write::ZlibEncoder::new(out, flate2::Compression::fast());
    z.write_all(data).unwrap();
    z.finish().unwrap()
}

#[test]
fn compressed_sections_inflate_within_their_bound_and_a_bomb_is_left_unread() {
    const ALLOC_EXEC: u64 = 0x2 | 0x4;
    const SHF_COMPRESSED: u64 = 0x800;
    let image = |info: &[u8]| {
        elf(&[
            (".text", ALLOC_EXEC, &[0x90; 0x100]),
            (".debug_abbrev", 0, &abbrevs()),
            (".debug_info", SHF_COMPRESSED, info),
        ])
    };
    let dwarf = info(2);
    let fair = Inline::parse(&image(&zlib_section(&dwarf, dwarf.len() as u64)));
    assert_eq!(fair.expect("inflated DWARF").at(0x1010).len(), 2);
    // A bomb: 16 MiB of DWARF-shaped padding in a few KiB declares more
    // than 64 times its size, so it is never inflated (2.6 GB before).
    let mut bomb = dwarf.clone();
    bomb.resize(16 << 20, 0);
    let section = zlib_section(&bomb, bomb.len() as u64);
    assert!(section.len() * 64 < bomb.len(), "{}", section.len());
    assert!(Inline::parse(&image(&section)).is_none());
    // Declaring less than the stream holds inflates no more than declared.
    let section = zlib_section(&bomb, dwarf.len() as u64);
    assert!(Inline::parse(&image(&section)).is_some_and(|d| d.at(0x1010).len() == 2));
}
