//! `--otlp-endpoint` (export, and record at its end): the profiles POSTed
//! over OTLP/HTTP to a receiver on 127.0.0.1 that decodes them with
//! OpenTelemetry's own classes (tests/otlp/server.py) and answers 503 once,
//! as an overloaded Collector does; an unreachable endpoint is one line and
//! exit status 1, the recording kept. Where an OpenTelemetry Collector is
//! on PATH (`otelcol-contrib`, `otelcol`), it receives them too.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::inferno::{parse, Folded};
use crate::common::*;
use crate::export_otlp::otlp_python;

/// The stand-in receiver, its port, and its log of what it got.
struct Receiver {
    _server: Owned,
    url: String,
    log: PathBuf,
}

/// Starts tests/otlp/server.py (`fail_first`: 503 to the first request).
fn receiver(dir: &Path, fail_first: bool) -> Receiver {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/otlp/server.py");
    let log = dir.join("received.jsonl");
    let mut cmd = Command::new(otlp_python());
    cmd.arg(script).arg(&log).stdout(Stdio::piped());
    if fail_first {
        cmd.arg("--fail-first");
    }
    let mut server = cmd.spawn_owned().expect("the receiver starts");
    let mut line = String::new();
    let out = server.stdout.take().unwrap();
    std::io::BufReader::new(out).read_line(&mut line).unwrap();
    let port: u16 = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("the receiver said {line:?}"));
    Receiver {
        _server: server,
        url: format!("http://127.0.0.1:{port}"),
        log,
    }
}

/// What the receiver logged, a request each.
fn received(log: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every profile's folded stacks in a receiver's report, added up.
fn folded_back(report: &serde_json::Value) -> Folded {
    let mut all = Folded::new();
    for lines in report["folded"].as_array().unwrap() {
        for (k, n) in lines.as_object().unwrap() {
            *all.entry(k.clone()).or_default() += n.as_u64().unwrap();
        }
    }
    all
}

/// A short frame-pointer recording of the workload.
fn recording(dir: &Path) -> PathBuf {
    require_recording();
    let data = dir.join("fp.data");
    let w = workload();
    perfz_ok(&[
        "record",
        "-q",
        "-g",
        "-o",
        data.to_str().unwrap(),
        "--",
        w.to_str().unwrap(),
        "0.3",
    ]);
    data
}

/// A port on 127.0.0.1 nothing listens on (bound, then let go).
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn export_sends_to_the_receiver_retrying_after_a_503() {
    let dir = tempdir("otlp-push");
    let data = recording(&dir);
    let r = receiver(&dir, true);
    let o = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args([
            "export",
            "--otlp-endpoint",
            &r.url,
            "--otlp-header",
            "X-Scope-OrgID=perfz",
        ])
        .arg(&data)
        .env(
            "OTEL_EXPORTER_OTLP_HEADERS",
            "api-key=s%20cret,x-scope-orgid=overridden",
        )
        .output_within();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("sent 1 OTLP request"), "{err}");
    let got = received(&r.log);
    assert_eq!(got.len(), 2, "a 503, then the request again: {got:?}");
    assert_eq!(got[0]["answer"], 503);
    let taken = &got[1];
    assert_eq!(taken["answer"], 200, "{taken}");
    assert_eq!(taken["path"], "/v1development/profiles");
    assert_eq!(taken["content_type"], "application/x-protobuf");
    assert_eq!(taken["encoding"], "gzip");
    assert_eq!(
        taken["headers"]["x-scope-orgid"], "perfz",
        "the option wins"
    );
    assert_eq!(
        taken["headers"]["api-key"], "s cret",
        "the environment's, decoded"
    );
    let folded = parse(&String::from_utf8_lossy(
        &perfz_ok(&["export", data.to_str().unwrap()]).stdout,
    ));
    assert_eq!(
        folded_back(&taken["report"]),
        folded,
        "what arrived is the folded export"
    );
    // --otlp: the endpoint the environment names, the signal's as is.
    let o = Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args(["export", "--otlp", "--service-name", "from-env"])
        .arg(&data)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
        .env(
            "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT",
            format!("{}/v1development/profiles", r.url),
        )
        .output_within();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = received(&r.log);
    assert_eq!(
        got[2]["report"]["resource"]["service.name"], "from-env",
        "{got:?}"
    );
    // A recording without samples: nothing is sent, and perfz says so.
    let empty = dir.join("empty.data");
    let c = "1000000000000";
    perfz_ok(&[
        "record",
        "-q",
        "-e",
        "cpu-clock",
        "-c",
        c,
        "-o",
        empty.to_str().unwrap(),
        "--",
        "true",
    ]);
    let o = perfz(&["export", "--otlp-endpoint", &r.url, empty.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no samples") && err.contains("nothing written or sent"),
        "{err}"
    );
    assert_eq!(received(&r.log).len(), 3, "nothing more arrived");
}

#[test]
fn an_unreachable_endpoint_is_one_line_and_exit_status_1() {
    let dir = tempdir("otlp-push-unreachable");
    let data = recording(&dir);
    let url = format!("http://127.0.0.1:{}", closed_port());
    let o = perfz(&["export", "--otlp-endpoint", &url, data.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(
        err.contains(&format!("{url}/v1development/profiles")),
        "names the endpoint: {err}"
    );
    // https is refused before anything is read.
    let o = perfz(&[
        "export",
        "--otlp-endpoint",
        "https://127.0.0.1:1",
        data.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("plain http://"));
}

#[test]
fn record_sends_its_recording_at_its_end_and_keeps_it_when_it_cannot() {
    require_recording();
    let dir = tempdir("otlp-push-record");
    let r = receiver(&dir, false);
    let (data, w) = (dir.join("r.data"), workload());
    let o = perfz(&[
        "record",
        "-q",
        "-g",
        "--otlp-endpoint",
        &r.url,
        "--service-name",
        "checkout",
        "-o",
        data.to_str().unwrap(),
        "--",
        w.to_str().unwrap(),
        "0.3",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let got = received(&r.log);
    assert_eq!(got.len(), 1, "{got:?}");
    let report = &got[0]["report"];
    assert_eq!(report["resource"]["service.name"], "checkout");
    let folded = parse(&String::from_utf8_lossy(
        &perfz_ok(&["export", data.to_str().unwrap()]).stdout,
    ));
    assert_eq!(
        folded_back(report),
        folded,
        "what arrived is the recording's"
    );

    let kept = dir.join("kept.data");
    let url = format!("http://127.0.0.1:{}", closed_port());
    let o = perfz(&[
        "record",
        "-q",
        "-g",
        "--otlp-endpoint",
        &url,
        "-o",
        kept.to_str().unwrap(),
        "--",
        w.to_str().unwrap(),
        "0.2",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains(&url), "names the endpoint: {err}");
    assert!(our_sample_count(&kept) > 0, "the recording is kept whole");
}

/// `otelcol-contrib` or `otelcol` on PATH, if any.
fn collector() -> Option<PathBuf> {
    ["otelcol-contrib", "otelcol"]
        .into_iter()
        .map(PathBuf::from)
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

#[test]
fn a_collector_on_path_takes_them_with_its_profiles_feature_gate() {
    let Some(otelcol) = collector() else {
        println!("no otelcol-contrib or otelcol on PATH: the Collector is not tried (the stand-in receiver checks the same requests)");
        return;
    };
    let dir = tempdir("otlp-collector");
    let data = recording(&dir);
    let (port, out) = (closed_port(), dir.join("collected.json"));
    let config = dir.join("otelcol.yaml");
    std::fs::write(
        &config,
        format!(
        "receivers:\n  otlp:\n    protocols:\n      http:\n        endpoint: 127.0.0.1:{port}\n\
         exporters:\n  file:\n    path: {}\n\
         service:\n  pipelines:\n    profiles:\n      receivers: [otlp]\n      exporters: [file]\n",
        out.display()
    ),
    )
    .unwrap();
    let _col = Command::new(&otelcol)
        .arg(format!("--config={}", config.display()))
        .arg("--feature-gates=service.profilesSupport")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn_owned()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}");
    let ready = || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
    assert!(
        wait_until(ready),
        "{} did not listen on {url}",
        otelcol.display()
    );
    perfz_ok(&["export", "--otlp-endpoint", &url, data.to_str().unwrap()]);
    let written = || std::fs::read_to_string(&out).is_ok_and(|t| t.contains("resourceProfiles"));
    assert!(
        wait_until(written),
        "the Collector wrote no profiles to {}",
        out.display()
    );
}

/// Whether `f` holds within 30 s, asked every 50 ms.
fn wait_until(f: impl Fn() -> bool) -> bool {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::time::Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    false
}
