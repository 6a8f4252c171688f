use super::*;
use crate::format::attr::TYPE_TRACEPOINT;

fn one(s: &str) -> EventSpec {
    EventSpec::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

#[test]
fn lists_split_at_top_level_commas() {
    assert_eq!(split_top("a,b").unwrap(), vec!["a", "b"]);
    assert_eq!(split_top("{a,b}:S,c").unwrap(), vec!["{a,b}:S", "c"]);
    assert_eq!(
        split_top("msr/event=1,config1=2/,c").unwrap(),
        vec!["msr/event=1,config1=2/", "c"]
    );
    assert!(split_top("{a,b").is_err());
    assert!(split_top("a}").is_err());
    assert!(split_top("msr/event=1").is_err());
}

#[test]
fn modifiers_mean_what_they_mean_in_perf() {
    let e = one("cycles:u");
    assert!(!e.exclude_user && e.exclude_kernel && e.exclude_hv);
    let e = one("cpu-clock:uk");
    assert!(!e.exclude_user && !e.exclude_kernel && e.exclude_hv);
    let e = one("cycles:pp");
    assert_eq!(e.precise, 2);
    assert!(e.exclude_guest && !e.exclude_user);
    let e = one("cycles:G");
    assert!(!e.exclude_guest && e.exclude_host);
    let e = one("cycles:H");
    assert!(e.exclude_guest && !e.exclude_host);
    assert_eq!(one("cycles:P").precise, 3);
    assert!(EventSpec::parse("cycles:pppp").is_err());
    let err = EventSpec::parse("cycles:x").unwrap_err().to_string();
    assert!(err.contains("modifier \"x\""), "{err}");
    assert!(EventSpec::parse("cycles:S")
        .unwrap_err()
        .to_string()
        .contains("{a,b}:S"));
}

#[test]
fn cache_and_raw_events() {
    let e = one("L1-dcache-load-misses");
    assert_eq!((e.type_, e.config), (TYPE_HW_CACHE, 0x10000));
    assert_eq!(one("LLC-loads").config, 2);
    assert_eq!(one("dTLB-store-misses").config, 3 | 1 << 8 | 1 << 16);
    assert_eq!(one("branch-load-misses").config, 5 | 1 << 16);
    assert_eq!(one("L1-icache-prefetches").config, 1 | 2 << 8);
    let e = one("r1a8");
    assert_eq!((e.type_, e.config), (TYPE_RAW, 0x1a8));
    assert!(EventSpec::parse("L1-dcache-frobs").is_err());
    assert!(EventSpec::parse("rxyz").is_err());
}

#[test]
fn per_event_terms_and_groups() {
    let e = one("cpu-clock/period=10000/");
    assert_eq!(e.sampling, Some(Sampling::Period(10000)));
    assert!(!e.sampling_is_default);
    let e = one("task-clock/freq=999,name=tc/:u");
    assert_eq!(e.sampling, Some(Sampling::Frequency(999)));
    assert_eq!(e.name, "task-clock/freq=999,name=tc/:u");
    assert!(EventSpec::parse("cpu-clock/bogus=1/")
        .unwrap_err()
        .to_string()
        .contains("unknown term"));
    let mut g = 0;
    let v = parse_events("{cpu-clock,task-clock}:S,page-faults", &mut g).unwrap();
    assert_eq!(v.len(), 3);
    assert_eq!(
        v[0].group,
        Some(Group {
            id: 0,
            leader: true,
            sample_read: true
        })
    );
    assert_eq!(
        v[1].group,
        Some(Group {
            id: 0,
            leader: false,
            sample_read: true
        })
    );
    assert_eq!(v[2].group, None);
    assert_eq!(g, 1);
    let v = parse_events("{cpu-clock:u,task-clock}:k", &mut g).unwrap();
    assert!(
        !v[0].exclude_user && !v[0].exclude_kernel,
        "the group's :k adds to :u"
    );
    assert!(!v[1].exclude_kernel && v[1].exclude_user);
    assert!(parse_events("{a,{b}}", &mut g).is_err());
}

#[test]
fn pmus_from_sysfs() {
    // The software PMU has no format files: config= works, others do not.
    let e = one("software/config=3/");
    assert_eq!((e.type_, e.config), (1, 3));
    if let Some(msr) = Pmu::load("msr") {
        if msr.events.contains_key("tsc") {
            let e = one("msr/tsc/");
            assert_eq!(e.type_, msr.type_);
            let err = EventSpec::parse("msr/nope/").unwrap_err().to_string();
            assert!(err.contains("its events:") && err.contains("tsc"), "{err}");
        }
    }
    let err = EventSpec::parse("frobnicate").unwrap_err().to_string();
    assert!(err.contains("software/.../"), "{err}");
}

#[test]
fn tracepoints_and_probes_take_terms_after_their_name() {
    if let Err(e) = tracefs::root() {
        eprintln!("tracepoint terms not checked: no tracefs here ({e}); run as root");
        return;
    }
    let e = one("sched:sched_switch/max-stack=3,call-graph=fp/");
    assert_eq!(
        e.name, "sched:sched_switch",
        "perf names it without its terms"
    );
    assert_eq!(e.type_, TYPE_TRACEPOINT);
    assert_eq!(e.sampling, Some(Sampling::Period(1)));
    assert_eq!(e.terms.max_stack, 3);
    assert_eq!(
        e.terms.call_graph,
        Some(crate::event::CallGraph::FramePointer)
    );
    let e = one("sched:sched_switch/max-stack=3/:k");
    assert_eq!(e.name, "sched:sched_switch:k");
    assert!(e.exclude_user && !e.exclude_kernel);
    let v = parse_events("sched:sched_switch/max-stack=3/,cpu-clock", &mut 0).unwrap();
    assert_eq!((v.len(), v[1].terms.max_stack), (2, 0));
    let v = parse_events("{cpu-clock,sched:sched_switch/call-graph=fp/}:S", &mut 0).unwrap();
    assert!(v[1].group.is_some_and(|g| !g.leader && g.sample_read));
    // A glob: each tracepoint it names takes the terms.
    let v = parse_events("sched:sched_switc*/max-stack=2/", &mut 0).unwrap();
    assert!(!v.is_empty() && v.iter().all(|e| e.terms.max_stack == 2));
    let err = EventSpec::parse("sched:sched_switch/period=3/").unwrap_err();
    assert!(
        err.to_string()
            .contains("a tracepoint takes no term `period`"),
        "{err}"
    );
    let err = EventSpec::parse("nosuchsys:x/max-stack=3/").unwrap_err();
    assert!(matches!(err, OptionError::UnknownEvent { .. }), "{err}");
}
