//! A file mode finish after a write failed for want of room (a file size
//! limit, a full disk): the data cut back until the feature table fits.

use std::io::{Seek, SeekFrom, Write};

use super::{feature_block, FileWriter};
use crate::format::feature::FeatureSet;
use crate::format::FormatError;

impl<W: Write + Seek> FileWriter<W> {
    /// [`finish`](Self::finish) after a write failed for want of room (a
    /// file size limit, a full disk): where the feature table does not fit
    /// after the data either, the data is cut back to each of `ends` in turn
    /// (data sizes at record boundaries, any order) until it does, so the
    /// file keeps every record that leaves room for it, rather than only
    /// what its last checkpoint held. Where the whole table fits after none
    /// of them, only the features needed to read the records
    /// ([`FeatureSet::needed_to_read`]) are written, at the first size where
    /// they fit (none at all for uncompressed records: the header alone,
    /// rewritten in place, always fits). Returns what was cut.
    ///
    /// A table written before the records' end overwrites the records
    /// after it, and if it then fails, they are gone: below the end, a
    /// table is written only where it fits inside the file as it is (no new
    /// blocks), and never above a size where one failed.
    pub fn finish_cutting_back(
        mut self,
        features: &FeatureSet,
        ends: &[u64],
    ) -> Result<(W, Salvage), FormatError> {
        let landed = self.header.data.size;
        // Never below the last checkpoint: what it holds is kept anyway.
        let floor = self
            .checkpoint_end
            .map_or(0, |c| c - self.header.data.offset);
        let mut sizes: Vec<u64> = std::iter::once(landed)
            .chain(ends.iter().copied())
            .filter(|&e| e >= floor && e <= landed)
            .collect();
        // Newest (largest) first.
        sizes.sort_unstable_by(|a, b| b.cmp(a));
        sizes.dedup();
        let needed = features.needed_to_read();
        let mut first: Option<std::io::Error> = None;
        // Records above this may have been overwritten by a failed table.
        let mut whole_below = landed;
        for (set, features_cut) in [(features, false), (&needed, true)] {
            let table = feature_block(set, 0).0.len() as u64;
            for &size in &sizes {
                if size > whole_below {
                    continue;
                }
                if size < landed {
                    let file = self.w.seek(SeekFrom::End(0))?;
                    if self.header.data.offset + size + table > file {
                        continue;
                    }
                }
                self.header.data.size = size;
                match self.write_tail(set) {
                    Ok(()) => {
                        let salvage = Salvage {
                            dropped: landed - size,
                            features_cut,
                            cause: first.and_then(|e| e.raw_os_error()),
                        };
                        return Ok((self.w, salvage));
                    }
                    Err(e) if is_out_of_room(&e) => {
                        first.get_or_insert(e);
                        whole_below = size;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        }
        // The header on disk is still the last checkpoint's (or says no
        // data): it is written only after a table that fit.
        Err(first
            .unwrap_or_else(|| std::io::Error::from_raw_os_error(libc::ENOSPC))
            .into())
    }
}

/// What a finish after a failed write left out to make room for the
/// features: nothing ([`whole`](Salvage::whole)), the last records, or the
/// features a reader can do without.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Salvage {
    /// Bytes of records cut from the end of the data.
    pub dropped: u64,
    /// Only the features needed to read the records were written.
    pub(crate) features_cut: bool,
    /// The OS error of the first tail that did not fit (EFBIG, ENOSPC,
    /// EDQUOT), where one did not.
    pub cause: Option<i32>,
}

impl Salvage {
    /// Every record landed and every feature written.
    pub fn whole(&self) -> bool {
        self.dropped == 0 && !self.features_cut
    }

    /// The failed write that made the cut, as an error (ENOSPC where none
    /// was seen).
    pub fn error(&self) -> std::io::Error {
        std::io::Error::from_raw_os_error(self.cause.unwrap_or(libc::ENOSPC))
    }
}

/// A write that failed for want of room: a file size limit, a full disk or
/// quota.
fn is_out_of_room(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EFBIG) | Some(libc::ENOSPC) | Some(libc::EDQUOT)
    )
}
