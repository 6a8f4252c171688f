//! Loss advice: when samples were lost, which dwarf size and which ring
//! size (`-m`) would have held the stream, from what was measured — how
//! much of their stack dumps the samples used (a dwarf sample reserves its
//! whole dump in the ring, whatever it used) and the worst single overflow
//! (the largest `lost` of one LOST record: what the kernel could not write
//! while the ring was full). Used by the record summary and `perfz stat`.

use serde::Serialize;

use crate::push::stack_use::StackUse;

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
    pub suggested_pages_with_dwarf: Option<usize>,
    /// The advice as sentences.
    pub text: String,
}

/// Pages (a power of two) for `bytes`.
fn pages_for(bytes: u64) -> usize {
    let page = crate::event::ring::page_size() as u64;
    (bytes.div_ceil(page).max(1).next_power_of_two()) as usize
}

fn kib(b: u64) -> String {
    format!("{:.1} KiB", b as f64 / 1024.0)
}

/// The advice for a stream whose samples used `used` of their stack dumps,
/// whose rings held `ring_bytes` each (None: not known, as for a finished
/// file), whose worst overflow lost `largest_loss` samples, and whose
/// records took `mean_sample` bytes on average (the reservation per sample
/// where there are no dwarf stacks).
pub fn advise(
    used: &StackUse,
    ring_bytes: Option<u64>,
    largest_loss: u64,
    mean_sample: u64,
) -> Advice {
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
        mean_sample
    };
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
    if largest_loss > 0 && per_sample > 0 {
        // What the kernel wanted to write while the ring was full, beside
        // what the ring held then; twice that, for the next burst.
        let burst = largest_loss.saturating_mul(per_sample);
        match ring_bytes {
            Some(ring) => {
                let need = ring.saturating_add(burst).saturating_mul(2);
                let pages = pages_for(need);
                a.suggested_pages = Some(pages);
                let mut s = format!(
                    "the worst overflow lost {largest_loss} samples at once: -m {pages} ({} per ring) holds it",
                    mib(pages)
                );
                if let Some(fit) = smaller {
                    let scaled = (need as f64 * (fit + DWARF_SAMPLE_OVERHEAD) as f64
                        / per_sample as f64) as u64;
                    let p = pages_for(scaled);
                    a.suggested_pages_with_dwarf = Some(p);
                    s += &format!(", or -m {p} with dwarf,{fit}");
                }
                said.push(s);
            }
            None => said.push(format!(
                "the worst overflow lost {largest_loss} samples at once ({} of ring at this \
                 sample size): a ring must hold that much more than it held then",
                kib(burst)
            )),
        }
    }
    a.text = said.join("; ");
    a
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
mod tests {
    use super::*;

    fn used(stacks: &[u64], dump: u64) -> StackUse {
        let mut u = StackUse::default();
        for &s in stacks {
            u.add(s, dump);
        }
        u
    }

    #[test]
    fn small_stacks_in_a_big_dump_get_a_smaller_size_and_a_ring() {
        let page = crate::event::ring::page_size() as u64;
        let a = advise(&used(&[3000, 5000, 5100], 32768), Some(128 * page), 800, 0);
        assert_eq!(a.suggested_dwarf_size, Some(6144));
        let r = a.reserve_ratio.unwrap();
        assert!((r - (32768.0 + 512.0) / (6144.0 + 512.0)).abs() < 1e-9);
        // 2 x (512 KiB + 800 x 33 280 B) = 54 MB -> 16384 pages of 4 KiB.
        assert_eq!(a.suggested_pages.unwrap() as u64 * page, (64 << 20));
        assert!(a.suggested_pages_with_dwarf.unwrap() < a.suggested_pages.unwrap());
        assert!(
            a.text.contains("dwarf,6144") && a.text.contains("-m "),
            "{}",
            a.text
        );
    }

    #[test]
    fn full_dumps_and_no_losses() {
        let a = advise(&used(&[8192, 8192], 8192), Some(1 << 19), 0, 0);
        assert_eq!(a.suggested_dwarf_size, None);
        assert!(a.text.contains("whole"), "{}", a.text);
        assert_eq!(a.suggested_pages, None);
        let none = advise(&StackUse::default(), None, 10, 0);
        assert!(none.text.is_empty());
        // Without dwarf stacks: the mean sample size stands in.
        let fp = advise(&StackUse::default(), Some(1 << 19), 1000, 200);
        assert!(fp.suggested_pages.is_some() && fp.suggested_dwarf_size.is_none());
    }
}
