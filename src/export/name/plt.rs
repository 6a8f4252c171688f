//! PLT entries as perf 6.12 names them (dso__synthesize_plt_symbols):
//! `func@plt`, the header `.plt`, `.plt.got`'s entries by the GOT slot they
//! jump through, an IFUNC's entry by the name perf keeps for the resolver
//! among the file's symbols (libc's own `memcpy@@GLIBC_2.14@plt`, from its
//! debug file's .symtab), and an entry nothing names `offset_0x…@plt` (its
//! file offset).

use object::elf::R_X86_64_IRELATIVE;
use object::read::elf::SectionHeader;
use object::{Object, ObjectSection, ObjectSymbol, ObjectSymbolTable};
use rustc_hash::FxHashMap;

use crate::export::name::table::{Sym, TableBuilder};

/// An x86-64 relocation with addend (Elf64_Rela).
#[derive(Clone, Copy)]
struct Rela {
    offset: u64,
    symbol: usize,
    kind: u32,
    addend: i64,
}

fn relas(bytes: &[u8]) -> impl Iterator<Item = Rela> + '_ {
    bytes.chunks_exact(24).map(|r| {
        let word = |i: usize| u64::from_le_bytes(r[i..i + 8].try_into().unwrap());
        Rela {
            offset: word(0),
            symbol: (word(8) >> 32) as usize,
            kind: word(8) as u32,
            addend: word(16) as i64,
        }
    })
}

/// A section's address, size and file offset.
struct Span {
    address: u64,
    size: u64,
    offset: u64,
    /// The entry size perf takes (see [`span`]).
    entry: u64,
    /// sh_entsize as the file says it.
    entsize: u64,
}

fn span(file: &object::File<'_>, name: &str) -> Option<Span> {
    let object::File::Elf64(elf) = file else {
        return None;
    };
    let s = elf.section_by_name(name)?;
    let (offset, _) = s.file_range()?;
    let header = s.elf_section_header();
    let entsize = header.sh_entsize(elf.endian());
    // perf's get_plt_sizes: the entry size where it is 8 or 16, else as
    // the alignment says.
    let entry = match entsize {
        8 | 16 => entsize,
        _ if header.sh_addralign(elf.endian()) == 8 => 8,
        _ => 16,
    };
    Some(Span {
        address: s.address(),
        size: s.size(),
        offset,
        entry,
        entsize,
    })
}

/// The PLT symbols of an x86-64 ELF file, pushed to `out`, which holds
/// the symbols perf loaded for it (they name IFUNCs' entries).
pub(crate) fn symbols(file: &object::File<'_>, out: &mut TableBuilder) {
    if file.architecture() != object::Architecture::X86_64 || !file.is_little_endian() {
        return;
    }
    let Some(plt) = span(file, ".plt") else {
        return;
    };
    got_entries(file, &mut |start, size, name| push(out, start, size, name));
    let sec = span(file, ".plt.sec");
    let rela = file
        .section_by_name(".rela.plt")
        .and_then(|s| s.data().ok())
        .unwrap_or_default();
    let mut relocs: Vec<Rela> = relas(rela).collect();
    // x86 lists IFUNC relocations out of .plt order (perf sorts them back).
    relocs.sort_by_key(|r| r.offset);
    let (mut at, entry) = match &sec {
        // .plt.sec holds the entries; the .plt symbol covers all of .plt.
        Some(s) => {
            push(out, plt.address, plt.size, ".plt");
            (s.address, s.entry)
        }
        // A .plt with as many entries as relocations has no header.
        None if (relocs.len() as u64).checked_mul(plt.entry) == Some(plt.size) => {
            (plt.address, plt.entry)
        }
        None => {
            push(out, plt.address, plt.entry, ".plt");
            (plt.address.wrapping_add(plt.entry), plt.entry)
        }
    };
    // Entry addresses to file offsets (for `offset_…` names; a crafted
    // file's may wrap: a name, never a panic).
    let to_offset = |a: u64| match &sec {
        Some(s) => a.wrapping_sub(s.address).wrapping_add(s.offset),
        None => a.wrapping_sub(plt.address).wrapping_add(plt.offset),
    };
    let symtab = file.dynamic_symbol_table().or_else(|| file.symbol_table());
    let resolvers = match relocs.iter().any(|r| r.kind == R_X86_64_IRELATIVE) {
        true => out.ifunc_names(),
        false => FxHashMap::default(),
    };
    for r in relocs {
        let name = entry_name(symtab.as_ref(), &resolvers, r)
            .unwrap_or_else(|| format!("offset_{:#x}@plt", to_offset(at)));
        push(out, at, entry, &name);
        at = at.saturating_add(entry);
    }
}

/// A PLT symbol of `size` bytes at `start`, pushed to `out`.
fn push(out: &mut TableBuilder, start: u64, size: u64, name: &str) {
    out.push(Sym {
        start,
        end: start.saturating_add(size),
        name,
        weak: false,
        global: true,
        ifunc: false,
    });
}

/// The name of relocation `r`'s entry: its symbol's (in `symtab`), else
/// for an IRELATIVE one the name perf keeps at the resolver its addend
/// points at (`resolvers`, perf's get_ifunc_name), with `@plt`; None where
/// neither names it.
fn entry_name(
    symtab: Option<&object::SymbolTable<'_, '_>>,
    resolvers: &FxHashMap<u64, String>,
    r: Rela,
) -> Option<String> {
    let named = (r.symbol != 0)
        .then(|| {
            symtab?
                .symbol_by_index(object::SymbolIndex(r.symbol))
                .ok()?
                .name()
                .ok()
        })
        .flatten()
        .filter(|n| !n.is_empty());
    let resolver = || {
        let at = u64::try_from(r.addend).ok()?;
        (r.kind == R_X86_64_IRELATIVE)
            .then(|| resolvers.get(&at))
            .flatten()
            .map(String::as_str)
    };
    let n = named.or_else(resolver)?;
    Some(format!("{n}@plt"))
}

/// `.plt.got`'s entries (x86-64, BIND_NOW or lazily bound calls through
/// the GOT): each named by the relocation of the GOT slot its `jmp *disp`
/// reads, found as perf finds it (the entry's file offset plus the jump's
/// displacement, matched with .rela.dyn's offsets), else by its offset.
fn got_entries(file: &object::File<'_>, push: &mut dyn FnMut(u64, u64, &str)) {
    // perf reads .plt.got only with an entry size, and steps by it.
    let Some(got) = span(file, ".plt.got").filter(|g| g.entsize != 0) else {
        return;
    };
    let step = got.entsize;
    let Some(data) = file.section_by_name(".plt.got").and_then(|s| s.data().ok()) else {
        return;
    };
    let mut slots: Vec<(u64, usize)> = file
        .section_by_name(".rela.dyn")
        .and_then(|s| s.data().ok())
        .map(|b| {
            relas(b)
                .filter(|r| r.symbol != 0)
                .map(|r| (r.offset, r.symbol))
                .collect()
        })
        .unwrap_or_default();
    slots.sort_unstable();
    let dynsym = file.dynamic_symbol_table();
    let mut i: u64 = 0;
    // Stepping over the bytes there are, whatever size the header claims.
    let size = got.size.min(data.len() as u64);
    while i.saturating_add(step) <= size {
        let bytes = data
            .get(i as usize..(i + step) as usize)
            .unwrap_or_default();
        let name = jump_displacement(bytes)
            .and_then(|disp| {
                let target = got.offset.wrapping_add(i).wrapping_add(disp);
                let k = slots.binary_search_by_key(&target, |s| s.0).ok()?;
                let s = dynsym
                    .as_ref()?
                    .symbol_by_index(object::SymbolIndex(slots[k].1))
                    .ok()?;
                s.name()
                    .ok()
                    .filter(|n| !n.is_empty())
                    .map(|n| format!("{n}@plt"))
            })
            .unwrap_or_else(|| format!("offset_{:#x}@plt", got.offset.wrapping_add(i)));
        push(got.address.wrapping_add(i), step, &name);
        i += step;
    }
}

/// Where an x86-64 PLT entry's `jmp *disp(%rip)` reads, from the entry's
/// start (perf's get_x86_64_plt_disp: after an endbr64 and a bnd prefix).
fn jump_displacement(entry: &[u8]) -> Option<u64> {
    let mut n = 0;
    if entry.starts_with(&[0xf3, 0x0f, 0x1e, 0xfa]) {
        n += 4;
    }
    if entry.get(n) == Some(&0xf2) {
        n += 1;
    }
    if entry.get(n..n + 2)? != [0xff, 0x25] {
        return None;
    }
    let disp = u32::from_le_bytes(entry.get(n + 2..n + 6)?.try_into().ok()?);
    Some((n as u64 + 6).wrapping_add(u64::from(disp)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jumps_through_the_got_are_read_after_endbr_and_bnd() {
        // endbr64; bnd jmp *0x2fe2(%rip)
        let e = [
            0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25, 0xe2, 0x2f, 0, 0, 0x0f, 0x1f, 0x44, 0, 0,
        ];
        assert_eq!(jump_displacement(&e), Some(11 + 0x2fe2));
        // jmp *0x10(%rip)
        assert_eq!(
            jump_displacement(&[0xff, 0x25, 0x10, 0, 0, 0, 0x66, 0x90]),
            Some(6 + 0x10)
        );
        assert_eq!(jump_displacement(&[0x90; 16]), None);
        assert_eq!(jump_displacement(&[0xff]), None);
    }
}
