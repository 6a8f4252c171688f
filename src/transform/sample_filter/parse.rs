//! perf's sample-filter grammar (tools/perf/util/bpf-filter.l and .y):
//! `FIELD OP NUMBER` terms joined by `,` (and), each term a `||` group of
//! comparisons (or, binding tighter than `,`, without braces, as perf's
//! grammar has it); `cgroup == PATH`. Errors in perf's words: the lexer's
//! `perf_bpf_filter: Unexpected filter ...` and bison's `syntax error,
//! unexpected ..., expecting ...`.

use super::fields::{self, Term};

/// A comparison operator (`&`: any bit in common).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `&`
    And,
}

impl Op {
    /// Whether `v` (the sample's) compares as asked with `to`.
    #[inline]
    pub fn holds(self, v: u64, to: u64) -> bool {
        match self {
            Op::Eq => v == to,
            Op::Ne => v != to,
            Op::Gt => v > to,
            Op::Ge => v >= to,
            Op::Lt => v < to,
            Op::Le => v <= to,
            Op::And => v & to != 0,
        }
    }
}

/// One comparison of a field with a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cmp {
    /// The field compared.
    pub term: Term,
    /// How.
    pub op: Op,
    /// With what (a cgroup path: its id).
    pub value: u64,
}

/// A parsed filter: a sample is kept where every group holds one
/// comparison that does (`,` joins groups, `||` the comparisons of one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    /// The groups, each a list of comparisons of which one must hold.
    pub groups: Vec<Vec<Cmp>>,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Sample(Term),
    Op(Op),
    Num(u64),
    Path(String),
    Or,
    Comma,
    /// A lexer error: what the lexer printed, if anything.
    Error(Option<String>),
    End,
}

impl Tok {
    /// The token as bison's verbose errors name it.
    fn bison(&self) -> &'static str {
        match self {
            Tok::Sample(Term::Cgroup) => "BFT_SAMPLE_PATH",
            Tok::Sample(_) => "BFT_SAMPLE",
            Tok::Op(_) => "BFT_OP",
            Tok::Num(_) => "BFT_NUM",
            Tok::Path(_) => "BFT_PATH",
            Tok::Or => "BFT_LOGICAL_OR",
            Tok::Comma => "','",
            Tok::Error(_) => "BFT_ERROR",
            Tok::End => "end of file",
        }
    }
}

/// perf's lexer over one filter string.
struct Lexer<'a> {
    s: &'a [u8],
    p: usize,
    /// After `cgroup OP`: the next word is a path.
    path_next: bool,
    last: Option<Tok>,
}

impl Lexer<'_> {
    fn text(&self, from: usize) -> String {
        String::from_utf8_lossy(&self.s[from..self.p]).into_owned()
    }

    fn error(&self, what: &str, from: usize) -> Tok {
        Tok::Error(Some(format!(
            "perf_bpf_filter: Unexpected filter {what}: {}",
            self.text(from)
        )))
    }

    fn take_while(&mut self, f: impl Fn(u8) -> bool) {
        while self.p < self.s.len() && f(self.s[self.p]) {
            self.p += 1;
        }
    }

    fn next(&mut self) -> Tok {
        let t = self.lex();
        self.path_next = matches!(
            (&self.last, &t),
            (Some(Tok::Sample(Term::Cgroup)), Tok::Op(_))
        );
        self.last = Some(t.clone());
        t
    }

    fn lex(&mut self) -> Tok {
        self.take_while(|c| c == b' ' || c == b'\t');
        let from = self.p;
        let Some(&c) = self.s.get(self.p) else {
            return Tok::End;
        };
        if self.path_next {
            self.take_while(|c| !matches!(c, b' ' | b'\t' | b',' | b'|'));
            return Tok::Path(self.text(from));
        }
        let rest = &self.s[from..];
        if rest.len() > 2
            && rest[0] == b'0'
            && matches!(rest[1], b'x' | b'X')
            && rest[2].is_ascii_hexdigit()
        {
            self.p += 2;
            self.take_while(|c| c.is_ascii_hexdigit());
            let digits = String::from_utf8_lossy(&self.s[from + 2..self.p]).into_owned();
            return u64::from_str_radix(&digits, 16).map_or(Tok::Error(None), Tok::Num);
        }
        if c.is_ascii_digit() {
            self.take_while(|c| c.is_ascii_digit());
            return self.text(from).parse().map_or(Tok::Error(None), Tok::Num);
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            self.take_while(|c| c.is_ascii_alphanumeric() || c == b'_');
            let w = self.text(from);
            if w.len() == 1 {
                return self.error("input", from);
            }
            if let Some(t) = fields::term(&w) {
                return Tok::Sample(t);
            }
            if let Some(v) = fields::value(&w) {
                return Tok::Num(v);
            }
            return self.error("ident", from);
        }
        if let Some((n, t)) = punct(rest) {
            self.p += n;
            return t;
        }
        // One character (flex's `.`), whole where it is UTF-8.
        self.p += std::str::from_utf8(rest)
            .ok()
            .and_then(|r| r.chars().next())
            .map_or(1, char::len_utf8);
        self.error("input", from)
    }
}

/// The operator or punctuation `rest` starts with, and its length.
fn punct(rest: &[u8]) -> Option<(usize, Tok)> {
    [
        ("==", Tok::Op(Op::Eq)),
        ("!=", Tok::Op(Op::Ne)),
        (">=", Tok::Op(Op::Ge)),
        ("<=", Tok::Op(Op::Le)),
        ("||", Tok::Or),
        (">", Tok::Op(Op::Gt)),
        ("<", Tok::Op(Op::Lt)),
        ("&", Tok::Op(Op::And)),
        (",", Tok::Comma),
    ]
    .into_iter()
    .find(|(s, _)| rest.starts_with(s.as_bytes()))
    .map(|(s, t)| (s.len(), t))
}

/// bison's message for `got` where `expecting` was due, after what the
/// lexer printed.
fn syntax(got: Tok, expecting: &str) -> String {
    let mut m = String::new();
    if let Tok::Error(Some(l)) = &got {
        m.push_str(l);
        m.push('\n');
    }
    m.push_str(&format!(
        "perf_bpf_filter: syntax error, unexpected {}, expecting {expecting}",
        got.bison()
    ));
    m
}

/// Parses `s` as perf parses a sample filter; `cgroup_id` gives a cgroup
/// path's id (perf: 0 where it finds none).
pub fn parse(s: &str, cgroup_id: impl Fn(&str) -> u64) -> Result<Filter, String> {
    let mut lx = Lexer {
        s: s.as_bytes(),
        p: 0,
        path_next: false,
        last: None,
    };
    let mut groups = vec![Vec::new()];
    loop {
        let term = match lx.next() {
            Tok::Sample(t) => t,
            t => return Err(syntax(t, "BFT_SAMPLE or BFT_SAMPLE_PATH")),
        };
        let op = match lx.next() {
            Tok::Op(o) => o,
            t => return Err(syntax(t, "BFT_OP")),
        };
        let value = match (term, lx.next()) {
            (Term::Cgroup, Tok::Path(p)) => {
                if !matches!(op, Op::Eq | Op::Ne) {
                    return Err("perf_bpf_filter: cgroup accepts '==' or '!=' only".into());
                }
                cgroup_id(&p)
            }
            (Term::Cgroup, t) => return Err(syntax(t, "BFT_PATH")),
            (_, Tok::Num(v)) => v,
            (_, t) => return Err(syntax(t, "BFT_NUM")),
        };
        groups
            .last_mut()
            .expect("one group at least")
            .push(Cmp { term, op, value });
        match lx.next() {
            Tok::End => return Ok(Filter { groups }),
            Tok::Or => {}
            Tok::Comma => groups.push(Vec::new()),
            t => return Err(syntax(t, "end of file or ',' or BFT_LOGICAL_OR")),
        }
    }
}

#[cfg(test)]
mod tests;
