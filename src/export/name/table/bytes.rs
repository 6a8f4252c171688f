//! A [`Table`] as bytes and back: what kallsyms_cache.rs keeps of this
//! boot's kernel functions, so that an export reads the table built once
//! (a copy of its entries and names) rather than 200 000-odd lines parsed,
//! sorted and chosen between again.
//!
//! Layout, little endian: the entry count (u64), the names' length (u64),
//! each entry (start u64, end u64, name at u32, length and kind u32), then
//! the names.

use super::{Entry, Names, Table, LEN};

const HEAD: usize = 16;
const ENTRY: usize = 24;

impl Table {
    /// The table as bytes ([`Table::from_bytes`] reads them back).
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(HEAD + self.syms.len() * ENTRY + self.names.own.len());
        b.extend_from_slice(&(self.syms.len() as u64).to_le_bytes());
        b.extend_from_slice(&(self.names.own.len() as u64).to_le_bytes());
        for e in &self.syms {
            b.extend_from_slice(&e.start.to_le_bytes());
            b.extend_from_slice(&e.end.to_le_bytes());
            b.extend_from_slice(&e.at.to_le_bytes());
            b.extend_from_slice(&e.bits.to_le_bytes());
        }
        b.extend_from_slice(&self.names.own);
        b
    }

    /// The table `b` holds, where it holds one as [`Table::to_bytes`]
    /// writes them: its lengths add up, its entries are sorted and do not
    /// overlap, each name is within the names. None otherwise (a file cut
    /// short or written by something else).
    pub(crate) fn from_bytes(b: &[u8]) -> Option<Table> {
        let u64_at = |at: usize| Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?));
        let n = usize::try_from(u64_at(0)?).ok()?;
        let names_len = usize::try_from(u64_at(8)?).ok()?;
        let names_at = n.checked_mul(ENTRY)?.checked_add(HEAD)?;
        if names_at.checked_add(names_len)? != b.len() {
            return None;
        }
        let mut syms = Vec::with_capacity(n);
        for raw in b[HEAD..names_at].chunks_exact(ENTRY) {
            let u64_at = |at: usize| u64::from_le_bytes(raw[at..at + 8].try_into().unwrap());
            let u32_at = |at: usize| u32::from_le_bytes(raw[at..at + 4].try_into().unwrap());
            let e = Entry {
                start: u64_at(0),
                end: u64_at(8),
                at: u32_at(16),
                bits: u32_at(20),
            };
            let name_end = e.at as usize + (e.bits & LEN) as usize;
            let after_last = syms.last().is_none_or(|l: &Entry| l.end <= e.start);
            if e.start >= e.end || !after_last || name_end > names_len {
                return None;
            }
            syms.push(e);
        }
        Some(Table {
            syms,
            names: Names {
                own: b[names_at..].to_vec(),
            },
            shared: Default::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Sym, TableBuilder};
    use super::*;

    fn table() -> Table {
        let mut b = TableBuilder::default();
        for (start, name, global) in [
            (0xffff_ffff_8100_0000, "_text", true),
            (0xffff_ffff_8100_0100, "helper", false),
            (0xffff_ffff_8100_0100, "helper_alias", true),
            (0xffff_ffff_c0a0_1000, "kvm_fn", false),
        ] {
            b.push(Sym {
                start,
                end: 0,
                name,
                weak: false,
                global,
                ifunc: false,
            });
        }
        b.kallsyms()
    }

    #[test]
    fn a_table_read_back_from_its_bytes_names_every_address_as_it_did() {
        let t = table();
        let back = Table::from_bytes(&t.to_bytes()).expect("its own bytes");
        for addr in [
            0,
            0xffff_ffff_8100_0000,
            0xffff_ffff_8100_00ff,
            0xffff_ffff_8100_0100,
            0xffff_ffff_c0a0_1000,
            0xffff_ffff_c0a0_1fff,
            u64::MAX,
        ] {
            assert_eq!(back.lookup(addr), t.lookup(addr), "{addr:#x}");
        }
        assert_eq!(
            back.lookup(0xffff_ffff_8100_0100).as_deref(),
            Some("helper_alias")
        );
    }

    #[test]
    fn bytes_that_are_no_table_are_refused() {
        let b = table().to_bytes();
        assert!(Table::from_bytes(&b[..b.len() - 1]).is_none(), "cut short");
        assert!(
            Table::from_bytes(&[b.clone(), vec![0]].concat()).is_none(),
            "a byte more"
        );
        assert!(Table::from_bytes(&[]).is_none());
        // The first two entries swapped: out of order.
        let mut swapped = b.clone();
        let (first, second) = (HEAD..HEAD + ENTRY, HEAD + ENTRY..HEAD + 2 * ENTRY);
        let one = swapped[first.clone()].to_vec();
        swapped.copy_within(second.clone(), first.start);
        swapped[second].copy_from_slice(&one);
        assert!(Table::from_bytes(&swapped).is_none(), "out of order");
        // A name past the names.
        let mut far = b.clone();
        far[HEAD + 16..HEAD + 20].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Table::from_bytes(&far).is_none(), "a name past the names");
        // An entry count that overflows the length arithmetic.
        let mut huge = b;
        huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(Table::from_bytes(&huge).is_none());
    }
}
