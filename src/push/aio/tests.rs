//! The async sink gathers a push's records and hands them to the backend
//! once half a buffer is full or when flushed, never per push.

use std::fs::File;
use std::io;
use std::sync::{Arc, Mutex};

use perfz_codecs::{Input, NoneCodec};

use super::{AsyncSink, Backend, Done};
use crate::format::writer::FileWriter;
use crate::push::{NoMeter, Pusher, Sink};

/// Writes each submission at once (pwrite) and logs it (length, offset),
/// handing the buffer straight back, as landed or, from submission
/// `fail_from` on, as failed (EFBIG, nothing written); from submission
/// `misreport_from` on it names another offset than it wrote.
pub struct Log {
    file: File,
    subs: Subs,
    done: Vec<Done>,
    fail_from: usize,
    misreport_from: usize,
}

impl Log {
    pub(super) fn submit(&mut self, buf: Box<[u8]>, len: usize, offset: u64) -> io::Result<()> {
        let mut subs = self.subs.lock().unwrap();
        let result = if subs.len() >= self.fail_from {
            Err(io::Error::from_raw_os_error(libc::EFBIG))
        } else {
            std::os::unix::fs::FileExt::write_all_at(&self.file, &buf[..len], offset)
        };
        subs.push((len, offset));
        // A backend that misreports: the completion names another offset.
        let offset = offset + (subs.len() > self.misreport_from) as u64;
        self.done.push(Done {
            buf,
            offset,
            len,
            result,
        });
        Ok(())
    }
    pub(super) fn reclaim(&mut self, _wait: bool) -> io::Result<Option<Done>> {
        Ok(self.done.pop())
    }
    pub(super) fn drain(&mut self, done: &mut Vec<Done>) -> io::Result<()> {
        done.append(&mut self.done);
        Ok(())
    }
    pub(super) fn name(&self) -> &'static str {
        "log"
    }
    pub(super) fn retarget(&mut self, _: &File) -> io::Result<()> {
        Ok(())
    }
}

type Subs = Arc<Mutex<Vec<(usize, u64)>>>;

fn sink(ring: usize) -> (AsyncSink, Subs, u64) {
    failing_sink(ring, usize::MAX, tempfile::tempfile().unwrap())
}

/// A sink whose writes fail from submission `fail_from` on.
fn failing_sink(ring: usize, fail_from: usize, file: File) -> (AsyncSink, Subs, u64) {
    logged_sink(ring, fail_from, usize::MAX, file)
}

/// A sink whose writes fail from submission `fail_from` on and whose
/// backend misreports completions from `misreport_from` on.
fn logged_sink(
    ring: usize,
    fail_from: usize,
    misreport_from: usize,
    file: File,
) -> (AsyncSink, Subs, u64) {
    let log_file = file.try_clone().unwrap();
    let w = FileWriter::new(file, &[]).unwrap();
    let subs = Subs::default();
    let log = Log {
        file: log_file,
        subs: subs.clone(),
        done: Vec::new(),
        fail_from,
        misreport_from,
    };
    let s = AsyncSink::new(w, Backend::Log(log), 2, ring);
    let start = s.next_offset;
    (s, subs, start)
}

#[test]
fn small_pushes_are_gathered_until_a_flush() {
    let (mut s, subs, start) = sink(64 << 10);
    for _ in 0..10 {
        s.write_plain(&[7u8; 100]).unwrap();
        s.end_push().unwrap();
    }
    assert!(subs.lock().unwrap().is_empty(), "a submission per push");
    assert!(s.holds());
    assert_eq!(s.bytes_written(), 1000);
    s.flush().unwrap();
    assert_eq!(*subs.lock().unwrap(), vec![(1000, start)]);
    assert!(!s.holds());
    // Nothing held: a flush submits nothing more.
    s.flush().unwrap();
    assert_eq!(subs.lock().unwrap().len(), 1);
}

#[test]
fn a_push_that_fills_half_a_buffer_is_submitted_at_its_end() {
    let (mut s, subs, start) = sink(64 << 10);
    let cap = s.free.last().map(|b| b.len()).unwrap();
    let half = vec![1u8; cap / 2];
    s.write_plain(&[2u8; 10]).unwrap();
    s.end_push().unwrap();
    s.write_plain(&half).unwrap();
    assert!(
        subs.lock().unwrap().is_empty(),
        "submitted before the push ended"
    );
    s.end_push().unwrap();
    assert_eq!(*subs.lock().unwrap(), vec![(10 + cap / 2, start)]);
    assert!(!s.holds());
    // The next buffer goes on at the next offset.
    s.write_plain(&[3u8; 5]).unwrap();
    let w = s.hand_over(None).landed().unwrap();
    assert_eq!(
        *subs.lock().unwrap(),
        vec![(10 + cap / 2, start), (5, start + 10 + cap as u64 / 2)]
    );
    assert_eq!(w.data_size(), 15 + cap as u64 / 2);
}

#[test]
fn the_pusher_holds_what_the_sink_gathered_and_its_flush_hands_it_over() {
    let (s, subs, start) = sink(64 << 10);
    let mut p = Pusher::<NoneCodec, _, NoMeter>::new(NoneCodec, s);
    let ring = vec![0u8; 4096];
    p.push(Input::one(&ring)).unwrap();
    assert!(subs.lock().unwrap().is_empty());
    assert!(p.holds(), "the drain loop would never flush it");
    p.flush().unwrap();
    assert_eq!(*subs.lock().unwrap(), vec![(4096, start)]);
    assert!(!p.holds());
}

/// The data section's size as the file's header states it.
fn header_data_size(f: &mut File) -> u64 {
    use std::io::{Read, Seek, SeekFrom};
    // perf_file_header: magic, size, attr_size, attrs {offset, size},
    // data {offset, size}.
    let mut b = [0u8; 8];
    f.seek(SeekFrom::Start(48)).unwrap();
    f.read_exact(&mut b).unwrap();
    u64::from_le_bytes(b)
}

#[test]
fn a_salvage_keeps_the_writes_that_landed_before_the_first_that_failed() {
    let file = tempfile::tempfile().unwrap();
    let mut check = file.try_clone().unwrap();
    // Submissions 0 and 1 land, 2 and after fail.
    let (mut s, subs, _) = failing_sink(64 << 10, 2, file);
    for n in [100, 60, 30] {
        s.write_plain(&vec![5u8; n]).unwrap();
        s.flush().unwrap();
    }
    // The failure shows at the next buffer taken back.
    let e = s.write_plain(&[6u8; 10]).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EFBIG));
    assert_eq!(subs.lock().unwrap().len(), 3);
    s.hand_over(None).salvage(&Default::default()).unwrap();
    assert_eq!(
        header_data_size(&mut check),
        160,
        "the two writes that landed"
    );
}

#[test]
fn a_salvage_after_the_first_write_failed_keeps_nothing_of_it() {
    let file = tempfile::tempfile().unwrap();
    let mut check = file.try_clone().unwrap();
    let (mut s, _, _) = failing_sink(64 << 10, 0, file);
    s.write_plain(&[5u8; 100]).unwrap();
    s.flush().unwrap();
    s.hand_over(None).salvage(&Default::default()).unwrap();
    assert_eq!(header_data_size(&mut check), 0);
}

/// The file a run of pushes leaves, written by the serial sink or by the
/// io_uring backend whose first write never completes.
fn pushed_file(held: bool) -> (Vec<u8>, bool) {
    let (bytes, stalled, _) = pushed_with(held, true);
    (bytes, stalled)
}

/// Also the error of the async sink's last drain, where the held write
/// cannot be cancelled.
fn pushed_with(held: bool, cancellable: bool) -> (Vec<u8>, bool, Option<io::Error>) {
    use crate::push::SerialSink;
    use std::io::Read;
    let mut file = tempfile::tempfile().unwrap();
    let w = FileWriter::new(file.try_clone().unwrap(), &[]).unwrap();
    let rings: Vec<Vec<u8>> = (0..6u8)
        .map(|i| vec![i; 3000 + 1000 * i as usize])
        .collect();
    let mut stalled = false;
    if held {
        let mut b = super::UringBackend::new(w.get_ref()).unwrap_or_else(|e| {
            panic!("this test needs io_uring ({e}): allow io_uring_setup (seccomp profile, sysctl kernel.io_uring_disabled=0)")
        });
        b.hold_next_write(std::time::Duration::from_millis(50), cancellable);
        let mut p =
            Pusher::<NoneCodec, _, NoMeter>::new(NoneCodec, AsyncSink::new(w, b, 2, 16 << 10));
        for r in &rings {
            p.push(Input::one(r)).unwrap();
            p.flush().unwrap();
        }
        let mut s = p.into_sink();
        let r = s.land_all();
        let Backend::Uring(b) = &s.backend else {
            unreachable!("built over io_uring")
        };
        stalled = b.stalled();
        if let Err(e) = r {
            return (Vec::new(), stalled, Some(e));
        }
        s.hand_over(None)
            .landed()
            .unwrap()
            .finish(&Default::default())
            .unwrap();
    } else {
        let mut p = Pusher::<NoneCodec, _, NoMeter>::new(NoneCodec, SerialSink::new(w));
        for r in &rings {
            p.push(Input::one(r)).unwrap();
            p.flush().unwrap();
        }
        p.into_sink()
            .hand_over(None)
            .landed()
            .unwrap()
            .finish(&Default::default())
            .unwrap();
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).unwrap();
    (bytes, stalled, None)
}

#[test]
fn a_write_the_kernel_never_completes_is_cancelled_and_written_with_pwrite() {
    let (want, _) = pushed_file(false);
    let (got, stalled) = pushed_file(true);
    assert!(stalled, "the held write was not taken for a stall");
    assert_eq!(got.len(), want.len());
    assert!(got == want, "the file differs from the serial sink's");
}

#[test]
fn a_write_no_cancel_reaches_is_given_up_and_fails_instead_of_hanging() {
    let (_, stalled, err) = pushed_with(true, false);
    assert!(stalled);
    let e = err.expect("the stuck write did not fail");
    assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
}

/// A backend whose completion names another offset than the write it was
/// handed: the hand-over says the file is not what was handed in (the
/// recorder then exits non-zero), and what landed before it is kept.
#[test]
fn a_completion_for_another_offset_is_an_error_at_the_hand_over() {
    let (mut s, _subs, start) = logged_sink(64 << 10, usize::MAX, 1, tempfile::tempfile().unwrap());
    s.write_plain(&[1u8; 100]).unwrap();
    s.flush().unwrap();
    s.write_plain(&[2u8; 50]).unwrap();
    let handed = s.hand_over(None);
    let err = handed
        .error
        .as_ref()
        .expect("the misreported write is an error");
    assert!(
        err.to_string().contains("matches no write submitted"),
        "{err}"
    );
    let out = handed.output.as_ref().unwrap();
    assert_eq!(out.next_offset(), start + 100, "the first write is kept");
}

/// A backend that says a write landed when the file does not hold it is
/// found out at the hand-over.
#[test]
fn a_file_shorter_than_what_landed_is_an_error_at_the_hand_over() {
    let (mut s, _subs, _) = sink(64 << 10);
    s.write_plain(&[1u8; 100]).unwrap();
    s.flush().unwrap();
    s.land_all().unwrap();
    let file = s.out.file().unwrap().try_clone().unwrap();
    let end = s.landed.end();
    file.set_len(end - 10).unwrap();
    let handed = s.hand_over(None);
    let err = handed.error.as_ref().expect("a short file is an error");
    assert!(err.to_string().contains("but the file holds"), "{err}");
}

/// Plain records larger than a buffer (the side band of a busy machine
/// beside small rings) go out in several writes, each ending at a record's
/// end, and read back whole.
#[test]
fn plain_records_larger_than_a_buffer_go_out_in_writes_that_end_at_records() {
    let (mut s, subs, start) = sink(64 << 10);
    let cap = s.cap;
    let mut rec = vec![0u8; 1000];
    rec[..8].copy_from_slice(
        &crate::format::record::RecordHeader {
            type_: crate::format::RecordType(3),
            misc: 0,
            size: 1000,
        }
        .to_le(),
    );
    let side_band = rec.repeat(cap / 1000 * 2 + 7);
    s.write_plain(&side_band).unwrap();
    let out = s.hand_over(None).landed().unwrap();
    assert_eq!(out.data_size(), side_band.len() as u64);
    let subs = subs.lock().unwrap();
    assert!(subs.len() >= 3, "{subs:?}");
    for (len, off) in subs.iter() {
        assert_eq!((off - start) % 1000, 0, "a write starts inside a record");
        assert_eq!(len % 1000, 0, "a write ends inside a record");
    }
    let file = out.file().unwrap();
    let mut back = vec![0u8; side_band.len()];
    std::os::unix::fs::FileExt::read_exact_at(file, &mut back, start).unwrap();
    assert!(back == side_band, "the records read back as written");
}
