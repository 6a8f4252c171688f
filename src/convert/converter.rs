//! The conversion itself: records read from the input routed to the codec
//! (ring records), held back (before FINISHED_INIT) or written plain, dwarf
//! samples cut on the way.

use std::fs::File;
use std::io::BufWriter;

use perfz_codecs::{Codec, CodecId, CodecVisitor, Input};

use super::out::Out;
use super::{ConvertError, Converted};
use crate::format::writer::{FileWriter, PipeWriter};
use crate::format::AttrEntry;
use crate::format::{
    feat, CompressedFormat, FeatureSet, FormatError, Meta, Mode, PerfReader, RecordType,
};
use crate::push::compressor::Compressor;
use crate::transform::{for_each_slice, Edit, StackCut};

/// Raw bytes collected before one push through the codec.
const PUSH_SIZE: usize = 256 * 1024;
/// Records seen before FINISHED_INIT are held back (to keep them plain if a
/// FINISHED_INIT follows) up to this many bytes.
const PRE_INIT_LIMIT: usize = 16 << 20;

/// Where the output goes: a (temporary) file, or standard output.
pub(super) enum ConvertedTo {
    File(BufWriter<File>),
    Stdout,
}

/// One conversion's inputs, run once the codec's type is known.
pub(super) struct Run {
    pub(super) reader: PerfReader,
    pub(super) target: ConvertedTo,
    pub(super) format: CompressedFormat,
    pub(super) pipe: bool,
    pub(super) cut: bool,
}

impl CodecVisitor for Run {
    type Output = Result<Converted, ConvertError>;
    fn visit<C: Codec + Send + 'static>(self, codec: C) -> Result<Converted, ConvertError> {
        let mut c = Converter::<C>::new(codec, self.format);
        c.cut = self.cut.then_some(Cutter::Unknown);
        c.run(self.reader, self.target, self.pipe)
    }
}

struct Converter<C: Codec> {
    comp: Option<Compressor<C>>,
    /// Raw ring records waiting for one push.
    run: Vec<u8>,
    /// Records before FINISHED_INIT: (bytes, is a kernel record) in order.
    pre_init: Vec<(Vec<u8>, bool)>,
    pre_init_bytes: usize,
    seen_init: bool,
    /// The stack cut, once the attrs are known (at the first sample).
    cut: Option<Cutter>,
    edits: Vec<Edit>,
    cut_rec: Vec<u8>,
    summary: Converted,
}

enum Cutter {
    Unknown,
    Ready(Option<StackCut>),
}

impl<C: Codec> Converter<C> {
    fn new(codec: C, format: CompressedFormat) -> Self {
        // `none` writes raw records: a compile-time constant branch.
        let comp = if C::ID == CodecId::NONE {
            None
        } else {
            Some(Compressor::with_format(codec, format))
        };
        Converter {
            comp,
            run: Vec::with_capacity(PUSH_SIZE + 65536),
            pre_init: Vec::new(),
            pre_init_bytes: 0,
            seen_init: false,
            cut: None,
            edits: Vec::new(),
            cut_rec: Vec::new(),
            summary: Converted::default(),
        }
    }

    /// Features of the output: the input's, minus what no longer holds.
    fn features(&self, meta: &Meta, pipe: bool) -> FeatureSet {
        let mut f = meta.features.clone();
        f.remove(feat::DIR_FORMAT);
        f.remove(feat::COMPRESSED);
        if let Some(c) = &self.comp {
            let mut info = c.info();
            if pipe {
                info.ratio = 0; // unknown until the end, as in perf's pipe mode
            }
            f.set_compressed(info);
        }
        f
    }

    fn open(
        &self,
        meta: &Meta,
        target: &mut Option<ConvertedTo>,
        pipe: bool,
    ) -> Result<Out, ConvertError> {
        let features = self.features(meta, pipe);
        Ok(match target.take().expect("opened once") {
            ConvertedTo::Stdout => {
                let w = BufWriter::with_capacity(1 << 20, std::io::stdout());
                Out::Stdout(PipeWriter::new(w, &meta.attrs, &features)?)
            }
            ConvertedTo::File(w) if pipe => Out::Pipe(PipeWriter::new(w, &meta.attrs, &features)?),
            ConvertedTo::File(w) => Out::File(FileWriter::new(w, &meta.attrs)?),
        })
    }

    fn run(
        mut self,
        mut reader: PerfReader,
        target: ConvertedTo,
        pipe: bool,
    ) -> Result<Converted, ConvertError> {
        let mut target = Some(target);
        let mut out: Option<Out> = None;
        while let Some((rec, meta)) = reader.next_record()? {
            let t = rec.header.type_;
            self.summary.records += 1;
            if t.is_compressed()
                || (meta.mode == Mode::Pipe
                    && (t == RecordType::HEADER_ATTR
                        || t == RecordType::HEADER_FEATURE
                        || t == RecordType::HEADER_TRACING_DATA))
            {
                continue; // re-created by the writer
            }
            if out.is_none() {
                out = Some(self.open(meta, &mut target, pipe)?);
            }
            let writer = out.as_mut().expect("opened above");
            let mut cut_buf = std::mem::take(&mut self.cut_rec);
            let bytes = if t == RecordType::SAMPLE
                && self.cut_sample(rec.bytes, &meta.attrs, &mut cut_buf)
            {
                &cut_buf[..]
            } else {
                rec.bytes
            };
            let from_ring = rec.from_ring(self.seen_init);
            self.route(writer, t, bytes, from_ring)?;
            self.cut_rec = cut_buf;
        }
        if out.is_none() {
            out = Some(self.open(&reader.meta, &mut target, pipe)?);
        }
        let meta = &reader.meta;
        let mut out = out.unwrap();
        let no_init = !self.seen_init;
        self.flush_pre_init(&mut out, no_init)?;
        self.flush_run(&mut out)?;
        let features = self.features(meta, pipe);
        self.summary.output_bytes = out.data_size();
        out.finish(&features)?;
        Ok(self.summary)
    }

    /// Sends one record of type `t` on its way: ring records (`from_ring`)
    /// to the codec's run, records before FINISHED_INIT held back, the rest
    /// written plain.
    fn route(
        &mut self,
        writer: &mut Out,
        t: RecordType,
        bytes: &[u8],
        from_ring: bool,
    ) -> Result<(), ConvertError> {
        if from_ring {
            self.run.extend_from_slice(bytes);
            if self.run.len() >= PUSH_SIZE {
                self.flush_run(writer)?;
            }
        } else if !self.seen_init {
            if t == RecordType::FINISHED_INIT {
                self.seen_init = true;
                self.flush_pre_init(writer, false)?;
                self.write_plain(writer, bytes)?;
            } else {
                self.pre_init_bytes += bytes.len();
                self.pre_init.push((bytes.to_vec(), t.is_kernel()));
                if self.pre_init_bytes > PRE_INIT_LIMIT {
                    // No FINISHED_INIT in sight: an older file; treat its
                    // kernel records as ring data from here on.
                    self.seen_init = true;
                    self.flush_pre_init(writer, true)?;
                }
            }
        } else {
            self.write_plain(writer, bytes)?;
        }
        Ok(())
    }

    /// Writes the sample `rec` cut to its written stack into `out`; false
    /// where nothing is cut (no cut asked, no stack, or it does not parse).
    fn cut_sample(&mut self, rec: &[u8], attrs: &[AttrEntry], out: &mut Vec<u8>) -> bool {
        let tail = match &mut self.cut {
            None => return false,
            Some(Cutter::Ready(t)) => t,
            Some(c @ Cutter::Unknown) => {
                // The first sample: every attr is known by now (in pipe
                // mode too, where they come as records first).
                let t = StackCut::for_attrs(attrs).unwrap_or_else(|why| {
                    self.summary.stack_note = Some(format!(
                        "dwarf stacks are written whole (their unwritten bytes kept): {why}"
                    ));
                    None
                });
                *c = Cutter::Ready(t);
                let Cutter::Ready(t) = c else { unreachable!() };
                t
            }
        };
        let Some(tail) = tail else { return false };
        self.edits.clear();
        let w = tail.edits(Input::one(rec), &mut self.edits);
        self.summary.stack_samples_uncut += w.uncut;
        if w.dropped == 0 {
            return false;
        }
        self.summary.stack_bytes_cut += w.dropped;
        out.clear();
        for_each_slice(Input::one(rec), &self.edits, |p| {
            out.extend_from_slice(p);
            Ok::<(), ()>(())
        })
        .expect("infallible");
        true
    }

    fn write_plain(&mut self, writer: &mut Out, bytes: &[u8]) -> Result<(), ConvertError> {
        self.flush_run(writer)?;
        writer.write_records(bytes)?;
        Ok(())
    }

    fn flush_pre_init(
        &mut self,
        writer: &mut Out,
        compress_kernel: bool,
    ) -> Result<(), ConvertError> {
        for (bytes, kernel) in std::mem::take(&mut self.pre_init) {
            if compress_kernel && kernel {
                self.run.extend_from_slice(&bytes);
            } else {
                self.write_plain(writer, &bytes)?;
            }
        }
        self.pre_init_bytes = 0;
        Ok(())
    }

    fn flush_run(&mut self, writer: &mut Out) -> Result<(), ConvertError> {
        if self.run.is_empty() {
            return Ok(());
        }
        self.summary.raw_bytes += self.run.len() as u64;
        match &mut self.comp {
            None => writer.write_records(&self.run)?,
            Some(c) => {
                let before = c.tally.out_bytes;
                c.push(Input::one(&self.run), |rec| {
                    writer.write_records(rec).map_err(FormatError::from)
                })?;
                self.summary.compressed_bytes += c.tally.out_bytes - before;
            }
        }
        self.run.clear();
        Ok(())
    }
}
