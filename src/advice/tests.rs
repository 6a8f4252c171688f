//! The loss advice, from made-up streams.

use super::*;

fn timing(ring_bytes: u64) -> RingTiming<'static> {
    RingTiming {
        ring_bytes,
        rate: 1e9,
        max_fill: 0.6,
        cpu_waits_ms: &[],
        dwarf_size: 0,
    }
}

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
    let a = advise(
        &used(&[3000, 5000, 5100], 32768),
        Some(RingTiming {
            ring_bytes: 128 * page,
            rate: 128.0 * page as f64 * 1000.0, // the ring holds 1 ms
            max_fill: 1.0,
            cpu_waits_ms: &[],
            dwarf_size: 0,
        }),
        800,
        Mix::samples(0),
    );
    assert!((a.ring_holds_ms.unwrap() - 1.0).abs() < 1e-9);
    assert!((a.drain_late_ms.unwrap() - 0.5).abs() < 1e-9);
    assert!(
        a.text.contains("held 1.0 ms") && a.text.contains("more than 0.5 ms"),
        "{}",
        a.text
    );
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
fn a_ring_smaller_than_one_sample_is_said_so_and_nothing_else() {
    let page = crate::event::ring::page_size() as u64;
    let a = advise(
        &used(&[3000, 32768], 32768),
        Some(RingTiming {
            ring_bytes: 8 * page,
            rate: 1000.0,
            max_fill: 1.0,
            cpu_waits_ms: &[0.01],
            dwarf_size: 0,
        }),
        40_000,
        Mix::samples(0),
    );
    assert!(
        a.text
            .contains("a ring of 32.0 KiB cannot hold one sample of 32.5 KiB"),
        "{}",
        a.text
    );
    // 16 x 33 280 B = 520 KiB -> 1 MiB of 4 KiB pages.
    assert_eq!(a.suggested_pages.unwrap() as u64 * page, 1 << 20);
    assert!(a.text.contains("dwarf,31744 fits one"), "{}", a.text);
    assert!(
        !a.text.contains("held") && !a.text.contains("-r"),
        "{}",
        a.text
    );
}

#[test]
fn a_drain_kept_off_its_cpu_is_told_of_r_and_one_woken_late_of_the_ring() {
    let page = crate::event::ring::page_size() as u64;
    let with_waits = |w: &[f64]| {
        advise(
            &StackUse::default(),
            Some(RingTiming {
                ring_bytes: 128 * page,
                rate: 128.0 * page as f64 * 1000.0, // the ring holds 1 ms
                max_fill: 1.0,
                cpu_waits_ms: w,
                dwarf_size: 0,
            }),
            20,
            Mix::samples(4096),
        )
    };
    // Two of three timed losses came after waits past half the ring.
    let held = with_waits(&[4.0, 0.01, 0.7]);
    assert_eq!(held.drain_cpu_wait_ms, Some(4.0));
    assert_eq!((held.losses_timed, held.losses_after_a_wait), (3, 2));
    assert!(
        held.text.contains("before 2 of the 3 losses it timed")
            && held
                .text
                .contains("more than 0.5 ms for its CPU (up to 4.0 ms)")
            && held.text.contains("-r PRIO lets the drain take its CPU"),
        "{}",
        held.text
    );
    let late = with_waits(&[0.02, 0.01]);
    assert_eq!(late.losses_after_a_wait, 0);
    assert!(
        late.text
            .contains("did not wait for its CPU before the 2 losses it timed (at most 0.02 ms")
            && late.text.contains("not -r"),
        "{}",
        late.text
    );
    let untimed = with_waits(&[]);
    assert_eq!(untimed.drain_cpu_wait_ms, None);
    assert!(
        untimed.text.contains("-r PRIO runs the drain first"),
        "{}",
        untimed.text
    );
}

#[test]
fn full_dumps_and_no_losses() {
    let a = advise(
        &used(&[8192, 8192], 8192),
        Some(timing(1 << 19)),
        0,
        Mix::samples(0),
    );
    assert_eq!(a.suggested_dwarf_size, None);
    assert!(a.text.contains("whole"), "{}", a.text);
    assert_eq!(a.suggested_pages, None);
    let none = advise(&StackUse::default(), None, 10, Mix::samples(0));
    assert!(none.text.is_empty());
    // Without dwarf stacks: the mean sample size stands in.
    let fp = advise(
        &StackUse::default(),
        Some(timing(1 << 19)),
        1000,
        Mix::samples(200),
    );
    assert!(fp.suggested_pages.is_some() && fp.suggested_dwarf_size.is_none());
}

#[test]
fn a_loss_in_a_switch_stream_counts_its_small_records_as_small() {
    // --off-cpu with dwarf stacks: of every three records, one a
    // sample with its dump, two SWITCH records.
    let stacks = used(&[8192, 8192], 8192);
    let ring = 1 << 22;
    let only = advise(&stacks, Some(timing(ring)), 3000, Mix::samples(0));
    let mix = Mix::of(3 * 1000, 3, 1);
    let mixed = advise(&stacks, Some(timing(ring)), 3000, mix);
    let (p_only, p_mixed) = (
        only.suggested_pages.unwrap(),
        mixed.suggested_pages.unwrap(),
    );
    // 3000 dumps (26 MB) want 16 MiB rings; 1000 dumps and 2000 small
    // records about a third of that.
    assert!(p_mixed < p_only, "{p_mixed} {p_only}");
    assert!(
        p_mixed * 4096 >= 2 * (ring as usize + 1000 * 8704),
        "{p_mixed}"
    );
    assert!(mixed.text.contains("3000 records"), "{}", mixed.text);
    assert!(only.text.contains("3000 samples"), "{}", only.text);
}
