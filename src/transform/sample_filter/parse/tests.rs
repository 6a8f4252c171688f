use super::*;

fn p(s: &str) -> Result<Filter, String> {
    parse(s, |path| if path == "/" { 1 } else { 0 })
}

fn cmp(term: Term, op: Op, value: u64) -> Cmp {
    Cmp { term, op, value }
}

#[test]
fn perfs_shell_test_filters_parse() {
    assert_eq!(
        p("period > 1").unwrap().groups,
        [[cmp(Term::Period, Op::Gt, 1)]]
    );
    assert_eq!(
        p("ip < 0xffffffff00000000").unwrap().groups,
        [[cmp(Term::Ip, Op::Lt, 0xffff_ffff_0000_0000)]]
    );
    assert_eq!(
        p("period > 1000 , cpu > 0 || ip > 0").unwrap().groups,
        vec![
            vec![cmp(Term::Period, Op::Gt, 1000)],
            vec![cmp(Term::Cpu, Op::Gt, 0), cmp(Term::Ip, Op::Gt, 0)]
        ]
    );
    assert_eq!(
        p("cgroup == /").unwrap().groups,
        [[cmp(Term::Cgroup, Op::Eq, 1)]]
    );
    assert_eq!(
        p("mem_op == load, mem_dtlb & l1_hit,uid!=0")
            .unwrap()
            .groups,
        vec![
            vec![cmp(Term::Mem(1), Op::Eq, 2)],
            vec![cmp(Term::Mem(6), Op::And, 0x0a)],
            vec![cmp(Term::Uid, Op::Ne, 0)]
        ]
    );
    for (s, op) in [
        ("==", Op::Eq),
        ("!=", Op::Ne),
        (">", Op::Gt),
        (">=", Op::Ge),
        ("<", Op::Lt),
        ("<=", Op::Le),
        ("&", Op::And),
    ] {
        assert_eq!(
            p(&format!("tid{s}7")).unwrap().groups,
            [[cmp(Term::Tid, op, 7)]]
        );
    }
}

#[test]
fn errors_are_perfs() {
    assert_eq!(
        p("foo > 1").unwrap_err(),
        "perf_bpf_filter: Unexpected filter ident: foo\n\
         perf_bpf_filter: syntax error, unexpected BFT_ERROR, expecting BFT_SAMPLE or BFT_SAMPLE_PATH"
    );
    assert_eq!(
        p("ip > x").unwrap_err(),
        "perf_bpf_filter: Unexpected filter input: x\n\
         perf_bpf_filter: syntax error, unexpected BFT_ERROR, expecting BFT_NUM"
    );
    assert_eq!(
        p("ip 1").unwrap_err(),
        "perf_bpf_filter: syntax error, unexpected BFT_NUM, expecting BFT_OP"
    );
    assert_eq!(
        p("").unwrap_err(),
        "perf_bpf_filter: syntax error, unexpected end of file, expecting BFT_SAMPLE or BFT_SAMPLE_PATH"
    );
    assert!(p("ip > 1 ip")
        .unwrap_err()
        .contains("unexpected BFT_SAMPLE"));
    assert!(p("{ip > 1}")
        .unwrap_err()
        .contains("Unexpected filter input: {"));
    assert!(p("ip > 99999999999999999999")
        .unwrap_err()
        .contains("unexpected BFT_ERROR"));
    assert_eq!(
        p("cgroup > /").unwrap_err(),
        "perf_bpf_filter: cgroup accepts '==' or '!=' only"
    );
    assert!(p("ip > 1 | ip < 2").unwrap_err().contains("input: |"));
}

#[test]
fn no_input_panics() {
    for s in [
        "é",
        "0x",
        "ip>0x",
        "cgroup ==",
        "ip >= ,",
        "||",
        "ip == 1 ||",
    ] {
        let _ = p(s);
    }
}
