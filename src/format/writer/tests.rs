//! FileWriter under a size limit: finishing after a failed write.

use super::*;
use crate::format::feature::feat;
use crate::format::{AttrEntry, CompressedInfo, PerfReader, RecordType};
use std::io::Cursor;

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

/// The perf 6.1 fixture plain-sysw.data: its attrs, its features and
/// the bytes of its data section.
fn plain_sysw() -> (Vec<AttrEntry>, FeatureSet, Vec<u8>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/perf61/plain-sysw.data");
    let r = PerfReader::open(&path).unwrap();
    let h = r.meta.header.clone().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let data = bytes[h.data.offset as usize..h.data.end().unwrap() as usize].to_vec();
    (r.meta.attrs.clone(), r.meta.features.clone(), data)
}

/// `out` read back to its end: the reader, and the samples it read.
fn read_back(out: Vec<u8>) -> (PerfReader, u64) {
    let mut back = PerfReader::from_bytes(out).unwrap();
    let mut kept = 0;
    while let Some((rec, _)) = back.next_record().unwrap() {
        kept += (rec.header.type_ == RecordType::SAMPLE) as u64;
    }
    (back, kept)
}

/// A perf 6.1 recording's records written one by one into a file whose
/// limit lets the last whole record end just short of it: the feature
/// table does not fit after the data, and finishing cuts the data back
/// to an earlier record end where it does, keeping those samples (a
/// plain finish fails, and the recorder then fell back to its last
/// checkpoint: nothing after it).
#[test]
fn a_feature_table_without_room_costs_the_last_records_not_all() {
    let (attrs, features, data) = plain_sysw();
    let data = &data[..];
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
            fw.finish_cutting_back(&features, &ends).map(|(w, s)| {
                assert!(s.dropped > 0 && !s.features_cut, "{s:?}");
                w
            })
        };
        if plain {
            assert!(done.is_err(), "the table does not fit after the data");
            continue;
        }
        let out = done.unwrap().c.into_inner();
        assert!(out.len() as u64 <= limit);
        let (back, kept) = read_back(out);
        assert!(
            kept > 0 && kept <= samples,
            "{kept} of {samples} samples kept"
        );
        assert_eq!(back.meta.features.sections.len(), features.sections.len());
    }
}

/// A writer (without a limit yet) holding `data`'s records one write each;
/// every write's end, and the samples' ends.
fn written(attrs: &[AttrEntry], data: &[u8]) -> (FileWriter<Limited>, Vec<u64>, Vec<u64>) {
    let c = Cursor::new(Vec::new());
    let mut fw = FileWriter::new(Limited { c, limit: u64::MAX }, attrs).unwrap();
    let (mut ends, mut at, mut sample_ends) = (Vec::new(), 0, Vec::new());
    while at < data.len() {
        let size = u16::from_le_bytes([data[at + 6], data[at + 7]]) as usize;
        fw.write_records(&data[at..at + size]).unwrap();
        if u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) == RecordType::SAMPLE.0 {
            sample_ends.push(fw.data_size());
        }
        ends.push(fw.data_size());
        at += size;
    }
    (fw, ends, sample_ends)
}

/// Where the whole feature table fits after none of the write ends (a disk
/// full right after the records, as after a switch's side band), the file
/// keeps the records with only what reading them needs: HEADER_COMPRESSED
/// where the records may be compressed (at the newest end it fits after),
/// else no feature at all (the header alone). It used to keep nothing: the
/// header still said `data.size = 0`, which perf 6.1 reads as no data.
#[test]
fn without_room_for_any_table_the_records_stay_with_what_reading_needs() {
    let (attrs, features, data) = plain_sysw();
    let data = &data[..];
    assert!(features.compressed().unwrap().is_none());
    let compressed = features.with_compressed(Some(CompressedInfo {
        version: 0,
        codec: 1,
        level: 1,
        ratio: 0,
        mmap_len: 528384,
    }));
    let needed_len = feature_block(&compressed.needed_to_read(), 0).0.len() as u64;
    // (features, room past the data, records cut)
    for (f, room, dropped) in [
        // No codec: the header alone, every record.
        (&features, 0, false),
        // A codec and room for its section: every record.
        (&compressed, needed_len, false),
        // A codec and no room: cut back to the newest end it fits after.
        (&compressed, 0, true),
    ] {
        let (mut fw, ends, sample_ends) = written(&attrs, data);
        let landed = fw.data_size();
        fw.w.limit = fw.data_end() + room;
        // The last end and the newest one far enough back for the section
        // (the full table fits after neither). A full table tried there
        // would have overwritten the last records and, failing, left them
        // garbled under a header that counts them (as it once did).
        let back = *ends
            .iter()
            .rev()
            .find(|&&e| e + needed_len <= landed)
            .unwrap();
        let ends = [landed, back];
        assert!(landed - back < feature_block(f, 0).0.len() as u64);
        let start = (fw.data_end() - landed) as usize;
        let (w, salvage) = fw.finish_cutting_back(f, &ends).unwrap();
        let out = w.c.into_inner();
        assert_eq!(salvage.cause, Some(libc::EFBIG));
        assert!(salvage.features_cut);
        assert_eq!(salvage.dropped > 0, dropped, "{salvage:?}");
        let size = landed - salvage.dropped;
        assert_eq!(
            &out[start..start + size as usize],
            &data[..size as usize],
            "the records kept are the records written"
        );
        let (back, kept) = read_back(out);
        assert_eq!(back.meta.header.as_ref().unwrap().data.size, size);
        assert_eq!(
            kept,
            sample_ends.iter().filter(|&&e| e <= size).count() as u64
        );
        if dropped {
            assert_eq!(size, ends[1], "the newest end the section fits after");
        }
        assert_eq!(back.meta.features, f.needed_to_read());
    }
}

/// The async sink's path: records written at offsets by someone else
/// (`account`), a checkpoint between them, then records appended here (the
/// LOST_SAMPLES the end writes). The appended ones go after every record
/// written at offsets, not where the checkpoint left the cursor: before the
/// fix they overwrote the records after the checkpoint and the file's last
/// bytes were never written (every `--aio` recording that lost samples).
#[test]
fn records_appended_after_writes_at_offsets_follow_them() {
    use crate::format::record::records;
    use std::os::unix::fs::FileExt;
    let (attrs, features, data) = plain_sysw();
    let file = tempfile::tempfile().unwrap();
    let mut fw = FileWriter::new(file.try_clone().unwrap(), &attrs).unwrap();
    let mut want = Vec::new();
    for (i, r) in records(&data).enumerate() {
        let (h, rec) = r.unwrap();
        if i == 3 {
            fw.checkpoint(&features).unwrap().unwrap();
        }
        // Every other record at offsets, as the async sink writes them.
        if i % 2 == 0 {
            file.write_all_at(rec, fw.data_end()).unwrap();
            fw.account(rec.len() as u64);
        } else {
            fw.write_records(rec).unwrap();
        }
        want.push((h.type_, h.size));
    }
    assert!(want.len() > 8, "the fixture has records to write");
    let last = empty_record(RecordType::FINISHED_ROUND);
    fw.write_records(&last).unwrap();
    want.push((RecordType::FINISHED_ROUND, 8));
    let mut f = fw.finish(&features).unwrap();
    let mut out = Vec::new();
    f.seek(SeekFrom::Start(0)).unwrap();
    std::io::Read::read_to_end(&mut f, &mut out).unwrap();
    let mut back = PerfReader::from_bytes(out).unwrap();
    let mut got = Vec::new();
    while let Some((rec, _)) = back.next_record().unwrap() {
        // The checkpoint's block reads as a record of its own.
        if rec.header.type_ != SKIP_RECORD {
            got.push((rec.header.type_, rec.header.size));
        }
    }
    assert_eq!(got, want, "every record read back whole, in order");
}

#[test]
fn what_reading_needs_keeps_the_codec_and_the_directory_format() {
    let (_, features, _) = plain_sysw();
    assert!(features.get(feat::HOSTNAME).is_some());
    let mut f = features.with_compressed(Some(CompressedInfo {
        version: 0,
        codec: 1,
        level: 1,
        ratio: 0,
        mmap_len: 528384,
    }));
    f.set(feat::DIR_FORMAT, 1u64.to_le_bytes().to_vec());
    let needed = f.needed_to_read();
    assert_eq!(needed.get(feat::COMPRESSED), f.get(feat::COMPRESSED));
    assert_eq!(needed.get(feat::DIR_FORMAT), Some(&1u64.to_le_bytes()[..]));
    assert!(
        needed.get(feat::HOSTNAME).is_none(),
        "only what reading needs"
    );
}
