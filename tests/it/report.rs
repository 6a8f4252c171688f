//! `perfz report`'s command line read as perf report reads it (an
//! option's value is never the input; a `--threads` directory is the input
//! as a file is), and its own table counted from the recording's samples,
//! whatever its programs' names hold.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::*;

/// `perfz report ARGS` in `dir`, perf on PATH (`perf_dir`) or not (None).
fn report_in(dir: &Path, args: &[&str], perf_dir: Option<&str>) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfz"))
        .current_dir(dir)
        .arg("report")
        .args(args)
        .env("PATH", perf_dir.unwrap_or("/nonexistent"))
        .output_within()
}

/// perf's output without the tip it picks at random.
fn untipped(b: &[u8]) -> String {
    let text = String::from_utf8_lossy(b);
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("# (Tip:")).collect();
    lines.join("\n")
}

/// `-k FILE`, `--kallsyms FILE` and `--comms NAME` take their values as
/// perf report does, though the values name files in the directory
/// (perfz took every such word for `-i`: "Invalid file: -i", or another
/// input read).
#[test]
fn an_options_value_naming_a_file_stays_its_value() {
    let data = fixture("z-sysw-switch");
    let dir = tempdir("report-values");
    // The fixture's busiest comm, and a file of that name here.
    std::fs::write(dir.join("cc1"), "").unwrap();
    let args = [
        "--stdio",
        "--no-children",
        "-i",
        data.to_str().unwrap(),
        "--comms",
        "cc1",
        "-k",
        "cc1",
        "--kallsyms",
        "/proc/kallsyms",
    ];
    let perf = perf();
    let theirs = Command::new(&perf)
        .current_dir(&dir)
        .arg("report")
        .args(args)
        .output_within();
    assert!(theirs.status.success(), "{}", all_output(&theirs));
    let perf_dir = perf.parent().unwrap().to_str().unwrap();
    let ours = report_in(&dir, &args, Some(perf_dir));
    assert!(ours.status.success(), "{}", all_output(&ours));
    assert_eq!(untipped(&ours.stdout), untipped(&theirs.stdout));
    assert!(untipped(&ours.stdout).contains("# comm: cc1"));
    // The own table honours --kallsyms and reads -i's file.
    let own = report_in(
        &dir,
        &["--kallsyms", "/proc/kallsyms", "-i", data.to_str().unwrap()],
        None,
    );
    assert!(own.status.success(), "{}", all_output(&own));
    let n = perf_sample_count(&perf, &data);
    let out = String::from_utf8_lossy(&own.stdout);
    assert!(out.contains(&format!("# Samples: {n} of event")), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `perfz report DIR`, DIR a `perfz record --threads` recording, reads
/// it as `perfz report FILE` reads a file: perf's `-i DIR`, or the own
/// table of it (perf took DIR for a symbol filter, the own table refused it).
#[test]
fn a_threads_directory_is_the_input_as_a_file_is() {
    require_recording();
    let dir = tempdir("report-dir");
    let rec = dir.join("t.data");
    let r = rec.to_str().unwrap();
    let w = workload();
    perfz_ok(&[
        "record",
        "-q",
        "--threads=2",
        "-g",
        "-o",
        r,
        "--",
        w.to_str().unwrap(),
        "0.2",
    ]);
    assert!(rec.is_dir());
    let perf = perf();
    let theirs = Command::new(&perf)
        .args(["report", "--stdio", "--no-children", "-i", r])
        .output_within();
    assert!(theirs.status.success(), "{}", all_output(&theirs));
    let perf_dir = perf.parent().unwrap().to_str().unwrap();
    let ours = report_in(&dir, &[r, "--stdio", "--no-children"], Some(perf_dir));
    assert!(ours.status.success(), "{}", all_output(&ours));
    assert_eq!(untipped(&ours.stdout), untipped(&theirs.stdout));
    // Without perf: the own table of the directory.
    let own = report_in(&dir, &[r], None);
    assert!(own.status.success(), "{}", all_output(&own));
    let out = String::from_utf8_lossy(&own.stdout);
    let n = our_sample_count(&rec);
    assert!(
        n > 0 && out.contains(&format!("# Samples: {n} of event")),
        "{n}: {out}"
    );
    assert!(out.contains("perfz_workload_"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The share of `sym`'s row in a `--no-children --sort sym` table (perf
/// report's or the own one).
fn self_share(table: &str, sym: &str) -> Option<f64> {
    let line = table
        .lines()
        .find(|l| l.ends_with(&format!("] {sym}")) && !l.trim_start().starts_with('|'))?;
    line.split_whitespace()
        .next()?
        .trim_end_matches('%')
        .parse()
        .ok()
}

/// A program whose file name holds a newline and a number (`e
/// 99999999999\nx`, a name any user can give a file) is one row of the own
/// table with its real share: the table was read back from export's folded
/// text, where the name's newline made a line `...\te 99999999999` that
/// counted 99 999 999 999 samples and moved every percentage.
#[test]
fn a_program_named_with_a_newline_and_a_number_forges_no_row() {
    require_recording();
    let dir = tempdir("report-forged");
    let prog = dir.join("e 99999999999\nx");
    std::fs::copy(workload(), &prog).unwrap();
    let rec = dir.join("r.data");
    let r = rec.to_str().unwrap();
    perfz_ok(&[
        "record",
        "-q",
        "-g",
        "-o",
        r,
        "--",
        prog.to_str().unwrap(),
        "0.3",
    ]);
    let perf = perf();
    let line = ["--stdio", "--no-children", "--sort", "sym", "-i", r];
    let theirs = run_perf(&perf, &[&["report"][..], &line].concat());
    let perf_leaf = self_share(&theirs, "perfz_workload_leaf")
        .unwrap_or_else(|| panic!("perf report names the leaf: {theirs}"));
    let own = report_in(
        &dir,
        &[&["--own", "--rows", "100000"][..], &line].concat(),
        None,
    );
    assert!(own.status.success(), "{}", all_output(&own));
    let table = String::from_utf8_lossy(&own.stdout);
    let n = perf_sample_count(&perf, &rec);
    assert!(
        table.contains(&format!("# Samples: {n} of event")),
        "{n}: {table}"
    );
    let ours = self_share(&table, "perfz_workload_leaf")
        .unwrap_or_else(|| panic!("the own table names the leaf: {table}"));
    assert!(
        (ours - perf_leaf).abs() <= 1.0,
        "self of the leaf: perfz {ours}%, perf {perf_leaf}%\n{table}"
    );
    // Every row is a row of the recording's, its shares summing to all.
    let rows: Vec<f64> = table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let share = l.split_whitespace().next().unwrap_or("");
            share
                .trim_end_matches('%')
                .parse()
                .unwrap_or_else(|_| panic!("not a row: {l:?}"))
        })
        .collect();
    let sum: f64 = rows.iter().sum();
    assert!(
        (sum - 100.0).abs() <= 0.01 * rows.len() as f64,
        "{sum}%: {table}"
    );
    // The dso column names the program, its newline escaped.
    let by_dso = report_in(
        &dir,
        &["--own", "--no-children", "--sort", "dso", "-i", r],
        None,
    );
    let by_dso = String::from_utf8_lossy(&by_dso.stdout);
    assert!(by_dso.contains("e 99999999999\\nx"), "{by_dso}");
    let _ = std::fs::remove_dir_all(&dir);
}
