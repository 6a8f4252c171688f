//! PLT entries as perf names them, `func@plt`.

use super::table::{Sym, TableBuilder};

/// `name@plt` for each entry of an x86-64 PLT, as perf synthesizes them
/// (dso__synthesize_plt_symbols): the i-th relocation of `.rela.plt` names
/// the function of the i-th entry, at `.plt.sec` + 16 i, or without
/// `.plt.sec` at `.plt` + 16 (i + 1) (after the resolver's entry). Lazy or
/// BIND_NOW alike: where the GOT is (`.got.plt` or `.got`) does not matter.
pub(super) fn symbols(file: &object::File<'_>, out: &mut TableBuilder) {
    use object::{Object, ObjectSection, ObjectSymbol, ObjectSymbolTable};
    let (Some(rela), Some(plt)) = (
        file.section_by_name(".rela.plt"),
        file.section_by_name(".plt.sec")
            .or_else(|| file.section_by_name(".plt")),
    ) else {
        return;
    };
    let first = if plt.name() == Ok(".plt.sec") { 0 } else { 16 };
    let (Ok(bytes), true) = (rela.data(), file.is_little_endian() && file.is_64()) else {
        return;
    };
    let Some(dynsym) = file.dynamic_symbol_table() else {
        return;
    };
    let plt_end = plt.address().saturating_add(plt.size());
    // Elf64_Rela: r_offset, r_info (symbol << 32 | type), r_addend.
    for (i, r) in bytes.chunks_exact(24).enumerate() {
        let info = u64::from_le_bytes(r[8..16].try_into().unwrap());
        let index = object::SymbolIndex((info >> 32) as usize);
        let Some(name) = (index.0 != 0)
            .then(|| dynsym.symbol_by_index(index).ok()?.name().ok())
            .flatten()
        else {
            continue; // IRELATIVE and the like: no symbol, perf names none
        };
        let Some(start) = (i as u64)
            .checked_mul(16)
            .and_then(|o| o.checked_add(first))
            .and_then(|o| o.checked_add(plt.address()))
        else {
            break;
        };
        if start.saturating_add(16) > plt_end {
            break;
        }
        out.push(Sym {
            start,
            end: start + 16,
            name: &format!("{name}@plt"),
            weak: false,
            global: true,
        });
    }
}
