//! A request cut under a size weighs what the whole does.

use super::*;

/// What each profile's samples of `reqs` weigh, by event.
fn totals(reqs: &[ExportProfilesServiceRequest]) -> FxHashMap<String, i64> {
    let mut t = FxHashMap::default();
    for r in reqs {
        let d = r.dictionary.as_ref().unwrap();
        assert_eq!(
            (
                d.string_table[0].as_str(),
                d.stack_table[0].location_indices.len()
            ),
            ("", 0)
        );
        for p in &r.resource_profiles[0].scope_profiles[0].profiles {
            let event = &d.attribute_table[p.attribute_indices[0] as usize].value;
            let Some(any_value::Value::StringValue(e)) = event.as_ref().unwrap().value.clone()
            else {
                panic!("no event")
            };
            *t.entry(e).or_default() += p.samples.iter().map(|s| s.values[0]).sum::<i64>();
        }
    }
    t
}

#[test]
fn a_request_over_the_limit_is_cut_by_profile_then_by_samples_and_weighs_the_same() {
    let names: Vec<Arc<str>> = (0..400).map(|i| format!("function_{i}").into()).collect();
    let frames: Vec<Named<'_>> = (0..400)
        .map(|i| Named {
            ip: 0x1000 + i,
            funcs: vec![names[i as usize].clone()],
            map: None,
            module: None,
            kernel: false,
        })
        .collect();
    let (mut g, o) = (Otlp::default(), FoldOptions::default());
    let comm: Arc<str> = "worker".into();
    for i in 0..2000u32 {
        let ids = [i % 400, (i * 7) % 400, 3];
        let s = Sampled {
            comm: &comm,
            process: &comm,
            pid: 1,
            tid: i % 5,
            ids: &ids,
            slot: (i % 2) as usize,
            time: 0,
            period: Some(1000 + i as u64),
        };
        g.add(&o, &s);
    }
    let kind = |e: &str| ProfileKind {
        event: e.into(),
        value: ("cpu".into(), "nanoseconds".into()),
        period: (("cpu".into(), "nanoseconds".into()), 1000),
    };
    let about = Described {
        kinds: vec![kind("a"), kind("b")],
        time_nanos: 1,
        duration_nanos: 2,
        host: "h".into(),
        service: None,
    };
    let p = g.finish(&frames, about);
    let whole = p.whole();
    assert_eq!(p.bounded(usize::MAX).len(), 1);
    let cut = p.bounded(8 << 10);
    assert!(cut.len() > 2, "{} requests", cut.len());
    let cut: Vec<ExportProfilesServiceRequest> = cut
        .iter()
        .map(|b| {
            assert!(b.len() <= 8 << 10, "{} bytes", b.len());
            ExportProfilesServiceRequest::decode(&b[..]).unwrap()
        })
        .collect();
    assert_eq!(totals(&cut), totals(&[whole]));
    let service = &cut[0].resource_profiles[0]
        .resource
        .as_ref()
        .unwrap()
        .attributes[1];
    assert_eq!(service.key, "service.name");
}
