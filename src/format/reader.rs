//! Opening a perf.data: file mode, pipe mode (also from stdin), or perf's
//! `--threads` directory format. Metadata is read up front (file mode) or as
//! its records arrive (pipe mode); records are then streamed one at a time.
//!
//! `PerfReader::open` looks at the path: a directory is perf's `--threads`
//! format (`data`, then every `data.N` in numeric order, each its own stream
//! with its own decoder; records are not merged by time, perf's reader sorts
//! them); a file whose header size field is 16 (or `-`, stdin) is pipe mode;
//! anything else is file mode, whose attrs, ids and feature sections are
//! read and bounds-checked against the file length up front (sections.rs).
//! Records are then streamed (`PerfReader::next_record`), never loaded
//! whole: a COMPRESSED (81) or COMPRESSED2 (83) record is returned itself,
//! then the records decoded from it (stream.rs). In pipe mode, HEADER_ATTR
//! and HEADER_FEATURE records update the `Meta` as they pass. A stream whose
//! last COMPRESSED record decodes only in part (a recorder killed before its
//! codec's last flush) loses that part, as perf loses it
//! (`PerfReader::cut_off` counts it).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::endian::{Cursor, Endian};
use super::feature::{feat, CompressedInfo, FeatureSet};
use super::header::{
    field, read_prefix, read_up_to, FileHeader, FILE_HEADER_SIZE, PIPE_HEADER_SIZE,
};
use super::meta::parse_header_attr;
pub use super::meta::{Meta, Mode};
use super::record::{Record, RecordType};
use super::sections::{check_header, read_attrs, read_features, DataEnd};
use super::stream::RecordStream;
use super::FormatError;

const READ_BUF: usize = 256 * 1024;

/// An open perf.data and the position in its record stream.
pub struct PerfReader {
    /// Header, attrs and features of the file.
    pub meta: Meta,
    stream: RecordStream,
    /// `data.N` files of a directory, still to read.
    more_streams: Vec<(u32, PathBuf)>,
    /// Decompressed bytes of records the ends of streams cut off (a
    /// recorder killed, or whose writes failed, before it flushed).
    cut_off: usize,
    /// What ended a pipe early (see [`PerfReader::damage`]).
    damage: Option<FormatError>,
    /// Streams are read and decoded on a thread of their own.
    ahead: bool,
}

impl std::ops::Deref for PerfReader {
    type Target = Meta;
    fn deref(&self) -> &Meta {
        &self.meta
    }
}

impl PerfReader {
    /// Opens `path`; `-` reads a pipe-mode stream from standard input.
    pub fn open(path: &Path) -> Result<Self, FormatError> {
        if path == Path::new("-") {
            return Self::from_pipe(path, Box::new(std::io::stdin()));
        }
        if path.is_dir() {
            return Self::open_dir(path);
        }
        let mut f = File::open(path)?;
        let (endian, size) = read_prefix(&mut f)?;
        f.seek(SeekFrom::Start(0))?;
        if size == PIPE_HEADER_SIZE {
            return Self::from_pipe(path, Box::new(BufReader::with_capacity(READ_BUF, f)));
        }
        let len = f.metadata()?.len();
        Self::open_file(path, f, len, endian, DataEnd::Header)
    }

    fn open_dir(dir: &Path) -> Result<Self, FormatError> {
        let main = dir.join("data");
        let mut r = Self::open(&main).map_err(|e| match e {
            FormatError::Io(io) => FormatError::Unsupported(format!(
                "{} is a directory but not perf's --threads format ({}: {io})",
                dir.display(),
                main.display()
            )),
            other => other,
        })?;
        let mut streams = Self::data_streams(dir)?;
        streams.reverse(); // popped from the back
        r.meta.path = dir.to_path_buf();
        r.meta.mode = Mode::Directory;
        r.more_streams = streams;
        Ok(r)
    }

    /// The `data.N` files of a `--threads` directory, in N order.
    pub fn data_streams(dir: &Path) -> Result<Vec<(u32, PathBuf)>, FormatError> {
        let mut streams = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let Some(n) = name
                .to_str()
                .and_then(|s| s.strip_prefix("data."))
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            if entry.file_type()?.is_file() {
                streams.push((n, entry.path()));
            }
        }
        streams.sort();
        Ok(streams)
    }

    /// Reads one `data.N` stream alone, with the metadata of the directory's
    /// `main` file read as after a crash (recovery of that stream).
    pub fn open_data_stream(main: &Path, stream: &Path, n: u32) -> Result<Self, FormatError> {
        let mut r = Self::open_for_recovery(main)?;
        r.stream = data_stream(stream, r.meta.endian, n)?;
        r.meta.mode = Mode::Directory;
        Ok(r)
    }

    /// Reads a pipe-mode stream from `src` (named `name`), its records
    /// framed but COMPRESSED ones left undecoded: for following a stream
    /// to its end (or its damage) without decoding it.
    pub fn frame_stream(name: &Path, src: Box<dyn Read + Send>) -> Result<Self, FormatError> {
        let mut r = Self::from_pipe(name, src)?;
        r.stream.raw = true;
        Ok(r)
    }

    fn from_pipe(path: &Path, mut src: Box<dyn Read + Send>) -> Result<Self, FormatError> {
        let (endian, size) = read_prefix(&mut src)?;
        if size != PIPE_HEADER_SIZE {
            return Err(FormatError::invalid(
                field::SIZE,
                format!("pipe header size {size}, expected 16"),
            ));
        }
        Ok(PerfReader {
            meta: Meta {
                path: path.to_path_buf(),
                mode: Mode::Pipe,
                endian,
                header: None,
                attrs: Vec::new(),
                features: FeatureSet {
                    endian: Some(endian),
                    ..Default::default()
                },
                ids: HashMap::new(),
                compressed: None,
            },
            stream: RecordStream::new(src, endian, PIPE_HEADER_SIZE, None, None),
            more_streams: Vec::new(),
            cut_off: 0,
            damage: None,
            ahead: false,
        })
    }

    /// Reads a perf.data held in memory (file or pipe mode): what the fuzzers
    /// and tests use.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self, FormatError> {
        let path = Path::new("<memory>");
        let (endian, size) = read_prefix(&mut bytes.as_slice())?;
        let len = bytes.len() as u64;
        let cur = std::io::Cursor::new(bytes);
        if size == PIPE_HEADER_SIZE {
            return Self::from_pipe(path, Box::new(cur));
        }
        Self::open_file(path, cur, len, endian, DataEnd::Header)
    }

    /// Opens a file-mode perf.data whose header may not describe its data (a
    /// recording that crashed): the records are read from `data.offset` to the
    /// end of the file, and features that cannot be read are left out.
    pub fn open_for_recovery(path: &Path) -> Result<Self, FormatError> {
        let mut f = File::open(path)?;
        let (endian, _) = read_prefix(&mut f)?;
        f.seek(SeekFrom::Start(0))?;
        let len = f.metadata()?.len();
        Self::open_file(path, f, len, endian, DataEnd::EndOfFile)
    }

    /// Opens `path` with COMPRESSED records passed through undecoded.
    pub fn open_raw(path: &Path) -> Result<Self, FormatError> {
        let mut r = Self::open(path)?;
        r.stream.raw = true;
        Ok(r)
    }

    /// Runs the COMPRESSED records of `previous` (files of the same session,
    /// in order) through this file's decoder first, so a compressed stream
    /// that goes on from them decodes (perf 6.1's `-z --switch-output`
    /// outputs after the first). Returns the records fed.
    pub fn prime_with(&mut self, previous: &Path) -> Result<u64, FormatError> {
        let info = self.meta.compressed.ok_or_else(|| {
            FormatError::Unsupported(format!(
                "{} is not compressed: nothing to repair",
                self.meta.path.display()
            ))
        })?;
        let mut prev = Self::open_raw(previous)?;
        let mut n = 0;
        while let Some((rec, _)) = prev.next_record()? {
            if rec.header.type_ == RecordType::COMPRESSED {
                let payload = rec.bytes[8..].to_vec();
                self.stream.prime(&info, &payload)?;
                n += 1;
            }
        }
        Ok(n)
    }

    /// Declares the codec of the COMPRESSED records (recovery of a file whose
    /// HEADER_COMPRESSED was never written).
    pub fn assume_compressed(&mut self, info: CompressedInfo) {
        self.meta.compressed = Some(info);
    }

    fn open_file<R: Read + Seek + Send + 'static>(
        path: &Path,
        mut f: R,
        file_len: u64,
        endian: Endian,
        data_end: DataEnd,
    ) -> Result<Self, FormatError> {
        let mut hb = [0u8; FILE_HEADER_SIZE as usize];
        let n = read_up_to(&mut f, &mut hb)?;
        let header = FileHeader::parse(&hb[..n], endian)?;
        check_header(&header, file_len, data_end)?;
        let attrs = read_attrs(&mut f, &header, endian, file_len)?;
        let features = match read_features(&mut f, &header, endian, file_len) {
            Ok(fs) => fs,
            // A crashed recording's features may be missing: read on without.
            Err(_) if data_end == DataEnd::EndOfFile => FeatureSet {
                endian: Some(endian),
                ..Default::default()
            },
            Err(e) => return Err(e),
        };
        let compressed = features.compressed().or_else(|e| {
            if data_end == DataEnd::EndOfFile {
                Ok(None)
            } else {
                Err(e)
            }
        })?;
        f.seek(SeekFrom::Start(header.data.offset))?;
        let src = Box::new(BufReader::with_capacity(READ_BUF, f));
        let end = if data_end == DataEnd::EndOfFile {
            Some(file_len)
        } else {
            header.data.end()
        };
        let stream = RecordStream::new(src, endian, header.data.offset, end, None);
        let mut meta = Meta {
            path: path.to_path_buf(),
            mode: Mode::File,
            endian,
            header: Some(header),
            attrs,
            features,
            ids: HashMap::new(),
            compressed,
        };
        meta.index_attrs();
        Ok(PerfReader {
            meta,
            stream,
            more_streams: Vec::new(),
            cut_off: 0,
            damage: None,
            ahead: false,
        })
    }

    /// Decompressed bytes of a record cut off by the end of a stream (read so
    /// far): the recording ended before its codec was flushed (killed, or
    /// its writes failed). Dropped, as perf drops them.
    pub fn cut_off(&self) -> usize {
        self.cut_off
    }

    /// What ended a pipe-mode stream before its bytes were all records:
    /// bytes appended after the last record, a record of size 0, a record
    /// the end cut off. The records before it were read (as perf reads
    /// them); callers say so.
    pub fn damage(&self) -> Option<&FormatError> {
        self.damage.as_ref()
    }

    /// From now on, reads and decodes each stream on a thread of its own,
    /// a few records ahead (a file's or a directory's: a pipe's codec may
    /// be announced on the way, and it is read in place).
    pub fn read_ahead(&mut self) {
        if self.meta.mode != Mode::Pipe {
            self.ahead = true;
            self.stream.read_ahead(self.meta.compressed);
        }
    }

    /// The next record of the file; see [`Record`]. COMPRESSED records are
    /// returned themselves, followed by the records decoded from them.
    pub fn next_record(&mut self) -> Result<Option<(Record<'_>, &Meta)>, FormatError> {
        loop {
            if self.stream.advance(self.meta.compressed.as_ref())? {
                break;
            }
            self.cut_off += std::mem::take(&mut self.stream.cut_off);
            if let Some(d) = self.stream.damage.take() {
                self.damage.get_or_insert(d);
            }
            let Some((n, path)) = self.more_streams.pop() else {
                return Ok(None);
            };
            self.stream = data_stream(&path, self.meta.endian, n)?;
            if self.ahead {
                self.stream.read_ahead(self.meta.compressed);
            }
        }
        let rec = self.stream.current();
        let m = &mut self.meta;
        if m.mode == Mode::Pipe && !rec.nested {
            match rec.header.type_ {
                RecordType::HEADER_ATTR => {
                    let entry = parse_header_attr(&rec, m.endian)?;
                    m.attrs.push(entry);
                    m.index_attrs();
                }
                RecordType::HEADER_TRACING_DATA => {
                    let t = &self.stream.tracing_data;
                    let len = super::tracing_data::length(t).unwrap_or(t.len());
                    m.features.set(feat::TRACING_DATA, t[..len].to_vec());
                }
                RecordType::HEADER_FEATURE => {
                    let mut c = Cursor::new(rec.body(), m.endian, rec.offset + 8);
                    let bit = c.u64("feature id")?;
                    if bit < feat::LAST_FEATURE as u64 {
                        m.features.set(bit as u32, c.buf[8..].to_vec());
                        if bit == feat::COMPRESSED as u64 {
                            m.compressed = m.features.compressed()?;
                        }
                        if bit == feat::EVENT_DESC as u64 {
                            m.index_attrs();
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(Some((self.stream.current(), &self.meta)))
    }
}

/// The record stream of a `data.N` file: records from offset 0 to its end.
fn data_stream(path: &Path, endian: Endian, n: u32) -> Result<RecordStream, FormatError> {
    let f = File::open(path)?;
    let len = f.metadata()?.len();
    Ok(RecordStream::new(
        Box::new(BufReader::with_capacity(READ_BUF, f)),
        endian,
        0,
        Some(len),
        Some(n),
    ))
}
