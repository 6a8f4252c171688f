//! SAMPLE records decoded per `sample_type` (format notes 4.5), and the
//! sample_id trailer of other records (4.3).

use super::attr::{read_format as rf, sample_type as st, Attr};
use super::endian::{Cursor, Endian};
use super::FormatError;

/// The fields of a SAMPLE; absent ones are `None`/empty.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Sample {
    /// The event fd's kernel id (IDENTIFIER or ID), which names the attr.
    pub id: Option<u64>,
    /// Instruction pointer where the sample was taken (IP).
    pub ip: Option<u64>,
    /// Process id (TID).
    pub pid: Option<u32>,
    /// Thread id (TID).
    pub tid: Option<u32>,
    /// Timestamp in ns of the event's clock (TIME).
    pub time: Option<u64>,
    /// Data address of the access or fault (ADDR).
    pub addr: Option<u64>,
    /// Id of the very event that sampled, an inherited child's own (STREAM_ID).
    pub(crate) stream_id: Option<u64>,
    /// The cpu the sample was taken on (CPU).
    pub cpu: Option<u32>,
    /// Events the sample stands for (PERIOD).
    pub period: Option<u64>,
    /// The CALLCHAIN as the kernel wrote it, `PERF_CONTEXT_*` markers included.
    pub callchain: Vec<u64>,
    /// Bytes of RAW data (a tracepoint's fields), 0 without RAW.
    pub(crate) raw_len: usize,
    /// Bytes of user stack the kernel wrote (`dyn_size`).
    pub user_stack_len: u64,
    /// Bytes the sample holds for the user stack (`size`).
    pub user_stack_size: u64,
    /// Offset in the body of the stack `size` word (0 without STACK_USER).
    #[serde(skip)]
    pub(crate) user_stack_at: usize,
    /// Offset in the body of the first user register value (0 without
    /// REGS_USER, or when the kernel wrote none: abi 0). The values follow
    /// in the order of the attr's `sample_regs_user` bits.
    #[serde(skip)]
    pub(crate) user_regs_at: usize,
    /// Bytes of the body after the last field this layout has (0 in a
    /// sample the kernel wrote).
    #[serde(skip)]
    pub(crate) trailing: usize,
}

/// Branch sample type bit telling that BRANCH_STACK carries `hw_idx`.
const BRANCH_HW_INDEX: u64 = 1 << 17;

impl Sample {
    /// Decodes `body` (the record without its 8-byte header) as laid out by `attr`.
    pub fn parse(body: &[u8], attr: &Attr, e: Endian, offset: u64) -> Result<Sample, FormatError> {
        let t = attr.sample_type();
        let mut c = Cursor::new(body, e, offset + 8);
        let mut s = Sample::default();
        parse_head(&mut c, t, &mut s)?;
        if t & st::READ != 0 {
            skip_read(&mut c, attr.read_format())?;
        }
        if t & st::CALLCHAIN != 0 {
            let nr = c.u64("callchain nr")?;
            let n = counted(&c, nr, 8, "callchain")?;
            s.callchain.reserve(n);
            for _ in 0..n {
                s.callchain.push(c.u64("callchain ip")?);
            }
        }
        if t & st::RAW != 0 {
            let size = c.u32("raw size")? as usize;
            s.raw_len = size;
            c.skip(size, "raw data")?;
        }
        if t & st::BRANCH_STACK != 0 {
            let nr = c.u64("branch stack nr")?;
            if attr.branch_sample_type() & BRANCH_HW_INDEX != 0 {
                c.skip(8, "branch hw_idx")?;
            }
            let n = counted(&c, nr, 24, "branch stack")?;
            c.skip(n * 24, "branch entries")?;
        }
        if t & st::REGS_USER != 0 {
            let at = body.len() - c.remaining() + 8;
            if skip_regs(&mut c, attr.sample_regs_user(), "user regs")? {
                s.user_regs_at = at;
            }
        }
        if t & st::STACK_USER != 0 {
            s.user_stack_at = body.len() - c.remaining();
            let size = c.u64("user stack size")?;
            s.user_stack_size = size;
            let n = counted(&c, size, 1, "user stack")?;
            c.skip(n, "user stack")?;
            if size != 0 {
                s.user_stack_len = c.u64("user stack dyn_size")?;
            }
        }
        skip_tail(&mut c, t, attr)?;
        s.trailing = c.remaining();
        Ok(s)
    }
}

/// Reads the fixed words a SAMPLE starts with, IDENTIFIER to PERIOD, into `s`.
#[inline]
fn parse_head(c: &mut Cursor<'_>, t: u64, s: &mut Sample) -> Result<(), FormatError> {
    if t & st::IDENTIFIER != 0 {
        s.id = Some(c.u64("sample id")?);
    }
    if t & st::IP != 0 {
        s.ip = Some(c.u64("sample ip")?);
    }
    if t & st::TID != 0 {
        s.pid = Some(c.u32("sample pid")?);
        s.tid = Some(c.u32("sample tid")?);
    }
    if t & st::TIME != 0 {
        s.time = Some(c.u64("sample time")?);
    }
    if t & st::ADDR != 0 {
        s.addr = Some(c.u64("sample addr")?);
    }
    if t & st::ID != 0 {
        s.id = Some(c.u64("sample id")?);
    }
    if t & st::STREAM_ID != 0 {
        s.stream_id = Some(c.u64("sample stream_id")?);
    }
    if t & st::CPU != 0 {
        s.cpu = Some(c.u32("sample cpu")?);
        c.skip(4, "sample cpu reserved")?;
    }
    if t & st::PERIOD != 0 {
        s.period = Some(c.u64("sample period")?);
    }
    Ok(())
}

/// Skips the fields after the user stack, WEIGHT to AUX, none of which a
/// [`Sample`] keeps.
#[inline]
fn skip_tail(c: &mut Cursor<'_>, t: u64, attr: &Attr) -> Result<(), FormatError> {
    // The remaining fields are fixed-size; bounds are still checked.
    for (bit, what) in [
        (st::WEIGHT | st::WEIGHT_STRUCT, "weight"),
        (st::DATA_SRC, "data_src"),
        (st::TRANSACTION, "transaction"),
    ] {
        if t & bit != 0 {
            c.skip(8, what)?;
        }
    }
    if t & st::REGS_INTR != 0 {
        skip_regs(c, attr.sample_regs_intr(), "intr regs")?;
    }
    for (bit, what) in [
        (st::PHYS_ADDR, "phys_addr"),
        (st::CGROUP, "cgroup"),
        (st::DATA_PAGE_SIZE, "data_page_size"),
        (st::CODE_PAGE_SIZE, "code_page_size"),
    ] {
        if t & bit != 0 {
            c.skip(8, what)?;
        }
    }
    if t & st::AUX != 0 {
        let size = c.u64("aux size")?;
        let n = counted(c, size, 1, "aux data")?;
        c.skip(n, "aux data")?;
    }
    Ok(())
}

/// A count read from the file, checked against what is left before anything is
/// reserved for it.
fn counted(c: &Cursor<'_>, nr: u64, width: usize, what: &str) -> Result<usize, FormatError> {
    if nr > (c.remaining() / width) as u64 {
        return Err(FormatError::invalid(
            c.offset(),
            format!(
                "{what} claims {nr} entries, the record has room for {}",
                c.remaining() / width
            ),
        ));
    }
    Ok(nr as usize)
}

fn skip_read(c: &mut Cursor<'_>, f: u64) -> Result<(), FormatError> {
    let per_value = 1 + (f & rf::ID != 0) as usize + (f & rf::LOST != 0) as usize;
    let times =
        (f & rf::TOTAL_TIME_ENABLED != 0) as usize + (f & rf::TOTAL_TIME_RUNNING != 0) as usize;
    if f & rf::GROUP != 0 {
        let nr = c.u64("read group nr")?;
        c.skip(8 * times, "read times")?;
        let n = counted(c, nr, 8 * per_value, "read group")?;
        c.skip(n * 8 * per_value, "read values")
    } else {
        c.skip(8 * (per_value + times), "read value")
    }
}

/// Skips a register set; whether it holds values (abi not 0).
fn skip_regs(c: &mut Cursor<'_>, mask: u64, what: &str) -> Result<bool, FormatError> {
    let abi = c.u64(what)?;
    if abi != 0 {
        c.skip(8 * mask.count_ones() as usize, what)?;
    }
    Ok(abi != 0)
}

/// The fixed 8-byte words a SAMPLE starts with, in the kernel's order
/// (`perf_output_sample`), each there where `sample_type` has its bit;
/// READ and the fields of their own length follow.
pub const FIXED_WORDS: [u64; 9] = [
    st::IDENTIFIER,
    st::IP,
    st::TID,
    st::TIME,
    st::ADDR,
    st::ID,
    st::STREAM_ID,
    st::CPU,
    st::PERIOD,
];

/// Byte offset of the event id in a SAMPLE's body (format notes 4.7):
/// IDENTIFIER first, else ID after the fixed words before it; `None`
/// where the samples carry no id.
pub fn id_offset(sample_type: u64) -> Option<usize> {
    if sample_type & st::IDENTIFIER != 0 {
        return Some(0);
    }
    if sample_type & st::ID == 0 {
        return None;
    }
    let before = [st::IP, st::TID, st::TIME, st::ADDR];
    Some(before.iter().filter(|&&b| sample_type & b != 0).count() * 8)
}

/// The sample_id trailer of a non-SAMPLE kernel record, parsed backwards from
/// the end as perf does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SampleId {
    /// Process id (TID).
    pub pid: Option<u32>,
    /// Thread id (TID).
    pub tid: Option<u32>,
    /// Timestamp in ns of the event's clock (TIME).
    pub time: Option<u64>,
    /// The event fd's kernel id (ID or IDENTIFIER), which names the attr.
    pub id: Option<u64>,
    /// The cpu the record was written on (CPU).
    pub cpu: Option<u32>,
}

/// The fields of a sample_id trailer, in their order; each is 8 bytes.
const ID_TRAILER_FIELDS: [u64; 6] = [
    st::TID,
    st::TIME,
    st::ID,
    st::STREAM_ID,
    st::CPU,
    st::IDENTIFIER,
];

/// Size of the trailer for `sample_type`.
pub fn id_trailer_size(sample_type: u64) -> usize {
    ID_TRAILER_FIELDS
        .iter()
        .filter(|&&b| sample_type & b != 0)
        .count()
        * 8
}

/// Where `field` (one of the trailer's `sample_type` bits) sits inside the
/// trailer of `sample_type`, or `None` if the trailer has no such field.
pub fn id_trailer_offset(sample_type: u64, field: u64) -> Option<usize> {
    if sample_type & field == 0 {
        return None;
    }
    let i = ID_TRAILER_FIELDS.iter().position(|&b| b == field)?;
    Some(
        ID_TRAILER_FIELDS[..i]
            .iter()
            .filter(|&&b| sample_type & b != 0)
            .count()
            * 8,
    )
}

impl SampleId {
    /// Reads the trailer at the end of `body` (the record without its header),
    /// laid out as `sample_type` says; `None` if the body is shorter than the trailer.
    pub fn parse(body: &[u8], sample_type: u64, e: Endian) -> Option<SampleId> {
        let size = id_trailer_size(sample_type);
        let trailer = body.get(body.len().checked_sub(size)?..)?;
        let mut c = Cursor::new(trailer, e, 0);
        let mut s = SampleId::default();
        if sample_type & st::TID != 0 {
            s.pid = c.u32("").ok();
            s.tid = c.u32("").ok();
        }
        if sample_type & st::TIME != 0 {
            s.time = c.u64("").ok();
        }
        if sample_type & st::ID != 0 {
            s.id = c.u64("").ok();
        }
        if sample_type & st::STREAM_ID != 0 {
            c.u64("").ok();
        }
        if sample_type & st::CPU != 0 {
            s.cpu = c.u32("").ok();
            c.u32("").ok();
        }
        if sample_type & st::IDENTIFIER != 0 {
            s.id = c.u64("").ok();
        }
        Some(s)
    }
}
