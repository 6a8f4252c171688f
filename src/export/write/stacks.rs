//! Distinct stacks, each given an id once: a stack is its frames' ids (of
//! the export's frame table), leaf first. Most samples repeat the stack
//! of the sample before, which is checked first.

use rustc_hash::FxHashMap;

/// Each distinct stack's id, by its frames.
#[derive(Default)]
pub(crate) struct StackIds {
    ids: FxHashMap<Box<[u32]>, u32>,
    /// The last stack asked for and its id (one buffer, reused).
    last: Option<(Vec<u32>, u32)>,
}

impl StackIds {
    /// The id of the stack `frames` (made on first sight).
    pub(crate) fn id(&mut self, frames: &[u32]) -> u32 {
        if let Some((ref last, id)) = self.last {
            if last[..] == *frames {
                return id;
            }
        }
        let id = match self.ids.get(frames) {
            Some(&id) => id,
            None => {
                let id = self.ids.len() as u32;
                self.ids.insert(Box::from(frames), id);
                id
            }
        };
        let mut last = self.last.take().map(|l| l.0).unwrap_or_default();
        last.clear();
        last.extend_from_slice(frames);
        self.last = Some((last, id));
        id
    }

    /// Every stack's frames, by id.
    pub(crate) fn by_id(&self) -> Vec<&[u32]> {
        let mut by_id: Vec<&[u32]> = vec![&[]; self.ids.len()];
        for (frames, &id) in &self.ids {
            by_id[id as usize] = frames;
        }
        by_id
    }

    /// How many distinct stacks.
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stack_keeps_its_id_whether_last_or_not() {
        let mut s = StackIds::default();
        assert_eq!(s.id(&[1, 2]), 0);
        assert_eq!(s.id(&[1, 2]), 0);
        assert_eq!(s.id(&[3]), 1);
        assert_eq!(s.id(&[1, 2]), 0);
        assert_eq!(s.by_id(), vec![&[1, 2][..], &[3][..]]);
    }
}
