//! `perfz decompress` / `perfz recompress`: rewrite a perf.data with another
//! codec (or none), keeping every record, attr and feature.
//!
//! Which records are compressed follows perf: bytes that came out of ring
//! buffers (the records inside COMPRESSED records, records of `data.N` streams,
//! and kernel records after FINISHED_INIT in a plain file) go through the codec;
//! synthesized metadata and perf's own user records stay plain, in place.
//!
//! `PerfReader` reads the input; the output has the input's mode (pipe mode
//! for `-o -`). The conversion runs through `CodecSpec::visit`, so the
//! converter is monomorphized per codec; `none` is a constant branch that
//! writes raw records, the others cut records with the recorder's
//! `push::compressor::Compressor`. Dwarf samples are cut as the recorder
//! cuts them (`transform::stack_cut`) unless `--keep-stack-padding`. The output
//! is written to a temporary file beside it (a random `.perfz-*.tmp` name,
//! created exclusively) and renamed at the end, so an error never leaves a
//! half-written file under the final name.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use perfz_codecs::CodecSpec;

use crate::format::{CompressedFormat, FormatError, Mode, PerfReader};
use converter::{ConvertedTo, Run};

mod converter;
mod out;

/// Why a conversion failed.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    /// Reading the input, or writing the output as perf.data, failed.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The codec could not be built or failed.
    #[error(transparent)]
    Codec(#[from] perfz_codecs::Error),
    /// The output path is the input (or inside its `--threads` directory).
    #[error("the output would overwrite the input {} (or a file in it); choose another -o", .0.display())]
    SameFile(PathBuf),
    /// The output's temporary file could not be created beside it.
    #[error("cannot create {}: {err}", .path.display())]
    Create {
        /// The output path asked for.
        path: PathBuf,
        /// The error creating the temporary file in its directory.
        err: std::io::Error,
    },
    /// Writing the output failed.
    #[error("writing the output: {0}")]
    Write(#[from] std::io::Error),
}

/// What a conversion wrote.
#[derive(Debug, Default)]
pub struct Converted {
    /// Records read from the input, those inside COMPRESSED records included.
    pub records: u64,
    /// Bytes of ring records given to the codec (written plain for `decompress`).
    pub raw_bytes: u64,
    /// Bytes of COMPRESSED records written, headers included.
    pub compressed_bytes: u64,
    /// Bytes of records in the output's data section.
    pub output_bytes: u64,
    /// Unwritten dwarf stack bytes left out (`recompress` cuts, as record).
    pub stack_bytes_cut: u64,
    /// Samples with a stack left whole (they did not parse as their event).
    pub stack_samples_uncut: u64,
    /// Why the input's dwarf stacks could not be cut, where they could not.
    pub stack_note: Option<String>,
}

/// Rewrites `input` as `output` with `spec` (`CodecSpec::None` = decompress),
/// its compressed bytes in records of `format`.
/// `output` `-` writes pipe mode to stdout; a pipe-mode input gives a pipe-mode
/// output. The output is written to a temporary file and renamed at the end,
/// so a failure never leaves a half-written file under the final name.
/// With `cut`, dwarf samples lose the stack bytes the kernel did not write,
/// as `perfz record` leaves them out (`transform::stack_cut`).
pub fn convert(
    input: &Path,
    output: &Path,
    spec: &CodecSpec,
    format: CompressedFormat,
    cut: bool,
) -> Result<Converted, ConvertError> {
    convert_reader(PerfReader::open(input)?, input, output, spec, format, cut)
}

/// [`convert`] from a reader already open on `input` (e.g. one whose
/// decoder was primed by `recover`).
pub fn convert_reader(
    reader: PerfReader,
    input: &Path,
    output: &Path,
    spec: &CodecSpec,
    format: CompressedFormat,
    cut: bool,
) -> Result<Converted, ConvertError> {
    if reader.endian != crate::format::endian::Endian::Little {
        return Err(FormatError::Unsupported(
            "converting a big-endian perf.data is not supported (perfz writes little endian)"
                .into(),
        )
        .into());
    }
    let to_stdout = output == Path::new("-");
    let pipe = to_stdout || reader.mode == Mode::Pipe;
    if !to_stdout && would_clobber(input, output) {
        return Err(ConvertError::SameFile(input.to_path_buf()));
    }
    let mut tmp = None;
    let target = if to_stdout {
        ConvertedTo::Stdout
    } else {
        let (t, w) = temp_beside(output)?;
        tmp = Some(t);
        ConvertedTo::File(w)
    };
    let res = spec.visit(Run {
        reader,
        target,
        format,
        pipe,
        cut,
    })?;
    match res {
        Ok(summary) => {
            if let Some(t) = tmp {
                t.persist(output)
                    .map_err(|e| ConvertError::Write(e.error))?;
            }
            Ok(summary)
        }
        // The temporary file is removed as `tmp` drops.
        Err(e) => Err(e),
    }
}

/// A temporary file beside `output` (random name, created exclusively, never
/// through a symlink planted there), to be renamed in at the end, and a
/// buffered writer on it.
fn temp_beside(output: &Path) -> Result<(tempfile::TempPath, BufWriter<File>), ConvertError> {
    let dir = output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let t = tempfile::Builder::new()
        .prefix(".perfz-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|err| ConvertError::Create {
            path: output.to_path_buf(),
            err,
        })?;
    let f = t.as_file().try_clone().map_err(ConvertError::Write)?;
    Ok((t.into_temp_path(), BufWriter::with_capacity(1 << 20, f)))
}

/// Whether writing `output` would replace `input` or a file inside it (a
/// `--threads` directory's `data.N`): the same file, or a path under the
/// input directory, by their real paths (links resolved).
pub fn would_clobber(input: &Path, output: &Path) -> bool {
    let Ok(input) = std::fs::canonicalize(input) else {
        return false;
    };
    // The output may not exist yet: its directory's real path, then its name.
    let out = std::fs::canonicalize(output).ok().or_else(|| {
        let dir = output.parent().filter(|d| !d.as_os_str().is_empty());
        let dir = std::fs::canonicalize(dir.unwrap_or(Path::new("."))).ok()?;
        Some(dir.join(output.file_name()?))
    });
    out.is_some_and(|o| o == input || (input.is_dir() && o.starts_with(&input)))
}
