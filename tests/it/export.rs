//! `perfz export --format folded` against the reference users run: `perf
//! script --no-inline | inferno-collapse-perf` (independent of perfz's
//! symbolization): same stacks, same weights.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;

fn ours(path: &Path) -> BTreeMap<String, u64> {
    ours_with(path, &[])
}

fn ours_with(path: &Path, options: &[&str]) -> BTreeMap<String, u64> {
    let o = perfz_ok(&[&["export", path.to_str().unwrap()], options].concat());
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (stack, n) = l.rsplit_once(' ').unwrap();
            (stack.to_string(), n.parse().unwrap())
        })
        .collect()
}

fn check(path: &Path) {
    let want = common::inferno::reference(path, &[]);
    let got = ours(path);
    assert!(want.values().sum::<u64>() > 100, "{}", path.display());
    assert!(
        want.keys()
            .any(|k| k.contains(";main;") && k.contains("perfz_workload_leaf")),
        "the workload's stacks reach main"
    );
    if got != want {
        let only_ours: Vec<_> = got
            .iter()
            .filter(|(k, v)| want.get(*k) != Some(v))
            .collect();
        let only_perf: Vec<_> = want
            .iter()
            .filter(|(k, v)| got.get(*k) != Some(v))
            .collect();
        panic!(
            "{}: folded stacks differ\nperfz only: {only_ours:#?}\nperf only: {only_perf:#?}",
            path.display()
        );
    }
}

/// Frame-pointer recordings of the workload — perfz's (zstd, a --threads
/// directory) and perf's own — fold to exactly what perf script and the
/// reference collapse give. Sampling starts 100 ms in (-D): perf 6.1 names
/// an entry of ld.so's own PLT `@plt` where the relocation names it (seen
/// once in five runs of a sample in the loader's startup), and perfz
/// follows the relocation.
#[test]
fn folded_equals_perf_script_collapsed() {
    require_recording();
    let dir = tempdir("export-fp");
    let wl = workload();
    let w = wl.to_str().unwrap();
    let z = dir.join("z.data");
    let z_s = z.to_str().unwrap();
    perfz_ok(&["record", "-q", "-D", "100", "-g", "-o", z_s, "--", w, "0.6"]);
    check(&z);
    let t = dir.join("t.data");
    let t_s = t.to_str().unwrap();
    let threads = ["record", "-q", "-D", "100", "--threads", "-g", "-o", t_s];
    perfz_ok(&[&threads[..], &["--", w, "0.6", "2"]].concat());
    check(&t);
    let p = dir.join("p.data");
    let st = std::process::Command::new(perf())
        .args(["record", "-q", "-B", "-D", "100", "-g", "-o"])
        .arg(&p)
        .args(["--", w, "0.6"])
        .status_within();
    assert!(st.success(), "perf record");
    check(&p);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Samples whose whole folded stack (comm, kernel and user frames) is the
/// same in both: the sum over stacks of the smaller count.
fn agreeing(a: &BTreeMap<String, u64>, b: &BTreeMap<String, u64>) -> u64 {
    a.iter()
        .map(|(k, n)| (*n).min(*b.get(k).unwrap_or(&0)))
        .sum()
}

/// Dwarf recordings of the workload built without frame pointers — perfz's
/// (stack cut, zstd) and perf's own (whole stacks) — unwind to the stacks
/// `perf script` unwinds (without inline frames) for at least 99 % of
/// samples, and every sample in the workload's loop reaches main.
#[test]
fn dwarf_stacks_unwind_as_perf_script_does() {
    require_recording();
    let dir = tempdir("export-dwarf");
    let wl = workload_without_frame_pointers();
    let w = wl.to_str().unwrap();
    let z = dir.join("z.data");
    let dwarf = ["--call-graph", "dwarf"];
    perfz_ok(
        &[
            &["record", "-q", "-o", z.to_str().unwrap()],
            &dwarf[..],
            &["--", w, "0.6"],
        ]
        .concat(),
    );
    let p = dir.join("p.data");
    let st = std::process::Command::new(perf())
        .args(["record", "-q", "-B", "--call-graph", "dwarf", "-o"])
        .arg(&p)
        .args(["--", w, "0.6"])
        .status_within();
    assert!(st.success(), "perf record");
    for (path, inline) in [(&z, false), (&p, false), (&z, true), (&p, true)] {
        // Sample counts: the dwarf share below is of samples.
        let fields = ["-F", "comm,tid,time,event,ip,sym,dso"];
        // Inline frames as perf 7.3 adds them: above the frame's own,
        // which keeps its symbol's name (6.12 names it as DWARF does,
        // `__libc_start_main_impl` for `__libc_start_main`).
        let want = if inline {
            let script = [&["--inline"][..], &fields].concat();
            common::inferno::reference_by(&perf_7(), path, &script, &[])
        } else {
            common::inferno::reference_with(path, &fields, &[])
        };
        let got = if inline {
            ours_with(path, &["--inline", "--sample-counts"])
        } else {
            ours_with(path, &["--sample-counts"])
        };
        if inline {
            let script = run_perf(
                &perf(),
                &[
                    "script",
                    "--inline",
                    "-F",
                    "ip,sym",
                    "-i",
                    path.to_str().unwrap(),
                ],
            );
            assert!(script.contains("(inlined)"), "perf shows inline frames");
        }
        let total: u64 = want.values().sum();
        // 0.6 s of the workload's own CPU time: ~2400 samples, however
        // busy the machine (cpu-clock counts CPU time).
        assert!(total > 100, "{}: {total} samples", path.display());
        assert_eq!(got.values().sum::<u64>(), total, "{}", path.display());
        let same = agreeing(&got, &want);
        eprintln!(
            "{} (inline frames: {inline}): {same} of {total} samples agree",
            path.display()
        );
        let differ: Vec<_> = got
            .iter()
            .filter(|(k, v)| want.get(*k) != Some(v))
            .collect();
        assert!(
            same * 100 >= total * 99,
            "{}: {same} of {total} samples unwind as perf's\nperfz only: {differ:#?}",
            path.display()
        );
        for (stack, _) in got.iter().filter(|(k, _)| k.contains("perfz_workload_")) {
            let main = stack.find(";main;").map(|i| i + 1);
            let first = stack.find("perfz_workload_");
            assert!(
                main < first && main.is_some(),
                "{stack} does not reach main"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Binaries replaced on disk after the recording: by another ELF file, the
/// build-id cache perfz filled names the frames as before; by junk with the
/// cache gone, the frames are `[unknown]` (folded: the module's name) and
/// the export still succeeds, in every format.
#[test]
fn binaries_replaced_on_disk_resolve_from_the_cache_or_stay_unknown() {
    require_recording();
    let dir = tempdir("export-replaced");
    let prog = dir.join("prog");
    std::fs::copy(workload_without_frame_pointers(), &prog).unwrap();
    let cache = dir.join("cache");
    let data = dir.join("r.data");
    let st = std::process::Command::new(env!("CARGO_BIN_EXE_perfz"))
        .env("PERF_BUILDID_DIR", &cache)
        .args(["record", "-q", "--call-graph", "dwarf", "-o"])
        .arg(&data)
        .arg("--")
        .arg(&prog)
        .arg("0.3")
        .status_within();
    assert!(st.success());
    let export = |options: &[&str]| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_perfz"))
            .env("PERF_BUILDID_DIR", &cache)
            .arg("export")
            .arg(&data)
            .args(options)
            .output_within();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let before = export(&[]);
    assert!(before.contains(";main;perfz_workload_loop;"), "{before}");
    // Replaced as a linker or a package manager replaces a file: a new file
    // renamed over the path. (Written in place, the file would change the
    // cache's copy too: the cache hard-links where it can, as perf's does.)
    let replace = |bytes: &[u8]| {
        let new = dir.join("new");
        std::fs::write(&new, bytes).unwrap();
        std::fs::rename(&new, &prog).unwrap();
    };
    // Another ELF file at the same path (a different build id).
    replace(&std::fs::read("/bin/true").unwrap());
    assert_eq!(export(&[]), before, "the cache's copy names the frames");
    // Junk at the path and no cache.
    replace(&[0x7fu8; 4096]);
    std::fs::remove_dir_all(&cache).unwrap();
    let after = export(&[]);
    assert!(!after.contains("perfz_workload"), "{after}");
    assert!(after.lines().any(|l| l.contains(";[prog]")), "{after}");
    let pprof = dir.join("r.pb.gz");
    export(&[
        "--format",
        "pprof",
        "--inline",
        "-o",
        pprof.to_str().unwrap(),
    ]);
    assert!(std::fs::metadata(&pprof).unwrap().len() > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Input that is not a recording gets a one-line error, exit 1.
#[test]
fn a_file_that_is_not_a_recording_is_refused() {
    let dir = tempdir("export-bad");
    let junk = dir.join("junk.data");
    std::fs::write(&junk, b"PERFILE2 but nothing else of one").unwrap();
    let o = perfz(&["export", junk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("perfz: ") && err.lines().count() <= 2,
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A frame-pointer recording of the workload for `secs` s, as `dir/name`.
fn record_fp(dir: &std::path::Path, name: &str, secs: &str) -> std::path::PathBuf {
    let data = dir.join(name);
    let w = workload();
    let args = ["record", "-q", "-g", "-o", data.to_str().unwrap(), "--"];
    perfz_ok(&[&args[..], &[w.to_str().unwrap(), secs]].concat());
    data
}

/// `--format svg`: a flame graph (valid XML) whose root holds every sample
/// the folded lines count, with the workload's frames in it.
#[test]
fn svg_is_a_flame_graph_of_the_folded_stacks() {
    require_recording();
    let dir = tempdir("export-svg");
    let data = record_fp(&dir, "s.data", "0.3");
    let d = data.to_str().unwrap();
    let total: u64 = ours(&data).values().sum();
    let svg = dir.join("s.svg");
    perfz_ok(&["export", "--format", "svg", "-o", svg.to_str().unwrap(), d]);
    let text = std::fs::read_to_string(&svg).unwrap();
    let opt = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(&text, opt).expect("the flame graph is XML");
    let titles: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("title"))
        .filter_map(|n| n.text())
        .collect();
    let root = titles
        .iter()
        .find(|t| t.starts_with("all ("))
        .expect("a root frame");
    let n: u64 = root["all (".len()..]
        .split(' ')
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap();
    assert!(total > 100 && n == total, "root {root:?}, folded {total}");
    assert!(titles
        .iter()
        .any(|t| t.starts_with("perfz_workload_leaf (")));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The flame graph's options are inferno-flamegraph's (`--title`,
/// `--inverted`, `--width`, `--count-name`, its `--countname`), and the
/// graph is the one inferno-flamegraph draws with them from the folded
/// export, byte for byte; the tooltips count nanoseconds where the
/// weights are cpu-clock's, samples with `--sample-counts`.
#[test]
fn svg_options_draw_as_inferno_flamegraph_draws() {
    /// perfz's options, its folding options, inferno-flamegraph's, the
    /// tooltips' unit.
    struct Case<'a>(&'a [&'a str], &'a [&'a str], &'a [&'a str], &'a str);
    require_recording();
    let dir = tempdir("export-svg-options");
    let data = record_fp(&dir, "s.data", "0.3");
    let d = data.to_str().unwrap();
    let flamegraph = common::inferno::inferno().with_file_name("inferno-flamegraph");
    let svg = |args: &[&str]| {
        let out = dir.join("s.svg");
        let o = out.to_str().unwrap();
        perfz_ok(&[&["export", "--format", "svg", "-o", o, d], args].concat());
        std::fs::read_to_string(&out).unwrap()
    };
    let folded = |args: &[&str]| {
        let out = dir.join("s.folded");
        let o = out.to_str().unwrap();
        perfz_ok(&[&["export", "-o", o, d], args].concat());
        out
    };
    let cases: [Case; 3] = [
        Case(
            &[],
            &[],
            &["--title", &format!("perfz: {d}"), "--countname", "ns"],
            " ns, ",
        ),
        Case(
            &[
                "--title",
                "t",
                "--inverted",
                "--width",
                "800",
                "--count-name",
                "ms",
            ],
            &[],
            &[
                "--title",
                "t",
                "--inverted",
                "--width",
                "800",
                "--countname",
                "ms",
            ],
            " ms, ",
        ),
        Case(
            &["--sample-counts", "--countname", "hits"],
            &["--sample-counts"],
            &["--title", &format!("perfz: {d}"), "--countname", "hits"],
            " hits, ",
        ),
    ];
    for Case(ours, fold, theirs, unit) in cases {
        let got = svg(ours);
        let o = std::process::Command::new(&flamegraph)
            .args(theirs)
            .arg(folded(fold))
            .output_within();
        assert!(
            o.status.success(),
            "inferno-flamegraph {theirs:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let want = String::from_utf8(o.stdout).unwrap();
        assert!(
            want.contains(unit),
            "{theirs:?}: no `{unit}` in inferno's graph"
        );
        assert!(
            got == want,
            "perfz export {ours:?} is not inferno-flamegraph {theirs:?}'s graph"
        );
    }
    let wrong = perfz(&["export", "--title", "t", d]);
    assert_eq!(wrong.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("add --format svg"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The flame graph in a real browser, headless Chromium: frames are drawn
/// (a screenshot the size of the graph is frames' colours over a good part
/// of it), and search works (opened with `?s=NAME`, as a link to a search
/// is shared, its script colours the matches and says how much matched).
#[test]
fn svg_opens_in_a_browser_with_frames_drawn_and_search_working() {
    require_recording();
    let chromium = chromium();
    let dir = tempdir("export-svg-browser");
    let data = record_fp(&dir, "s.data", "0.3");
    let svg = dir.join("s.svg");
    perfz_ok(&[
        "export",
        "--format",
        "svg",
        "-o",
        svg.to_str().unwrap(),
        data.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&svg).unwrap();
    let height: u32 = text
        .split("<svg")
        .nth(1)
        .and_then(|s| s.split("height=\"").nth(1))
        .and_then(|s| s.split('"').next())
        .and_then(|h| h.parse().ok())
        .expect("the svg says its height");
    let url = format!("file://{}", svg.display());
    let browse = |args: &[&str]| {
        let o = std::process::Command::new(&chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
            ])
            .args(args)
            .output_within();
        assert!(
            o.status.success(),
            "chromium {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        o.stdout
    };
    let shot = dir.join("s.png");
    browse(&[
        &format!("--window-size=1200,{}", height.clamp(200, 4000)),
        &format!("--screenshot={}", shot.display()),
        &url,
    ]);
    let mut png = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()))
        .read_info()
        .expect("chromium's screenshot is a PNG");
    let mut pixels = vec![0; png.output_buffer_size()];
    let info = png.next_frame(&mut pixels).unwrap();
    let channels = info.color_type.samples();
    let all = pixels[..info.buffer_size()].chunks_exact(channels);
    let total = all.len();
    // Frames are warm (red to yellow: red high, blue low); the background
    // is a grey-to-cream gradient, the text black.
    let frames = all.filter(|p| p[0] > 180 && p[2] < 90).count();
    assert!(
        frames * 50 > total,
        "{frames} of {total} pixels of the screenshot are frames"
    );
    let dom = browse(&["--dump-dom", &format!("{url}?s=perfz_workload_leaf")]);
    let dom = String::from_utf8_lossy(&dom);
    assert!(
        dom.contains("fill=\"rgb(230,0,230)\""),
        "the search coloured no frame"
    );
    let matched = dom
        .split("Matched: ")
        .filter_map(|s| s.split('%').next()?.parse::<f64>().ok())
        .next()
        .expect("the search says how much matched");
    assert!(matched > 0.0 && matched <= 100.0, "matched {matched} %");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-o /dev/null` (timing an export) writes into the device: it stays a
/// device, not a file renamed over it; so it does after `perfz record -o
/// /dev/null`, which writes a stream there (tests/it/newest_perf.rs).
#[test]
fn dev_null_stays_a_device() {
    require_recording();
    use std::os::unix::fs::FileTypeExt;
    let dir = tempdir("export-devnull");
    let data = record_fp(&dir, "n.data", "0.1");
    let d = data.to_str().unwrap();
    perfz_ok(&["export", "-o", "/dev/null", d]);
    perfz_ok(&["export", "--format", "pprof", "-o", "/dev/null", d]);
    let is_dev = || {
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    };
    assert!(is_dev(), "/dev/null was replaced");
    perfz_ok(&["record", "-q", "-o", "/dev/null", "--", "true"]);
    assert!(is_dev(), "/dev/null was replaced");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `perfz report`'s own table ranks a recording's functions as perf report
/// does (their Self shares within a point); without perf it is what
/// `perfz report` shows, with the fix for perf.
#[test]
fn report_table_agrees_with_perf_report() {
    require_recording();
    let dir = tempdir("report");
    let out = dir.join("r.data");
    let w = workload();
    perfz_ok(&[
        "record",
        "-q",
        "-g",
        "-o",
        out.to_str().unwrap(),
        w.to_str().unwrap(),
        "0.3",
    ]);
    let theirs = run_perf(
        &perf(),
        &[
            "report",
            "--stdio",
            "--no-children",
            "--sort",
            "sym",
            "-i",
            out.to_str().unwrap(),
        ],
    );
    let perf_self = theirs
        .lines()
        .find(|l| l.contains("perfz_workload_leaf") && !l.trim_start().starts_with('|'))
        .and_then(|l| {
            l.split_whitespace()
                .next()?
                .trim_end_matches('%')
                .parse::<f64>()
                .ok()
        })
        .unwrap_or_else(|| panic!("perf report names the leaf: {theirs}"));
    let own = |path: Option<&str>| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_perfz"));
        c.args(["report", out.to_str().unwrap()]);
        match path {
            Some(p) => c.env("PATH", p),
            None => c.arg("--own"),
        };
        let o = c.output_within();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (table, _) = own(None);
    let ours = percent_column(&table, " perfz_workload_leaf", 1)
        .unwrap_or_else(|| panic!("perfz report names the leaf: {table}"));
    assert!(
        (ours - perf_self).abs() <= 1.0,
        "self of the leaf: perfz {ours}%, perf {perf_self}%"
    );
    // Where perf is not on PATH, the table is what it shows.
    let (shown, err) = own(Some("/nonexistent"));
    assert!(err.contains("apt-get install linux-perf"), "{err}");
    assert_eq!(shown, table);
}

/// Recordings from another machine's kernel (perf 6.1's fixtures, files
/// and pipes): their kernel frames are not named from this kernel's
/// symbols, and fold as perf folds them when told the truth (an empty
/// `--kallsyms`: no symbols of that kernel here); perf, told nothing,
/// names them from this host's (wrongly), which is no oracle. Process 0
/// is `swapper`, as perf calls the idle task.
#[test]
fn another_kernels_frames_fold_as_perf_folds_them_told_the_truth() {
    let dir = tempdir("export-foreign");
    let empty = dir.join("empty.kallsyms");
    std::fs::write(&empty, "").unwrap();
    let mut swapper = 0;
    for name in [
        "z-sysw-switch",
        "plain-sysw",
        "pipe-cmd",
        "zpipe-cmd",
        "z1-cmd",
        "z-attach-p",
    ] {
        let data = fixture(name);
        let want =
            common::inferno::reference_with(&data, &["--kallsyms", empty.to_str().unwrap()], &[]);
        let got = ours(&data);
        swapper += got.keys().filter(|k| k.starts_with("swapper;")).count();
        assert!(
            got == want,
            "{name}: perfz only {:?}\nperf only {:?}",
            got.iter()
                .filter(|(k, v)| want.get(*k) != Some(v))
                .take(5)
                .collect::<Vec<_>>(),
            want.iter()
                .filter(|(k, v)| got.get(*k) != Some(v))
                .take(5)
                .collect::<Vec<_>>()
        );
    }
    assert!(swapper > 0, "no system-wide fixture's idle samples");
    let _ = std::fs::remove_dir_all(&dir);
}

/// After the summary, the files whose frames stayed unnamed, most first,
/// each with what would name it: a stripped program's build id for
/// debuginfod and its -dbgsym package.
#[test]
fn the_summary_names_the_files_without_symbols() {
    require_recording();
    let dir = tempdir("export-unnamed");
    let stripped = dir.join("stripped-deep");
    let st = std::process::Command::new("strip")
        .arg("-o")
        .arg(&stripped)
        .arg(workload())
        .status_within();
    assert!(st.success(), "strip");
    let notes = std::process::Command::new("readelf")
        .arg("-n")
        .arg(&stripped)
        .output_within();
    let notes = String::from_utf8_lossy(&notes.stdout).into_owned();
    let id = notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .expect("a build id")
        .to_string();
    let data = dir.join("s.data");
    let d = data.to_str().unwrap();
    perfz_ok(&[
        "record",
        "-q",
        "-g",
        "-o",
        d,
        "--",
        stripped.to_str().unwrap(),
        "0.3",
    ]);
    let o = perfz_ok(&["export", "-o", "/dev/null", "--no-debuginfod", d]);
    let said = String::from_utf8_lossy(&o.stderr).into_owned();
    let line = said
        .lines()
        .find(|l| l.contains(&format!(" frames in {}: ", stripped.display())))
        .unwrap_or_else(|| panic!("the stripped program is not named: {said}"));
    assert!(
        line.contains(&format!("debuginfod (build id {id})")),
        "{line}"
    );
    assert!(line.contains("-dbgsym"), "{line}");
    // Most first: no line below it counts more.
    let counts: Vec<u64> = said
        .lines()
        .filter_map(|l| l.trim().split(" frames in ").next()?.parse().ok())
        .collect();
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `perfz report` takes perf report's command line: with perf installed
/// every word reaches `perf report` and its output and status are perfz's;
/// without perf, the own table honours `-i`, `--stdio`, `--sort`,
/// `--no-children` and `--percent-limit` (its shares as perf's) and
/// refuses the rest by name (`perfz report -i f.data` failed with
/// "unexpected argument '-i'").
#[test]
fn report_takes_perf_reports_command_line() {
    let data = fixture("z-sysw-switch");
    let file = data.to_str().unwrap();
    let line = ["-i", file, "--stdio", "--no-children", "--sort", "comm,dso"];
    let report = |args: &[&str], path: Option<&str>| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_perfz"));
        c.arg("report").args(args);
        if let Some(p) = path {
            c.env("PATH", p);
        }
        c.output_within()
    };
    // perf's PATH is the one perfz looks on.
    let perf_dir = perf().parent().unwrap().to_str().unwrap().to_string();
    let theirs = std::process::Command::new(perf())
        .arg("report")
        .args(line)
        .output_within();
    let ours = report(&line, Some(&perf_dir));
    assert!(
        ours.status.success(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    // perf ends with a tip it picks at random.
    let untipped = |b: &[u8]| {
        let text = String::from_utf8_lossy(b);
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("# (Tip:")).collect();
        lines.join("\n")
    };
    assert_eq!(untipped(&ours.stdout), untipped(&theirs.stdout));
    let bad = report(&["-i", file, "--no-such-option"], Some(&perf_dir));
    let perf_bad = std::process::Command::new(perf())
        .args(["report", "-i", file, "--no-such-option"])
        .output_within();
    assert_eq!(bad.status.code(), perf_bad.status.code());
    // Without perf: the own table, its rows' shares as perf's.
    let own = report(&line, Some("/nonexistent"));
    let (out, err) = (
        String::from_utf8_lossy(&own.stdout),
        String::from_utf8_lossy(&own.stderr),
    );
    assert!(own.status.success(), "{err}");
    assert!(err.contains("apt-get install linux-perf"), "{err}");
    let share = |text: &str, comm: &str, dso: &str| -> f64 {
        let row = text.lines().find(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.len() == 3 && w[1] == comm && w[2] == dso
        });
        let row = row.unwrap_or_else(|| panic!("no row {comm} {dso} in:\n{text}"));
        row.split_whitespace()
            .next()
            .unwrap()
            .trim_end_matches('%')
            .parse()
            .unwrap()
    };
    let perf_text = String::from_utf8_lossy(&theirs.stdout);
    for (comm, dso) in [("cc1", "cc1"), ("cc1", "[kernel.kallsyms]")] {
        let (a, b) = (share(&out, comm, dso), share(&perf_text, comm, dso));
        assert!((a - b).abs() <= 1.0, "{comm} {dso}: perfz {a}%, perf {b}%");
    }
    assert!(out.contains("# Overhead  Command"), "{out}");
    // --percent-limit keeps the rows at or above it.
    let limited = report(
        &[&line[..], &["--percent-limit", "10"]].concat(),
        Some("/nonexistent"),
    );
    let rows = String::from_utf8_lossy(&limited.stdout)
        .lines()
        .filter(|l| {
            l.trim_start()
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
        })
        .count();
    assert_eq!(rows, 2, "{}", String::from_utf8_lossy(&limited.stdout));
    // An option the own table does not honour is named, with perf's 129.
    let g = report(&["-i", file, "-g"], Some("/nonexistent"));
    assert_eq!(g.status.code(), Some(129));
    assert!(String::from_utf8_lossy(&g.stderr).contains("-g: perfz's own table honours"));
}

/// A program under a directory whose name is not UTF-8 (issue 48: paths
/// are bytes, as perf passes them): its frames are named, and the build-id
/// table holds its path's bytes, as perf's does.
#[test]
fn a_program_at_a_path_that_is_not_utf8_is_named() {
    use std::os::unix::ffi::OsStringExt;
    require_recording();
    let dir = tempdir("export-not-utf8");
    let mut raw = dir.clone().into_os_string().into_vec();
    raw.extend_from_slice(b"/dir\xff");
    let odd = std::path::PathBuf::from(std::ffi::OsString::from_vec(raw));
    std::fs::create_dir_all(&odd).unwrap();
    let prog = odd.join("prog");
    std::fs::copy(workload(), &prog).unwrap();
    let data = dir.join("n.data");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_perfz"))
        .args(["record", "-q", "-g", "-o", data.to_str().unwrap(), "--"])
        .arg(&prog)
        .arg("0.2")
        .output_within();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let folded = perfz_ok(&["export", data.to_str().unwrap()]);
    let folded = String::from_utf8_lossy(&folded.stdout);
    assert!(folded.contains(";perfz_workload_leaf "), "{folded}");
    let list = std::process::Command::new(perf())
        .args(["buildid-list", "-i", data.to_str().unwrap()])
        .output_within();
    let want = prog.as_os_str().as_encoded_bytes();
    assert!(
        list.stdout.windows(want.len()).any(|w| w == want),
        "{}",
        String::from_utf8_lossy(&list.stdout)
    );
}
