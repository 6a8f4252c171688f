//! Whether a file is the one a build id names: an ELF file whose GNU
//! build-id note is that id. A server's answer, or a file in the cache,
//! that is not is never used: another build's symbols would name every
//! frame wrongly, where perf (which rejects a mismatched build id) shows
//! addresses.

use std::io::Read;
use std::path::Path;

use crate::synth::build_id;

/// Why a file is not the one asked for.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Bad {
    /// It does not start as an ELF file does (a proxy's HTML page).
    NotElf,
    /// An ELF file without a build-id note.
    NoBuildId,
    /// An ELF file of this other build id.
    Other(Vec<u8>),
}

impl std::fmt::Display for Bad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bad::NotElf => write!(f, "something not an ELF file"),
            Bad::NoBuildId => write!(f, "an ELF file without a build id"),
            Bad::Other(id) => write!(f, "a file of build id {}", build_id::hex(id)),
        }
    }
}

/// Ok where the file at `path` is an ELF file of build id `id`.
pub(crate) fn check(path: &Path, id: &[u8]) -> Result<(), Bad> {
    let mut magic = [0u8; 4];
    let elf = std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && &magic == b"\x7fELF";
    if !elf {
        return Err(Bad::NotElf);
    }
    match build_id::of_file(path) {
        Some(got) if got == id => Ok(()),
        Some(got) => Err(Bad::Other(got)),
        None => Err(Bad::NoBuildId),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_elf_file_of_the_id_passes() {
        let exe = Path::new("/proc/self/exe");
        let id = build_id::of_file(exe).expect("the test binary has a build id");
        assert_eq!(check(exe, &id), Ok(()));
        let other = vec![0xab; id.len()];
        assert_eq!(check(exe, &other), Err(Bad::Other(id.clone())));
        assert_eq!(
            Bad::Other(vec![0xab, 0x01]).to_string(),
            "a file of build id ab01"
        );
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("page");
        std::fs::write(&page, "<html>Sign in</html>").unwrap();
        assert_eq!(check(&page, &id), Err(Bad::NotElf));
        assert_eq!(check(&dir.path().join("none"), &id), Err(Bad::NotElf));
        // An ELF header and nothing after it: no note to read.
        std::fs::write(&page, b"\x7fELF\x02\x01\x01").unwrap();
        assert_eq!(check(&page, &id), Err(Bad::NoBuildId));
    }
}
