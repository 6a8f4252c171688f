//! Rendering an evaluation: terminal table, CSV, Markdown, JSON (serde) and an
//! SVG plot of ratio against compress speed with the Pareto front.

use std::fmt::Write;

use super::{Evaluation, Row};

const HEAD: [&str; 12] = [
    "codec",
    "ratio",
    "ring ratio",
    "compressed",
    "comp MB/s",
    "(median)",
    "ring MB/s",
    "decomp MB/s",
    "copies/B",
    "state",
    "keeps up",
    "pareto",
];

fn cells(r: &Row) -> [String; 12] {
    [
        r.spec.clone(),
        format!("{:.3}", r.ratio),
        format!("{:.3}", r.ring_ratio),
        r.compressed_bytes.to_string(),
        format!("{:.0}", r.compress_mbs_best),
        format!("{:.0}", r.compress_mbs_median),
        format!("{:.0}", r.ring_mbs_best),
        format!("{:.0}", r.decompress_mbs_best),
        format!("{:.2}", r.copies_per_byte),
        human(r.codec_state_bytes as u64),
        format!("{:.0} MB/s", r.keeps_up_mbs),
        if r.pareto { "*".into() } else { String::new() },
    ]
}

fn human(b: u64) -> String {
    match b {
        0..=9_999 => format!("{b} B"),
        10_000..=9_999_999 => format!("{:.0} KiB", b as f64 / 1024.0),
        _ => format!("{:.1} MiB", b as f64 / 1048576.0),
    }
}

fn footer(e: &Evaluation) -> String {
    let mut s = format!(
        "{} bytes of ring data from {}, pushed {} bytes at a time; none = memcpy baseline; * = Pareto-optimal (ratio vs compress speed)\n",
        e.raw_bytes, e.input, e.push_bytes
    );
    if e.codec_bytes != e.raw_bytes {
        let _ = writeln!(
            s,
            "the stack cut left out {} unwritten dwarf stack bytes: the codecs were given {} bytes; ratio and comp MB/s are per byte given to the codec (what `zstd -b` on the same bytes reports), ring ratio and ring MB/s per ring byte (the cut and the codec together)",
            e.raw_bytes - e.codec_bytes,
            e.codec_bytes
        );
    } else {
        s += "MB = 10^6 bytes of uncompressed trace\n";
    }
    for r in e.rows.iter().filter(|r| !r.params.is_empty()) {
        let _ = writeln!(s, "{}: {}", r.spec, r.params);
    }
    if let Some(r) = &e.recommendation {
        let _ = writeln!(s, "recommendation: {r}");
    }
    s
}

/// An aligned table for the terminal.
pub fn render_table(e: &Evaluation) -> String {
    let rows: Vec<[String; 12]> = e.rows.iter().map(cells).collect();
    let mut w = HEAD.map(str::len);
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.len());
        }
    }
    let line = |cs: &[String]| -> String {
        cs.iter()
            .enumerate()
            .map(|(i, c)| {
                if i == 0 {
                    format!("{c:<w$}", w = w[i])
                } else {
                    format!("{c:>w$}", w = w[i])
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let mut s = line(&HEAD.map(String::from)) + "\n";
    for r in &rows {
        s += &(line(r) + "\n");
    }
    s + &footer(e)
}

/// The table as a Markdown table, with the footer notes.
pub fn render_markdown(e: &Evaluation) -> String {
    let mut s = format!("| {} |\n|{}\n", HEAD.join(" | "), "---|".repeat(HEAD.len()));
    for r in &e.rows {
        s += &format!("| {} |\n", cells(r).join(" | "));
    }
    s + "\n" + &footer(e)
}

/// The rows as CSV, one line per codec after a header line.
pub fn render_csv(e: &Evaluation) -> String {
    let mut s = String::from(
        "codec,ratio,ring_ratio,codec_bytes,compressed_bytes,compress_mbs_best,compress_mbs_median,ring_mbs_best,decompress_mbs_best,decompress_mbs_median,copies_per_byte,codec_state_bytes,keeps_up_mbs,pareto\n",
    );
    for r in &e.rows {
        let _ = writeln!(
            s,
            "\"{}\",{:.4},{:.4},{},{},{:.1},{:.1},{:.1},{:.1},{:.1},{:.3},{},{:.1},{}",
            r.spec,
            r.ratio,
            r.ring_ratio,
            r.codec_bytes,
            r.compressed_bytes,
            r.compress_mbs_best,
            r.compress_mbs_median,
            r.ring_mbs_best,
            r.decompress_mbs_best,
            r.decompress_mbs_median,
            r.copies_per_byte,
            r.codec_state_bytes,
            r.keeps_up_mbs,
            r.pareto
        );
    }
    s
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The SVG plot's frame: its size and margin, the data ranges its axes span,
/// and the mapping from data to pixel coordinates.
#[derive(Clone, Copy)]
struct Plot {
    w: f64,
    h: f64,
    m: f64,
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Plot {
    /// The frame for points at `xs` (log10 of MB/s) and `ys` (ratios): x spans
    /// whole decades, y runs from 0 to a tenth above the best ratio (or 1).
    fn new(xs: &[f64], ys: &[f64]) -> Plot {
        let (w, h, m) = (800.0, 500.0, 70.0);
        let (x0, x1) = (
            xs.iter().copied().fold(f64::MAX, f64::min).floor(),
            xs.iter().copied().fold(f64::MIN, f64::max).ceil(),
        );
        let (y0, y1) = (0.0, ys.iter().copied().fold(1.0, f64::max) * 1.1);
        Plot {
            w,
            h,
            m,
            x0,
            x1,
            y0,
            y1,
        }
    }

    /// The pixel x of data x.
    fn px(&self, x: f64) -> f64 {
        let Plot { w, m, x0, x1, .. } = *self;
        m + (x - x0) / (x1 - x0).max(1e-9) * (w - 2.0 * m)
    }

    /// The pixel y of data y.
    fn py(&self, y: f64) -> f64 {
        let Plot { h, m, y0, y1, .. } = *self;
        h - m - (y - y0) / (y1 - y0).max(1e-9) * (h - 2.0 * m)
    }
}

/// Ratio (y) against compress speed (x, log scale), one point per codec, the
/// Pareto front as a line. Plain SVG: no font or plotting library needed.
pub fn render_svg(e: &Evaluation) -> String {
    let xs: Vec<f64> = e
        .rows
        .iter()
        .map(|r| r.compress_mbs_best.max(1.0).log10())
        .collect();
    let ys: Vec<f64> = e.rows.iter().map(|r| r.ratio).collect();
    let p = Plot::new(&xs, &ys);
    let Plot { w, h, .. } = p;
    let mut s = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n"
    );
    let _ = writeln!(
        s,
        "<title>{}</title>",
        esc(&format!("perfz eval: {}", e.input))
    );
    let _ = writeln!(
        s,
        "<rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"white\"/>"
    );
    svg_axes(&mut s, &p);
    svg_pareto_front(&mut s, e, &xs, &ys, &p);
    svg_points(&mut s, e, &xs, &ys, &p);
    s + "</svg>\n"
}

/// Writes the plot's axes: their lines, the decade ticks of the speed axis,
/// five ticks of the ratio axis, and both axis titles.
fn svg_axes(s: &mut String, p: &Plot) {
    let Plot {
        w,
        h,
        m,
        x0,
        x1,
        y0,
        y1,
    } = *p;
    let _ = writeln!(
        s,
        "<line x1=\"{m}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>",
        h - m,
        w - m,
        h - m
    );
    let _ = writeln!(
        s,
        "<line x1=\"{m}\" y1=\"{m}\" x2=\"{m}\" y2=\"{}\" stroke=\"black\"/>",
        h - m
    );
    let mut d = x0;
    while d <= x1 {
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            p.px(d),
            h - m + 18.0,
            10f64.powf(d)
        );
        d += 1.0;
    }
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">compress speed, MB/s (log)</text>",
        w / 2.0,
        h - 20.0
    );
    let _ = writeln!(s, "<text x=\"20\" y=\"{}\" transform=\"rotate(-90 20 {})\" text-anchor=\"middle\">compression ratio</text>", h / 2.0, h / 2.0);
    for k in 0..=4 {
        let y = y0 + (y1 - y0) * k as f64 / 4.0;
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{y:.1}</text>",
            m - 6.0,
            p.py(y) + 4.0
        );
    }
}

/// Writes the Pareto front as a dashed line through its codecs' points, left
/// to right; nothing where the front has fewer than two.
fn svg_pareto_front(s: &mut String, e: &Evaluation, xs: &[f64], ys: &[f64], p: &Plot) {
    let mut front: Vec<(f64, f64)> = e
        .rows
        .iter()
        .zip(xs.iter().zip(ys))
        .filter(|(r, _)| r.pareto)
        .map(|(_, (&x, &y))| (p.px(x), p.py(y)))
        .collect();
    front.sort_by(|a, b| a.0.total_cmp(&b.0));
    if front.len() > 1 {
        let pts: Vec<String> = front
            .iter()
            .map(|(x, y)| format!("{x:.1},{y:.1}"))
            .collect();
        let _ = writeln!(s, "<polyline class=\"pareto\" points=\"{}\" fill=\"none\" stroke=\"#d62728\" stroke-dasharray=\"4 3\"/>", pts.join(" "));
    }
}

/// Writes one labelled point per codec, Pareto-optimal ones in red.
fn svg_points(s: &mut String, e: &Evaluation, xs: &[f64], ys: &[f64], p: &Plot) {
    for (r, (&x, &y)) in e.rows.iter().zip(xs.iter().zip(ys)) {
        let color = if r.pareto { "#d62728" } else { "#1f77b4" };
        let _ = writeln!(
            s,
            "<circle class=\"codec\" data-codec=\"{}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"5\" fill=\"{color}\"><title>{}: ratio {:.3}, {:.0} MB/s</title></circle>",
            esc(&r.spec),
            p.px(x),
            p.py(y),
            esc(&r.spec),
            r.ratio,
            r.compress_mbs_best
        );
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            p.px(x) + 7.0,
            p.py(y) - 7.0,
            esc(&r.spec)
        );
    }
}
