//! `ratio-to-prev=R` (perf 6.16+): sample an event at R times the period of
//! the group member before it, and on Intel's auto counter reload PMUs
//! reload both counters together, so that a sample is taken only where the
//! one event's rate over the other's passes the ratio (perf's
//! Documentation/intel-acr.txt). perf applies it when it configures the
//! events (evsel__apply_ratio_to_prev), and so does perfz, in order:
//!
//! - the event must follow another in its group, on the same core PMU;
//!   else perf says why and records the events as they are, and so does
//!   perfz (a note);
//! - where the previous event has a fixed period, this one's becomes it
//!   times R; else, where this one has, the previous one's becomes it over
//!   R; else `-c N` gives the previous one N and this one N times R; else
//!   nothing changes ("period term or count (-c) must be set");
//! - on x86 (perf's arch_evsel__apply_ratio_to_prev) the PMU must have an
//!   `acr_mask` format term in config2, and the previous event no config2
//!   yet: the previous event's config2 becomes the bit of this one's index
//!   in the group, this one's that bit and the previous one's. Where not,
//!   the periods stay set and the note says so, as perf's.

use super::attr_build::{build_attr, AttrOptions};
use super::events::{EventSpec, Sampling};
use super::pmu;
use crate::format::attr::sample_type as st;

/// `events` with their `ratio-to-prev` terms applied, and perf's word for
/// each one not applied (each says what to do).
pub fn apply(events: &[EventSpec], o: &AttrOptions) -> (Vec<EventSpec>, Vec<String>) {
    let mut out = events.to_vec();
    let mut notes = Vec::new();
    for i in 0..out.len() {
        let Some(r) = out[i].terms.ratio_to_prev.clone() else {
            continue;
        };
        if let Err(why) = apply_one(&mut out, i, &r, o) {
            notes.push(format!("{}: {why}", out[i].name));
        }
    }
    (out, notes)
}

fn apply_one(ev: &mut [EventSpec], i: usize, r: &str, o: &AttrOptions) -> Result<(), String> {
    // Checked when the term was parsed.
    let rtp: f64 = r.parse().unwrap_or(1.0);
    if i == 0 || ev[i].group.is_none_or(|g| g.leader) {
        return Err(format!(
            "Invalid use of ratio-to-prev term without preceding element in group; {NOT_APPLIED} (put the event after another in a {{...}} group)"
        ));
    }
    let this_pmu = pmu::of_type(ev[i].type_)
        .filter(|p| pmu::is_core(&p.name))
        .ok_or_else(|| {
            format!("Event using ratio-to-prev term must have a core PMU; {NOT_APPLIED} (pair hardware events: cycles, instructions, cpu/.../)")
        })?;
    if pmu::of_type(ev[i - 1].type_).map(|p| p.name) != Some(this_pmu.name.clone()) {
        return Err(format!(
            "Compared events (\"{}\", \"{}\") must have same PMU; {NOT_APPLIED}",
            ev[i].name,
            ev[i - 1].name
        ));
    }
    periods(ev, i, rtp, o)?;
    if cfg!(target_arch = "x86_64") {
        reload_masks(ev, i, &this_pmu)?;
    }
    Ok(())
}

/// What a note adds where perf applies no part of the ratio.
const NOT_APPLIED: &str = "the events are recorded without the ratio";

/// The periods of event `i` and the one before it, `rtp` apart.
fn periods(ev: &mut [EventSpec], i: usize, rtp: f64, o: &AttrOptions) -> Result<(), String> {
    let attr = |e: &EventSpec| build_attr(e, o, false);
    let (prev, this) = (attr(&ev[i - 1]), attr(&ev[i]));
    // A fixed period is one perf samples no PERIOD for.
    let fixed = |a: &crate::format::Attr| a.sample_type() & st::PERIOD == 0;
    let set = |e: &mut EventSpec, p: f64| {
        e.sampling = Some(Sampling::Period(p as u64));
        e.sampling_is_default = false;
    };
    if fixed(&prev) {
        set(&mut ev[i], prev.sample_period() as f64 * rtp);
    } else if fixed(&this) {
        set(&mut ev[i - 1], this.sample_period() as f64 / rtp);
    } else if let (true, Sampling::Period(c)) = (o.sampling_explicit, o.sampling) {
        set(&mut ev[i - 1], c as f64);
        set(&mut ev[i], c as f64 * rtp);
    } else {
        return Err(format!(
            "Event period term or count (-c) must be set when using ratio-to-prev term.; {NOT_APPLIED} (give the event period=N, or -c N)"
        ));
    }
    Ok(())
}

/// Intel's auto counter reload masks (config2) of event `i` and the one
/// before it, from `i`'s index in its group.
fn reload_masks(ev: &mut [EventSpec], i: usize, p: &pmu::Pmu) -> Result<(), String> {
    const PERIODS_ONLY: &str = "the periods are set by the ratio, without counter reload";
    if p.formats.get("acr_mask").is_none_or(|f| f.word != 2) {
        return Err(format!(
            "'{}' does not have acr_mask format support; {PERIODS_ONLY} (this CPU has no auto counter reload)",
            p.name
        ));
    }
    if ev[i - 1].config2 != 0 {
        return Err(format!(
            "'{}' has set config2 (acr_mask?) already, configuration not supported; {PERIODS_ONLY} (drop its acr_mask or config2 term)",
            ev[i - 1].name
        ));
    }
    let group = ev[i].group.map(|g| g.id);
    let idx = ev[..i]
        .iter()
        .filter(|e| e.group.map(|g| g.id) == group)
        .count() as u32;
    ev[i - 1].config2 = 1 << idx;
    ev[i].config2 = 1 << idx | 1 << (idx - 1);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::attr_build::ExtraAttr;
    use crate::event::events::CallGraph;
    use crate::event::parse::parse_events;

    fn options(sampling: Sampling, explicit: bool) -> AttrOptions {
        AttrOptions {
            sampling,
            call_graph: CallGraph::None,
            with_id: true,
            with_cpu: false,
            inherit: true,
            enable_on_exec: true,
            switch_events: false,
            build_id: false,
            sampling_explicit: explicit,
            clockid: None,
            with_period: false,
            extra: ExtraAttr::default(),
        }
    }

    fn events(s: &str) -> Vec<EventSpec> {
        parse_events(s, &mut 0).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn a_ratio_needs_an_event_before_it_in_its_group() {
        let o = options(Sampling::Frequency(4000), false);
        for s in [
            "cpu-clock,task-clock/period=100000,ratio-to-prev=0.5/",
            "{cpu-clock/ratio-to-prev=0.5/}",
        ] {
            let ev = events(s);
            let (out, notes) = apply(&ev, &o);
            assert_eq!(out, ev, "{s}: nothing changes");
            assert_eq!(notes.len(), 1, "{s}: {notes:?}");
            assert!(
                notes[0].contains(
                    "Invalid use of ratio-to-prev term without preceding element in group"
                ),
                "{notes:?}"
            );
        }
    }

    #[test]
    fn a_ratio_between_software_events_is_perfs_core_pmu_complaint() {
        // perf 7.3 on this machine: "Event using ratio-to-prev term must
        // have a core PMU", and the attrs as without the term.
        let o = options(Sampling::Frequency(4000), false);
        let ev = events("{cpu-clock,task-clock/period=100000,ratio-to-prev=0.5/}");
        let (out, notes) = apply(&ev, &o);
        assert_eq!(out, ev);
        assert!(notes[0].contains("must have a core PMU"), "{notes:?}");
    }

    #[test]
    fn periods_follow_the_ratio_as_perfs() {
        // The core PMU checks aside (this machine may have none): the
        // period rules, on specs whose PMU test is skipped.
        let o = options(Sampling::Frequency(4000), false);
        let c = options(Sampling::Period(1000), true);
        let mut ev = events("{cpu-clock,task-clock/period=100000,ratio-to-prev=0.5/}");
        let this = build_attr(&ev[1], &o, false);
        assert_eq!(
            this.sample_type() & st::PERIOD,
            0,
            "a period term: no PERIOD"
        );
        periods(&mut ev, 1, 0.5, &o).unwrap();
        assert_eq!(ev[0].sampling, Some(Sampling::Period(200000)));
        let mut ev = events("{cpu-clock/period=3000/,task-clock/ratio-to-prev=2.5/}");
        periods(&mut ev, 1, 2.5, &o).unwrap();
        assert_eq!(ev[1].sampling, Some(Sampling::Period(7500)));
        let mut ev = events("{cpu-clock/freq=10/,task-clock/freq=20,ratio-to-prev=2/}");
        assert!(periods(&mut ev, 1, 2.0, &o).unwrap_err().contains(
            "Event period term or count (-c) must be set when using ratio-to-prev term."
        ));
        periods(&mut ev, 1, 2.0, &c).unwrap();
        assert_eq!(ev[0].sampling, Some(Sampling::Period(1000)));
        assert_eq!(ev[1].sampling, Some(Sampling::Period(2000)));
    }
}
