//! OTLP/HTTP: profiles sent to a collector, as the OTLP specification's
//! exporter section says. Each request is POSTed to the profiles path
//! (`BASE/v1development/profiles`, or the full URL
//! `OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT` gives) as
//! `application/x-protobuf`, gzipped unless `OTEL_EXPORTER_OTLP_COMPRESSION`
//! says `none`, with the headers of `OTEL_EXPORTER_OTLP_HEADERS` and
//! `--otlp-header`, within `OTEL_EXPORTER_OTLP_TIMEOUT` (ms, default
//! 10 s) a try. A 429, 502, 503 or 504, or no connection, is tried again
//! after an exponential backoff (or the server's `Retry-After`), four
//! tries at most; any other answer but 2xx fails at once. Plain HTTP only:
//! this build has no TLS.

use std::io::Write;
use std::time::Duration;

use opentelemetry_proto::tonic::collector::profiles::v1development::ExportProfilesServiceResponse;
use prost::Message;

/// The most bytes a request holds before it is cut (by profile, then by
/// samples): 4 MiB, the gRPC default a Collector's receiver keeps.
pub const MAX_REQUEST: usize = 4 << 20;

/// The profiles path under a base endpoint.
pub const PROFILES_PATH: &str = "v1development/profiles";

/// How many tries a request gets, and the first backoff.
const TRIES: u32 = 4;
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// The longest a `Retry-After` is waited for.
const LONGEST_WAIT: Duration = Duration::from_secs(30);

/// Where and how requests are sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The URL each request is POSTed to.
    pub url: String,
    /// Headers sent with each request.
    pub headers: Vec<(String, String)>,
    /// The limit of one try.
    pub timeout: Duration,
    /// Whether the body is gzipped.
    pub gzip: bool,
}

impl Endpoint {
    /// The endpoint: `base` (`--otlp-endpoint`), else the environment's
    /// (`env`: OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT as is, or
    /// OTEL_EXPORTER_OTLP_ENDPOINT with the path), else the spec's default
    /// `http://localhost:4318`; the environment's headers then `headers`
    /// (`K=V` each; a key given again replaces its value).
    pub fn resolve(
        base: Option<&str>,
        headers: &[String],
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Endpoint, String> {
        let var = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        let url = match (base, var("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT")) {
            (Some(b), _) => with_path(b),
            (None, Some(full)) => full.trim().to_string(),
            (None, None) => with_path(
                &var("OTEL_EXPORTER_OTLP_ENDPOINT").unwrap_or("http://localhost:4318".into()),
            ),
        };
        if !url.starts_with("http://") {
            return Err(format!(
                "{url}: perfz sends OTLP over plain http:// only (this build has no TLS): \
                 send to a Collector's http:// endpoint (e.g. http://localhost:4318)"
            ));
        }
        Ok(Endpoint {
            url,
            headers: headers_of(headers, &var)?,
            timeout: timeout_of(&var)?,
            gzip: gzip_of(&var)?,
        })
    }

    /// Sends each of `requests` (encoded ExportProfilesServiceRequests)
    /// in turn; what the collector said of them (rejected profiles), or
    /// why one was not taken, in one line naming the endpoint.
    pub fn send(&self, requests: &[Vec<u8>]) -> Result<Vec<String>, String> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(self.timeout))
            .http_status_as_error(false)
            .user_agent(concat!("perfz/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        let mut said = Vec::new();
        for (i, r) in requests.iter().enumerate() {
            let body = self.body(r).map_err(|e| format!("{}: {e}", self.url))?;
            let answer = self.post_retrying(&agent, &body).map_err(|e| {
                let which = match requests.len() {
                    1 => String::new(),
                    n => format!(" (request {} of {n})", i + 1),
                };
                format!("sending OTLP profiles to {}{which}: {e}", self.url)
            })?;
            said.extend(partial_success(&answer));
        }
        Ok(said)
    }

    /// A request's body: gzipped, or as it is.
    fn body(&self, r: &[u8]) -> std::io::Result<Vec<u8>> {
        if !self.gzip {
            return Ok(r.to_vec());
        }
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(r)?;
        gz.finish()
    }

    /// POSTs `body` until it is taken (its answer's body), a try fails
    /// for good, or the tries run out.
    fn post_retrying(&self, agent: &ureq::Agent, body: &[u8]) -> Result<Vec<u8>, String> {
        let mut backoff = FIRST_BACKOFF;
        let mut last = String::new();
        for attempt in 1..=TRIES {
            let wait = match self.post(agent, body) {
                Ok(answer) => return Ok(answer),
                Err(Try::Fatal(why)) => return Err(why),
                Err(Try::Again(why, after)) => {
                    last = why;
                    after.unwrap_or(backoff).min(LONGEST_WAIT)
                }
            };
            if attempt < TRIES {
                std::thread::sleep(wait);
                backoff *= 2;
            }
        }
        Err(format!("{last} (after {TRIES} tries)"))
    }

    /// One try.
    fn post(&self, agent: &ureq::Agent, body: &[u8]) -> Result<Vec<u8>, Try> {
        let mut req = agent
            .post(&self.url)
            .header("Content-Type", "application/x-protobuf");
        if self.gzip {
            req = req.header("Content-Encoding", "gzip");
        }
        for (k, v) in &self.headers {
            req = req.header(k, v);
        }
        let mut resp = req
            .send(body)
            .map_err(|e| Try::Again(e.to_string(), None))?;
        let status = resp.status().as_u16();
        let after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let answer = resp
            .body_mut()
            .with_config()
            .limit(1 << 20)
            .read_to_vec()
            .unwrap_or_default();
        match status {
            200..=299 => Ok(answer),
            429 | 502 | 503 | 504 => Err(Try::Again(format!("HTTP {status}"), after)),
            _ => Err(Try::Fatal(format!("HTTP {status}{}", text_of(&answer)))),
        }
    }
}

/// How a try failed.
enum Try {
    /// For now (a retryable status, no connection), with the wait the
    /// server asked for.
    Again(String, Option<Duration>),
    /// For good.
    Fatal(String),
}

/// What a 2xx answer's ExportProfilesServiceResponse says of profiles it
/// rejected, if anything.
fn partial_success(answer: &[u8]) -> Option<String> {
    let r = ExportProfilesServiceResponse::decode(answer).ok()?;
    let p = r.partial_success?;
    (p.rejected_profiles != 0 || !p.error_message.is_empty()).then(|| {
        format!(
            "the collector rejected {} profiles: {}",
            p.rejected_profiles, p.error_message
        )
    })
}

/// An error answer's text, where it is short printable text (else nothing).
fn text_of(answer: &[u8]) -> String {
    match std::str::from_utf8(answer) {
        Ok(t) if !t.trim().is_empty() && t.len() <= 200 && !t.contains(char::is_control) => {
            format!(": {}", t.trim())
        }
        _ => String::new(),
    }
}

/// The environment's headers (`var`), then `flags`'.
fn headers_of(
    flags: &[String],
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, String> {
    let mut all = Vec::new();
    for k in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_PROFILES_HEADERS",
    ] {
        let list = var(k).unwrap_or_default();
        for kv in list.split(',').filter(|s| !s.trim().is_empty()) {
            set(&mut all, header(kv, true).map_err(|e| format!("{k}: {e}"))?);
        }
    }
    for kv in flags {
        set(
            &mut all,
            header(kv, false).map_err(|e| format!("--otlp-header: {e}"))?,
        );
    }
    Ok(all)
}

/// A try's limit: the environment's milliseconds (`var`), else 10 s.
fn timeout_of(var: &dyn Fn(&str) -> Option<String>) -> Result<Duration, String> {
    let ms =
        var("OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT").or_else(|| var("OTEL_EXPORTER_OTLP_TIMEOUT"));
    match ms.map(|ms| (ms.trim().parse::<u64>(), ms)) {
        None => Ok(Duration::from_secs(10)),
        Some((Ok(n), _)) if n > 0 => Ok(Duration::from_millis(n)),
        Some((_, ms)) => Err(format!(
            "OTEL_EXPORTER_OTLP_TIMEOUT={ms}: milliseconds, more than 0"
        )),
    }
}

/// Whether bodies are gzipped: unless the environment (`var`) says `none`.
fn gzip_of(var: &dyn Fn(&str) -> Option<String>) -> Result<bool, String> {
    let c = var("OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION")
        .or_else(|| var("OTEL_EXPORTER_OTLP_COMPRESSION"));
    match c.as_deref().map(str::trim) {
        None | Some("gzip") => Ok(true),
        Some("none") => Ok(false),
        Some(other) => Err(format!(
            "OTEL_EXPORTER_OTLP_COMPRESSION={other}: gzip or none"
        )),
    }
}

/// `base` with the profiles path.
fn with_path(base: &str) -> String {
    format!("{}/{PROFILES_PATH}", base.trim().trim_end_matches('/'))
}

/// Header `kv` (`K=V`; `percent`: the value percent-decoded, as the
/// environment's list is W3C baggage's format).
fn header(kv: &str, percent: bool) -> Result<(String, String), String> {
    let (k, v) = kv
        .split_once('=')
        .ok_or_else(|| format!("{kv:?} is not KEY=VALUE"))?;
    let k = k.trim();
    let bad = |c: char| !(c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c));
    if k.is_empty() || k.contains(bad) {
        return Err(format!("{k:?} is not a header name"));
    }
    let v = if percent {
        decode(v.trim())
    } else {
        v.trim().to_string()
    };
    if v.contains(|c: char| c.is_control()) {
        return Err(format!("the value of {k} holds a control character"));
    }
    Ok((k.to_string(), v))
}

/// Replaces or adds header `h` (names compared without case).
fn set(all: &mut Vec<(String, String)>, h: (String, String)) {
    all.retain(|(k, _)| !k.eq_ignore_ascii_case(&h.0));
    all.push(h);
}

/// `%XX` escapes decoded (a bad one kept as it is).
fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (b[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(x)) => {
                out.push(x);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_endpoint_comes_from_the_option_then_the_environment_as_the_spec_says() {
        let none = env_of(&[]);
        let e = Endpoint::resolve(Some("http://c:4318/"), &[], &none).unwrap();
        assert_eq!(e.url, "http://c:4318/v1development/profiles");
        assert_eq!((e.timeout, e.gzip), (Duration::from_secs(10), true));
        let e = Endpoint::resolve(None, &[], &none).unwrap();
        assert_eq!(e.url, "http://localhost:4318/v1development/profiles");
        let base = env_of(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://b:1"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
        ]);
        let e = Endpoint::resolve(None, &[], &base).unwrap();
        assert_eq!(
            (e.url.as_str(), e.timeout),
            (
                "http://b:1/v1development/profiles",
                Duration::from_millis(2500)
            )
        );
        // The signal's own endpoint is the full URL, as is.
        let full = env_of(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://b:1"),
            ("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", "http://p:2/x"),
        ]);
        assert_eq!(
            Endpoint::resolve(None, &[], &full).unwrap().url,
            "http://p:2/x"
        );
        assert!(Endpoint::resolve(Some("https://c"), &[], &none)
            .unwrap_err()
            .contains("plain http://"));
        let bad = env_of(&[("OTEL_EXPORTER_OTLP_TIMEOUT", "soon")]);
        assert!(Endpoint::resolve(None, &[], &bad).is_err());
    }

    #[test]
    fn headers_come_from_the_environment_then_the_options_which_win() {
        let env = env_of(&[
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "api-key=a%20b, X-Scope-OrgID=one",
            ),
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "none"),
        ]);
        let flags = ["x-scope-orgid=two".to_string()];
        let e = Endpoint::resolve(Some("http://c"), &flags, &env).unwrap();
        assert_eq!(
            e.headers,
            [
                ("api-key".into(), "a b".into()),
                ("x-scope-orgid".into(), "two".into())
            ]
        );
        assert!(!e.gzip);
        let bad = ["no value".to_string()];
        assert!(Endpoint::resolve(Some("http://c"), &bad, &env_of(&[]))
            .unwrap_err()
            .starts_with("--otlp-header"));
    }
}
