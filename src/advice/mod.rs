//! Loss advice: when samples were lost, which dwarf size and which ring
//! size (`-m`) would have held the stream, from what was measured — how
//! much of their stack dumps the samples used (a dwarf sample reserves its
//! whole dump in the ring, whatever it used) and the worst single overflow
//! (the largest `lost` of one LOST record: what the kernel could not write
//! while the ring was full). Used by the record summary and `perfz stat`.
//!
//! The inputs: the stack use (`transform::stack_use`), the worst loss (a lost
//! small record, such as a SWITCH, is counted small: `Mix`) and the ring
//! timing; and whether the drain had waited for its CPU before its losses
//! (session/cpu_wait.rs): then `-r PRIO` is the lever, else a bigger ring.
//! tests.rs checks it on made-up streams.

use serde::Serialize;

use crate::transform::stack_use::StackUse;

/// Bytes a dwarf sample reserves besides its stack dump: the header, the
/// fixed fields, the user registers (17 on x86-64) and a kernel chain.
pub const DWARF_SAMPLE_OVERHEAD: u64 = 512;

/// What would have held the stream.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Advice {
    /// The dwarf size recorded with (the dump size), 0 without dwarf stacks.
    pub dwarf_size: u64,
    /// The most stack any sample used, and what 99 % of them used at most.
    pub stack_used_max: u64,
    /// Stack bytes that 99 % of the samples used at most.
    pub stack_used_p99: u64,
    /// A dwarf size that holds every stack seen (a multiple of 1 KiB),
    /// where it is smaller than the one recorded with.
    pub suggested_dwarf_size: Option<u64>,
    /// How much less ring a sample reserves with it.
    pub reserve_ratio: Option<f64>,
    /// Samples the worst single overflow lost.
    pub largest_loss: u64,
    /// Pages per ring that would have held the worst overflow twice over
    /// (at the recorded dwarf size, and at the suggested one).
    pub suggested_pages: Option<usize>,
    /// Pages per ring that would have held the worst overflow twice
    /// over at the suggested dwarf size.
    pub suggested_pages_with_dwarf: Option<usize>,
    /// How long one ring held this stream at its mean rate, and how late
    /// the drain came at worst: the fullest fill seen past the half-full
    /// mark where the kernel wakes the drain, in time at that rate (ms;
    /// None where the rate or the ring is unknown).
    pub ring_holds_ms: Option<f64>,
    /// How late the drain came at worst, in ms (see `ring_holds_ms`).
    pub drain_late_ms: Option<f64>,
    /// The longest the drain had waited, runnable, for its CPU before a
    /// loss (ms; None where no loss was timed), and how many of the losses
    /// it timed came after a wait long enough to overflow a ring.
    pub drain_cpu_wait_ms: Option<f64>,
    /// Losses whose drain wait was timed.
    pub losses_timed: usize,
    /// Of those, the losses after a wait long enough to overflow a ring.
    pub losses_after_a_wait: usize,
    /// The advice as sentences.
    pub text: String,
}

/// What the recorder measured of its rings' timing.
#[derive(Debug, Clone, Copy)]
pub struct RingTiming<'a> {
    /// Bytes one ring holds.
    pub ring_bytes: u64,
    /// Mean bytes a second into one ring.
    pub rate: f64,
    /// The fullest a ring was when the drain came to it (0..1).
    pub max_fill: f64,
    /// How long the drain had waited for its CPU before each loss it timed
    /// (ms; empty: none timed).
    pub cpu_waits_ms: &'a [f64],
    /// The dwarf dump size recorded with (0: no dwarf stacks): what a
    /// sample reserves even when no sample made it into the ring.
    pub dwarf_size: u64,
}

/// Pages (a power of two) for `bytes`.
fn pages_for(bytes: u64) -> usize {
    let page = crate::event::ring::page_size() as u64;
    (bytes.div_ceil(page).max(1).next_power_of_two()) as usize
}

fn kib(b: u64) -> String {
    format!("{:.1} KiB", b as f64 / 1024.0)
}

/// Bytes the kernel writes for a record that is not a sample (a SWITCH
/// with its sample_id trailer, a COMM, a small MMAP2): what a lost one of
/// those would have taken.
pub const SMALL_RECORD: u64 = 64;

/// What the ring's records were: their mean size, and the share of them
/// that were samples (the rest, such as `--off-cpu`'s and
/// `--switch-events`' SWITCH records, are small and are lost too).
#[derive(Debug, Clone, Copy)]
pub struct Mix {
    /// Bytes a record, on average.
    pub mean_record: u64,
    /// The share of the records that were samples (0..=1).
    pub sample_share: f64,
}

impl Mix {
    /// A stream of samples only, `mean` bytes each.
    pub fn samples(mean: u64) -> Mix {
        Mix {
            mean_record: mean,
            sample_share: 1.0,
        }
    }

    /// `records` in all of `bytes`, `samples` of them samples.
    pub fn of(bytes: u64, records: u64, samples: u64) -> Mix {
        Mix {
            mean_record: bytes / records.max(1),
            sample_share: if records == 0 {
                1.0
            } else {
                (samples as f64 / records as f64).min(1.0)
            },
        }
    }
}

/// The advice for a stream whose samples used `used` of their stack dumps,
/// whose rings were timed as `timing` (None: not known, as for a finished
/// file), whose worst overflow lost `largest_loss` records, and whose
/// records were `mix` (the mean record is the reservation per record
/// where there are no dwarf stacks; with them, a sample reserves its dump
/// and other records [`SMALL_RECORD`]).
pub fn advise(used: &StackUse, timing: Option<RingTiming>, largest_loss: u64, mix: Mix) -> Advice {
    let ring_bytes = timing.map(|t| t.ring_bytes);
    let mut a = Advice {
        dwarf_size: used.dump,
        stack_used_max: used.max,
        stack_used_p99: used.quantile(0.99),
        largest_loss,
        ..Default::default()
    };
    let mut said = Vec::new();
    let per_sample = if used.samples > 0 {
        used.dump + DWARF_SAMPLE_OVERHEAD
    } else {
        mix.mean_record
    };
    // What one lost record would have taken: with dwarf stacks, samples
    // and the small records in the stream's share.
    let per_lost = if used.samples > 0 {
        let share = mix.sample_share.clamp(0.0, 1.0);
        (per_sample as f64 * share + SMALL_RECORD as f64 * (1.0 - share)) as u64
    } else {
        per_sample
    };
    // A ring smaller than one dwarf sample loses every sample that takes
    // its whole dump: no timing explains that, and no other lever helps.
    let dump = used.dump.max(timing.map_or(0, |t| t.dwarf_size));
    if let Some(text) = ring_below_one_sample(ring_bytes, dump, &mut a) {
        a.text = text;
        return a;
    }
    let smaller = stack_fit(used, per_sample, &mut a, &mut said);
    if largest_loss > 0 && per_lost > 0 {
        let what = if mix.sample_share < 0.99 {
            "records (samples and the small records between them)"
        } else {
            "samples"
        };
        said.push(overflow(
            largest_loss,
            what,
            per_lost,
            per_sample,
            ring_bytes,
            smaller,
            &mut a,
        ));
    }
    if let Some(t) = timing.filter(|t| t.rate > 0.0 && t.ring_bytes > 0) {
        drain_timing(&t, largest_loss, &mut a, &mut said);
    }
    a.text = said.join("; ");
    a
}

/// Where a ring of `ring_bytes` cannot hold one dwarf sample with a
/// `dump`-byte stack dump: what to say, with the ring size (and the dwarf
/// size, where one fits) that helps set in `a`. None where it can, or
/// without dwarf stacks.
fn ring_below_one_sample(ring_bytes: Option<u64>, dump: u64, a: &mut Advice) -> Option<String> {
    let reserved = dump + DWARF_SAMPLE_OVERHEAD;
    let ring = ring_bytes.filter(|&r| dump > 0 && r < reserved)?;
    let pages = pages_for(reserved.saturating_mul(16));
    let fits = ring.saturating_sub(DWARF_SAMPLE_OVERHEAD) / 1024 * 1024;
    a.suggested_pages = Some(pages);
    let mut s = format!(
        "a ring of {} cannot hold one sample of {} (its {} stack dump and the rest): -m {pages} ({} per ring) holds 16 of them",
        kib(ring),
        kib(reserved),
        kib(dump),
        mib(pages)
    );
    if fits >= 1024 {
        a.suggested_dwarf_size = Some(fits);
        s += &format!(", or --call-graph dwarf,{fits} fits one in this ring");
    }
    Some(s)
}

/// What the stacks used of their dumps says: a dwarf size that holds every
/// stack seen where it is smaller (returned), or that the dumps were full.
fn stack_fit(
    used: &StackUse,
    per_sample: u64,
    a: &mut Advice,
    said: &mut Vec<String>,
) -> Option<u64> {
    let mut smaller = None;
    if used.samples > 0 {
        // A KiB of headroom over the deepest stack seen.
        let fit = (used.max + 1024).div_ceil(1024) * 1024;
        if used.max >= used.dump {
            said.push(format!(
                "stacks filled their whole {} dump: a bigger dwarf size would unwind deeper",
                kib(used.dump)
            ));
        } else if fit < used.dump {
            let ratio = per_sample as f64 / (fit + DWARF_SAMPLE_OVERHEAD) as f64;
            a.suggested_dwarf_size = Some(fit);
            a.reserve_ratio = Some(ratio);
            smaller = Some(fit);
            said.push(format!(
                "stacks used at most {} of {} (99 % at most {}): --call-graph dwarf,{fit} \
                 reserves {ratio:.1}x less ring per sample",
                kib(used.max),
                kib(used.dump),
                kib(a.stack_used_p99),
            ));
        }
    }
    smaller
}

/// What the worst overflow says: the pages per ring that would have held
/// it twice over (and with the smaller dwarf size `smaller`), where the
/// ring's size is known. `largest_loss` records (`what` they were) of
/// `per_lost` bytes each; a sample reserves `per_sample`.
fn overflow(
    largest_loss: u64,
    what: &str,
    per_lost: u64,
    per_sample: u64,
    ring_bytes: Option<u64>,
    smaller: Option<u64>,
    a: &mut Advice,
) -> String {
    // What the kernel wanted to write while the ring was full, beside
    // what the ring held then; twice that, for the next burst.
    let burst = largest_loss.saturating_mul(per_lost);
    match ring_bytes {
        Some(ring) => {
            let need = ring.saturating_add(burst).saturating_mul(2);
            let pages = pages_for(need);
            a.suggested_pages = Some(pages);
            let mut s = format!(
                "the worst overflow lost {largest_loss} {what} at once: -m {pages} ({} per ring) holds it",
                mib(pages)
            );
            if let Some(fit) = smaller {
                let scaled =
                    (need as f64 * (fit + DWARF_SAMPLE_OVERHEAD) as f64 / per_sample as f64) as u64;
                let p = pages_for(scaled);
                a.suggested_pages_with_dwarf = Some(p);
                s += &format!(", or -m {p} with dwarf,{fit}");
            }
            s
        }
        None => format!(
            "the worst overflow lost {largest_loss} {what} at once ({} of ring at this \
             record size): a ring must hold that much more than it held then",
            kib(burst)
        ),
    }
}

/// What the rings' timing says: how long a ring held the stream, how late
/// the drain came, and whether it had waited for its CPU before the losses.
fn drain_timing(t: &RingTiming<'_>, largest_loss: u64, a: &mut Advice, said: &mut Vec<String>) {
    let holds = t.ring_bytes as f64 / t.rate * 1000.0;
    let late = (t.max_fill - 0.5).max(0.0) * holds;
    a.ring_holds_ms = Some(holds);
    a.drain_late_ms = Some(late);
    if largest_loss > 0 {
        said.push(format!(
            "a ring held {holds:.1} ms of this stream at its mean rate: the kernel wakes the \
             drain at half full, so a drain away more than {:.1} ms loses samples (the fullest \
             ring seen when drained: {:.0} %)",
            holds / 2.0,
            t.max_fill * 100.0
        ));
        let timed = t.cpu_waits_ms;
        let waited = timed.iter().filter(|&&w| w >= holds / 2.0).count();
        let max = timed.iter().copied().reduce(f64::max);
        a.drain_cpu_wait_ms = max;
        a.losses_timed = timed.len();
        a.losses_after_a_wait = waited;
        said.push(match max {
            // Woken in time, but another task kept the CPU (a kernel
            // thread that does not yield, a busier task).
            Some(w) if waited > 0 => format!(
                "before {waited} of the {} losses it timed, the drain had waited more than \
                 {:.1} ms for its CPU (up to {w:.1} ms) while another task held it: -r PRIO \
                 lets the drain take its CPU",
                timed.len(),
                holds / 2.0
            ),
            Some(w) => format!(
                "the drain did not wait for its CPU before the {} losses it timed (at most \
                 {w:.2} ms): it was woken late or busy, so a bigger ring is the lever, not -r",
                timed.len()
            ),
            None => "-r PRIO runs the drain first".to_string(),
        });
    }
}

fn mib(pages: usize) -> String {
    let b = pages * crate::event::ring::page_size();
    if b >= 1 << 20 {
        format!("{} MiB", b >> 20)
    } else {
        format!("{} KiB", b >> 10)
    }
}

#[cfg(test)]
mod tests;
