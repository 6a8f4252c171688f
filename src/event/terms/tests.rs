use super::*;
use crate::event::events::Terms;
use crate::format::attr::TYPE_TRACEPOINT;

fn tracepoint(terms: &str) -> Result<EventSpec, OptionError> {
    let mut e = EventSpec::new("sched:sched_switch", TYPE_TRACEPOINT, 1);
    tracepoint_terms(&mut e, terms, &format!("sched:sched_switch/{terms}/")).map(|_| e)
}

fn err(r: Result<EventSpec, OptionError>) -> String {
    r.expect_err("refused").to_string()
}

#[test]
fn tracepoints_take_perfs_sampling_terms() {
    let e = tracepoint("max-stack=3").unwrap();
    assert_eq!((e.terms.max_stack, e.terms.call_graph), (3, None));
    let e = tracepoint("max-stack=3,call-graph=fp").unwrap();
    assert_eq!(e.terms.call_graph, Some(CallGraph::FramePointer));
    let e = tracepoint("call-graph=dwarf,max-stack=8").unwrap();
    assert_eq!(e.terms.call_graph, Some(CallGraph::Dwarf(8192)));
    // perf rounds the dump size up to 8 bytes.
    assert_eq!(tracepoint("stack-size=9").unwrap().terms.stack_size, 16);
    assert_eq!(
        tracepoint("call-graph=no").unwrap().terms.call_graph,
        Some(CallGraph::None)
    );
    assert_eq!(tracepoint("inherit").unwrap().terms.inherit, Some(true));
    assert_eq!(tracepoint("inherit=0").unwrap().terms.inherit, Some(false));
    assert_eq!(tracepoint("no-inherit").unwrap().terms.inherit, Some(false));
    assert_eq!(
        tracepoint("no-inherit=0").unwrap().terms.inherit,
        Some(true)
    );
    let e = tracepoint("nr=5,no-overwrite").unwrap();
    assert_eq!(e.terms, Terms::default(), "checked, and nothing to record");
    assert_eq!(e.sampling, None, "a tracepoint's period is its own");
}

#[test]
fn tracepoints_refuse_what_perf_refuses_there_and_say_what_they_take() {
    for t in [
        "period=3",
        "freq=10",
        "name=x",
        "time=0",
        "ratio-to-prev=2",
        "config=1",
    ] {
        let m = err(tracepoint(t));
        assert!(
            m.contains("a tracepoint takes no term")
                && m.contains("call-graph, stack-size, max-stack"),
            "{t}: {m}"
        );
    }
    assert!(err(tracepoint("overwrite")).contains("--flight-recorder"));
    assert!(err(tracepoint("call-graph=bogus")).contains("use fp, dwarf[,SIZE] or lbr"));
    assert!(err(tracepoint("call-graph")).contains("takes fp, dwarf, lbr or no"));
    assert!(err(tracepoint("stack-size=70000")).contains("at most 65528 bytes"));
    assert!(err(tracepoint("max-stack=x")).contains("takes a number"));
    assert!(err(tracepoint("max-stack=100000")).contains("perf_event_max_stack"));
}

#[test]
fn other_events_take_the_sampling_terms_and_perfs_checked_only_ones() {
    let e = EventSpec::parse("cpu-clock/call-graph=dwarf,stack-size=4096,max-stack=8/").unwrap();
    assert_eq!(
        (e.terms.call_graph, e.terms.stack_size, e.terms.max_stack),
        (Some(CallGraph::Dwarf(8192)), 4096, 8)
    );
    assert_eq!(
        e.name,
        "cpu-clock/call-graph=dwarf,stack-size=4096,max-stack=8/"
    );
    let e = EventSpec::parse("task-clock/period=1000,no-inherit/").unwrap();
    assert_eq!(
        (e.sampling, e.terms.inherit),
        (Some(Sampling::Period(1000)), Some(false))
    );
    for ok in [
        "cpu-clock/percore/",
        "cpu-clock/metric-id=x/",
        "cpu-clock/time=1/",
        "cpu-clock/nr=2/",
    ] {
        assert_eq!(
            EventSpec::parse(ok).unwrap().terms,
            Terms::default(),
            "{ok}"
        );
    }
    let e = EventSpec::parse("cpu-clock/period=100000,ratio-to-prev=0.5/").unwrap();
    assert_eq!(e.terms.ratio_to_prev.as_deref(), Some("0.5"));
    // perf 7.3 refuses a whole number here (it lexes it as a number, not
    // the string it wants); perfz takes it.
    assert!(EventSpec::parse("cpu-clock/ratio-to-prev=2/").is_ok());
}

#[test]
fn what_perfz_cannot_record_is_refused_with_what_to_do() {
    let said = |s: &str| EventSpec::parse(s).unwrap_err().to_string();
    for (s, what) in [
        ("cpu-clock/ratio-to-prev=0/", "above 0"),
        ("cpu-clock/ratio-to-prev=-1/", "above 0"),
        ("cpu-clock/ratio-to-prev=x/", "above 0"),
        ("cpu-clock/ratio-to-prev/", "above 0"),
        ("cpu-clock/time=0/", "drop time=0"),
        ("cpu-clock/cpu=0/", "-C LIST"),
        ("cpu-clock/branch_type=any/", "-j FILTER"),
        ("cpu-clock/aux-output/", "AUX area"),
        ("cpu-clock/overwrite/", "--flight-recorder"),
        ("cpu-clock/percore=2/", "0 or 1"),
        ("cpu-clock/call-graph=dwarf,4096/", "stack-size=N"),
    ] {
        let m = said(s);
        assert!(m.contains(what), "{s}: {m}");
    }
}
