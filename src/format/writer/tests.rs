//! FileWriter under a size limit: finishing after a failed write.

use super::*;
use crate::format::{PerfReader, RecordType};
use std::io::{Cursor, Read};

/// A file under a size limit: writes past it fail with EFBIG after
/// writing what fits, as write(2) does under RLIMIT_FSIZE.
struct Limited {
    c: Cursor<Vec<u8>>,
    limit: u64,
}

impl Write for Limited {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = self.limit.saturating_sub(self.c.position()) as usize;
        if room == 0 && !buf.is_empty() {
            return Err(std::io::Error::from_raw_os_error(libc::EFBIG));
        }
        self.c.write(&buf[..buf.len().min(room)])
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Seek for Limited {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.c.seek(to)
    }
}

/// A perf 6.1 recording's records written one by one into a file whose
/// limit lets the last whole record end just short of it: the feature
/// table does not fit after the data, and finishing cuts the data back
/// to an earlier record end where it does, keeping those samples (a
/// plain finish fails, and the recorder then fell back to its last
/// checkpoint: nothing after it).
#[test]
fn a_feature_table_without_room_costs_the_last_records_not_all() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/perf61/plain-sysw.data");
    let r = PerfReader::open(&path).unwrap();
    let (attrs, features) = (r.meta.attrs.clone(), r.meta.features.clone());
    let h = r.meta.header.clone().unwrap();
    let mut bytes = Vec::new();
    std::fs::File::open(&path)
        .unwrap()
        .read_to_end(&mut bytes)
        .unwrap();
    let data = &bytes[h.data.offset as usize..h.data.end().unwrap() as usize];
    let (table, _) = feature_block(&features, 0);
    for plain in [false, true] {
        let mut fw = FileWriter::new(
            Limited {
                c: Cursor::new(Vec::new()),
                limit: u64::MAX,
            },
            &attrs,
        )
        .unwrap();
        let start = fw.data_end();
        // Records until the data is within a table's size of where the
        // limit will be: the one after them fails.
        let limit = start + data.len() as u64;
        assert!(table.len() < data.len() / 4, "a fixture with room to test");
        let (mut ends, mut at, mut samples) = (Vec::new(), 0, 0);
        while at < data.len() {
            let size = u16::from_le_bytes([data[at + 6], data[at + 7]]) as usize;
            if fw.data_end() + size as u64 > limit - table.len() as u64 / 2 {
                break;
            }
            fw.write_records(&data[at..at + size]).unwrap();
            samples += (u32::from_le_bytes(data[at..at + 4].try_into().unwrap())
                == RecordType::SAMPLE.0) as u64;
            ends.push(fw.data_size());
            at += size;
        }
        fw.w.limit = limit;
        let done = if plain {
            fw.finish(&features)
        } else {
            fw.finish_cutting_back(&features, &ends)
        };
        if plain {
            assert!(done.is_err(), "the table does not fit after the data");
            continue;
        }
        let out = done.unwrap().c.into_inner();
        assert!(out.len() as u64 <= limit);
        let mut back = PerfReader::from_bytes(out).unwrap();
        let mut kept = 0;
        while let Some((rec, _)) = back.next_record().unwrap() {
            kept += (rec.header.type_ == RecordType::SAMPLE) as u64;
        }
        assert!(
            kept > 0 && kept <= samples,
            "{kept} of {samples} samples kept"
        );
        assert_eq!(back.meta.features.sections.len(), features.sections.len());
    }
}
