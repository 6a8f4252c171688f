//! The export's first pass: the side band through time, the events with
//! samples (and the earliest sample's), what the recordings say of their
//! kernel and architecture, and which inputs are cut short. The second
//! pass names each sample's frames against it.
//!
//! Inputs are opened by `open_input`, read ahead and decoded on a thread of
//! their own (`PerfReader::read_ahead`); one whose header describes more
//! than the file holds (cut short, or a crash before it was finished) is
//! opened as `perfz recover` opens it (`recover::open_damaged`) and read up
//! to the damage, as perf reads it. Standard input and FIFOs reach here
//! spooled to a file by cli/export_spool.rs.

use std::path::PathBuf;

use crate::export::recording::parallelism::Switches;
use crate::export::recording::process::Timeline;
use crate::format::feat;
use crate::format::record::misc;
use crate::format::sample::SampleId;
use crate::format::side_band::SideBand;
use crate::format::{FormatError, PerfReader, RecordType};

/// What the first pass found.
pub(crate) struct Survey {
    /// The side band of every input, as processes through time.
    pub(crate) procs: Timeline,
    /// The recordings are from the running kernel.
    pub(crate) kernel_here: bool,
    /// The recording's architecture (HEADER_ARCH of the first input
    /// that has one).
    pub(crate) arch: Option<String>,
    /// Events with samples, in the order first seen: (name, attr, samples).
    pub(crate) events: Vec<(String, crate::format::Attr, u64)>,
    /// The earliest sample's event.
    pub(crate) first_event: Option<String>,
    /// Inputs cut short or damaged, read up to the damage.
    pub(crate) cut_short: Vec<String>,
    /// How many of the program's threads ran through time, from its
    /// context switches (a latency profile's weights).
    pub(crate) parallelism: crate::export::recording::parallelism::Parallelism,
    /// The recording machine's host name (HEADER_HOSTNAME of the first
    /// input that has one).
    pub(crate) hostname: Option<String>,
    /// The recorder's command line (HEADER_CMDLINE of the first input
    /// that has one).
    pub(crate) cmdline: Option<Vec<String>>,
}

/// Reads `inputs` once for the [`Survey`].
pub(crate) fn survey(inputs: &[PathBuf]) -> Result<Survey, FormatError> {
    let mut procs = Timeline::default();
    let mut kernel_here = true;
    let mut arch = None;
    let (mut hostname, mut cmdline) = (None, None);
    let here = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .ok();
    let this_boot_text = crate::synth::kernel_range::this_boot_text();
    // Events with samples, in the order first seen: name -> (attr, samples).
    let mut events: Vec<(String, crate::format::Attr, u64)> = Vec::new();
    let mut first_event = None;
    let mut cut_short = Vec::new();
    let mut switches = Switches::default();
    for input in inputs {
        let (mut r, cut) = open_input(input)?;
        let (seen, counts) =
            read_records(&mut r, cut, &mut procs, &mut switches, &mut first_event)?;
        // Read up to its damage: cut short, or a pipe ending in other bytes.
        if cut || r.damage().is_some() {
            cut_short.push(input.display().to_string());
        }
        // The features, read after the pass: a pipe's come as records.
        let recorded = r.features.string(feat::OSRELEASE);
        let recorded = Kernel {
            release: recorded,
            build_matches: kernel_build_matches(&r.features, seen.build_id),
            text: seen.text,
        };
        kernel_here &= recorded.is_this(here.as_deref(), this_boot_text);
        arch = arch.or(r.features.string(feat::ARCH));
        hostname = hostname.or(r.features.string(feat::HOSTNAME));
        cmdline = cmdline.or(r.features.cmdline());
        switches.cpus(r.features.nr_cpus().map_or(1, |(avail, _)| avail));
        // Files' build ids from the header (perf's default; MMAP2 records
        // carry them only with --buildid-mmap).
        for (_, _, id, name) in r.features.build_id_table().unwrap_or_default() {
            procs.note_build_id(name, id);
        }
        add_counts(&mut events, &r.attrs, counts);
    }
    procs.build();
    Ok(Survey {
        procs,
        kernel_here,
        arch,
        events,
        first_event: first_event.map(|(_, name)| name),
        cut_short,
        parallelism: switches.parallelism(),
        hostname,
        cmdline,
    })
}

/// Reads `r`'s records (`cut`: up to its damage) into `procs` (the side
/// band), `switches` and `first` (the earliest sample's time and event).
/// Returns what its records say of the kernel, and the samples per attr
/// of this input (named once it is read).
fn read_records(
    r: &mut PerfReader,
    cut: bool,
    procs: &mut Timeline,
    switches: &mut Switches,
    first: &mut Option<(u64, String)>,
) -> Result<(KernelSeen, Vec<u64>), FormatError> {
    let mut kernel = KernelSeen::default();
    let mut counts: Vec<u64> = Vec::new();
    while let Some((rec, meta)) = next(r, cut)? {
        let t = rec.header.type_;
        if t == RecordType::SAMPLE {
            count_sample(&rec, meta, &mut counts, first);
        } else if t == RecordType::SWITCH || t == RecordType::SWITCH_CPU_WIDE {
            let out = rec.header.misc & misc::SWITCH_OUT != 0;
            switches.switch(record_time(&rec, meta), out);
        } else if let Some((time, ev)) = side_band(&rec, meta) {
            if matches!(ev, SideBand::Exit { .. }) {
                switches.exit(time);
            }
            kernel.map(&ev);
            procs.push(time, ev);
        }
    }
    Ok((kernel, counts))
}

/// What an input's records say of its kernel.
#[derive(Default)]
struct KernelSeen {
    /// Where its text was (`_text`, the kernel map's offset).
    text: Option<u64>,
    /// Its build id, where the kernel map gives one (an MMAP2 with
    /// `MMAP_BUILD_ID`: perfz's pipes have no build-id table but this).
    build_id: Option<Vec<u8>>,
}

impl KernelSeen {
    fn map(&mut self, ev: &SideBand) {
        if let SideBand::Map {
            path,
            pgoff,
            build_id,
            kernel: true,
            ..
        } = ev
        {
            if path == KERNEL_TEXT_MAP {
                self.text.get_or_insert(*pgoff);
                if let Some(id) = build_id {
                    self.build_id.get_or_insert_with(|| id.clone());
                }
            }
        }
    }
}

/// Counts a sample `rec` by its attr in `counts`, and keeps the earliest
/// sample's event in `first` (as perf script's time order shows it first:
/// rings are drained in turns).
fn count_sample(
    rec: &crate::format::Record<'_>,
    meta: &crate::format::Meta,
    counts: &mut Vec<u64>,
    first: &mut Option<(u64, String)>,
) {
    let Some(i) = meta.attr_index_of_sample(rec) else {
        return;
    };
    let t = sample_time(rec.body(), &meta.attrs[i].attr, meta.endian);
    if first.as_ref().is_none_or(|(ft, _)| t < *ft) {
        *first = Some((t, crate::export::recording::events::name(&meta.attrs[i], i)));
    }
    if counts.len() <= i {
        counts.resize(i + 1, 0);
    }
    counts[i] += 1;
}

/// A side-band record (MMAP, COMM, FORK, EXIT) and its time (0 where
/// the records carry none).
fn side_band(
    rec: &crate::format::Record<'_>,
    meta: &crate::format::Meta,
) -> Option<(u64, SideBand)> {
    let t = rec.header.type_;
    if !t.is_kernel() {
        return None;
    }
    let ev = SideBand::parse(t, rec.header.misc, rec.body())?;
    Some((record_time(rec, meta), ev))
}

/// The time a kernel record that is no sample carries (its sample_id's),
/// or 0.
fn record_time(rec: &crate::format::Record<'_>, meta: &crate::format::Meta) -> u64 {
    meta.attrs
        .first()
        .filter(|a| a.attr.sample_id_all())
        .and_then(|a| SampleId::parse(rec.body(), a.attr.sample_type(), meta.endian))
        .and_then(|id| id.time)
        .unwrap_or(0)
}

/// Adds one input's samples per attr to the events seen, by name.
fn add_counts(
    events: &mut Vec<(String, crate::format::Attr, u64)>,
    attrs: &[crate::format::AttrEntry],
    counts: Vec<u64>,
) {
    for (i, n) in counts.into_iter().enumerate().filter(|(_, n)| *n > 0) {
        let a = &attrs[i];
        let name = crate::export::recording::events::name(a, i);
        match events.iter_mut().find(|e| e.0 == name) {
            Some(e) => e.2 += n,
            None => events.push((name, a.attr.clone(), n)),
        }
    }
}

/// A sample's time (u64::MAX without one), read where its layout puts it
/// without parsing the rest.
fn sample_time(body: &[u8], attr: &crate::format::Attr, e: crate::format::endian::Endian) -> u64 {
    use crate::format::attr::sample_type as st;
    let t = attr.sample_type();
    if t & st::TIME == 0 {
        return u64::MAX;
    }
    let at = [st::IDENTIFIER, st::IP, st::TID]
        .iter()
        .filter(|&&b| t & b != 0)
        .count()
        * 8;
    body.get(at..at + 8)
        .map_or(u64::MAX, |b| e.u64(b.try_into().unwrap()))
}

/// Whether the kernel the recording names in its build-id table (where it
/// does) is the running one: another build of the same release has other
/// addresses, and perf leaves its frames unnamed.
/// Whether the recording's kernel build id is this kernel's (None: one of
/// them is not known): its build-id table's, else the one its records
/// gave (`seen`: a pipe's have no table).
fn kernel_build_matches(f: &crate::format::FeatureSet, seen: Option<Vec<u8>>) -> Option<bool> {
    let recorded = f
        .build_id_table()
        .unwrap_or_default()
        .into_iter()
        .find(|(_, _, _, name)| name == crate::format::record::KERNEL_MAPS)
        .map(|(_, _, id, _)| id)
        .or(seen)?;
    Some(recorded == crate::synth::build_id::of_kernel()?)
}

/// What a recording says of its kernel.
struct Kernel {
    /// Its release (HEADER_OSRELEASE).
    release: Option<String>,
    /// Whether its build id is this kernel's (None: one is not known).
    build_matches: Option<bool>,
    /// Where its text was (`_text`, the kernel map's offset).
    text: Option<u64>,
}

impl Kernel {
    /// Whether it is the running kernel, of release `here` and text at
    /// `text_here`: its release and build id where it gives them; a
    /// recording that gives neither (cut before its features, a pipe
    /// without them) only where its text lies where this boot's does
    /// (KASLR moves it every boot). perf takes such a recording for this
    /// kernel's and names its frames from this kernel's symbols.
    fn is_this(&self, here: Option<&str>, text_here: Option<u64>) -> bool {
        let Some(here) = here else {
            return false;
        };
        match (&self.release, self.build_matches) {
            (None, None) => self.text.is_some() && self.text == text_here,
            (release, build) => {
                release.as_deref().is_none_or(|r| r == here) && build.unwrap_or(true)
            }
        }
    }
}

/// The kernel's map, whose offset is `_text`'s address.
const KERNEL_TEXT_MAP: &str = "[kernel.kallsyms]_text";

/// Opens an input; one whose header describes more than the file holds
/// (cut short, or a crash before it was finished) is opened as recover
/// opens it, to be read up to the damage as perf reads it: true then.
pub(crate) fn open_input(path: &std::path::Path) -> Result<(PerfReader, bool), FormatError> {
    match PerfReader::open(path) {
        Ok(mut r) => {
            r.read_ahead();
            Ok((r, false))
        }
        Err(e) => {
            if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
                return Err(e);
            }
            match crate::recover::open_damaged(path) {
                Ok(d) => Ok((d.reader, true)),
                Err(_) => Err(e),
            }
        }
    }
}

/// The next record; in an input read up to its damage, the damage is its
/// end.
pub(crate) fn next(
    r: &mut PerfReader,
    cut: bool,
) -> Result<Option<(crate::format::Record<'_>, &crate::format::Meta)>, FormatError> {
    match r.next_record() {
        Err(_) if cut => Ok(None),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_is_this_one_only_where_the_recording_says_so() {
        let k = |release: Option<&str>, build_matches, text| Kernel {
            release: release.map(String::from),
            build_matches,
            text,
        };
        let (here, text) = (Some("6.18.44"), Some(0xffff_ffff_9a00_0000));
        assert!(k(Some("6.18.44"), Some(true), None).is_this(here, text));
        assert!(k(Some("6.18.44"), None, None).is_this(here, text));
        assert!(!k(Some("6.1.0"), None, text).is_this(here, text));
        assert!(!k(Some("6.18.44"), Some(false), text).is_this(here, text));
        assert!(!k(None, Some(false), text).is_this(here, text));
        // Nothing said: the text's place (KASLR) decides.
        assert!(k(None, None, text).is_this(here, text));
        assert!(!k(None, None, Some(0xffff_ffff_8100_0000)).is_this(here, text));
        assert!(!k(None, None, None).is_this(here, text));
        assert!(!k(None, None, text).is_this(here, None));
        assert!(!k(Some("6.18.44"), Some(true), None).is_this(None, text));
    }
}
