//! Notes: messages for the user gathered along a recording (a choice made,
//! a fallback taken, something left out), printed as `perfz: note:` lines
//! before the summary. Gathered, never printed where they arise: the
//! summary says them once, in order, and `--stats-json` carries them.

/// The notes of one recording, in the order they arose.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Notes(Vec<String>);

impl Notes {
    /// No notes yet.
    pub fn new() -> Self {
        Notes::default()
    }

    /// Adds one note.
    pub fn push(&mut self, note: impl Into<String>) {
        self.0.push(note.into());
    }

    /// Moves every note of `other` here, after these.
    pub fn append(&mut self, other: &mut Notes) {
        self.0.append(&mut other.0);
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The notes, in order.
    pub fn iter(&self) -> impl Iterator<Item = &String> {
        self.0.iter()
    }

    /// The notes as lines, for the summary.
    pub fn into_vec(self) -> Vec<String> {
        self.0
    }
}

impl Extend<String> for Notes {
    fn extend<I: IntoIterator<Item = String>>(&mut self, notes: I) {
        self.0.extend(notes);
    }
}

impl From<Vec<String>> for Notes {
    fn from(notes: Vec<String>) -> Self {
        Notes(notes)
    }
}

impl IntoIterator for Notes {
    type Item = String;
    type IntoIter = std::vec::IntoIter<String>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

/// Writes `text` to standard error whole, or loses it where standard error
/// is closed (see the crate's `say!`).
pub fn say(text: &str) {
    use std::io::Write;
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(text.as_bytes()).and_then(|()| e.flush());
}
