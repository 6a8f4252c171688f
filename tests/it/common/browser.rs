//! Headless Chromium, opening what perfz writes as a person would: the
//! page's DOM once its scripts ran, and screenshots' pixels.

use std::path::Path;
use std::process::Command;

use super::{chromium, Within};

/// Chromium's standard output for `args` (after the page's scripts ran
/// for up to 10 s of its virtual time: a profile loads asynchronously).
pub fn headless(args: &[&str]) -> Vec<u8> {
    let o = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--virtual-time-budget=10000",
        ])
        .args(args)
        .output_within();
    assert!(
        o.status.success(),
        "chromium {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

/// The DOM of `url` once its scripts ran.
pub fn dom(url: &str) -> String {
    String::from_utf8_lossy(&headless(&["--dump-dom", url])).into_owned()
}

/// A `width` x `height` screenshot of `url`, saved as `png`: its pixels (RGB).
pub fn screenshot(url: &str, (width, height): (u32, u32), png: &Path) -> Vec<[u8; 3]> {
    headless(&[
        &format!("--window-size={width},{height}"),
        &format!("--screenshot={}", png.display()),
        url,
    ]);
    let file = std::io::BufReader::new(std::fs::File::open(png).unwrap());
    let mut png = png::Decoder::new(file)
        .read_info()
        .expect("chromium's screenshot is a PNG");
    let mut buf = vec![0; png.output_buffer_size()];
    let info = png.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    buf[..info.buffer_size()]
        .chunks_exact(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect()
}
