//! libzstd on one file's bytes, the ways it can be driven: one-shot (what
//! `zstd -b` measures), streaming as perfz's push path drives it (pieces of
//! `PIECE` bytes, `ZSTD_e_continue`, zstd's own block size, one flush at
//! the end), streaming flushed every 110 000 bytes (about where perfz's
//! record cutter ends blocks), and streaming from a stable 8 MiB staging
//! buffer (`ZSTD_c_stableInBuffer`, a frame per buffer; raw FFI: zstd-safe
//! refuses that parameter). Best of 7 runs each; the same library perfz
//! links. Separates the push path's own cost from libzstd's streaming cost.
//!
//!   cargo run --release -p perfz-benches --example zstd_modes -- FILE LEVEL [PIECE]

use std::time::Instant;

use zstd_safe::zstd_sys::ZSTD_EndDirective::{ZSTD_e_continue, ZSTD_e_end};
use zstd_safe::{CCtx, CParameter, InBuffer, OutBuffer};

fn best(name: &str, data: &[u8], mut f: impl FnMut() -> usize) {
    let (mut secs, mut out) = (f64::MAX, 0);
    for _ in 0..7 {
        let t = Instant::now();
        out = f();
        secs = secs.min(t.elapsed().as_secs_f64());
    }
    let mbs = data.len() as f64 / 1e6 / secs;
    let ratio = data.len() as f64 / out as f64;
    println!("{name:<34} {mbs:>7.0} MB/s  x{ratio:.2}");
}

fn context(level: i32) -> CCtx<'static> {
    let mut c = CCtx::create();
    c.set_parameter(CParameter::CompressionLevel(level))
        .unwrap();
    c
}

/// Flushes `c` into `win` until nothing is pending; returns the bytes.
fn flush_all(c: &mut CCtx, win: &mut [u8]) -> usize {
    let mut total = 0;
    loop {
        let mut o = OutBuffer::around(&mut win[..]);
        let left = c.flush_stream(&mut o).unwrap();
        total += o.pos();
        if left == 0 {
            return total;
        }
    }
}

fn streamed(data: &[u8], level: i32, piece: usize, flush_every: usize) -> usize {
    let mut c = context(level);
    let mut win = vec![0u8; 65_527];
    let (mut total, mut since) = (0, 0);
    for p in data.chunks(piece) {
        let mut inp = InBuffer::around(p);
        while inp.pos() < p.len() {
            let mut o = OutBuffer::around(&mut win[..]);
            c.compress_stream2(&mut o, &mut inp, ZSTD_e_continue)
                .unwrap();
            total += o.pos();
        }
        since += p.len();
        if flush_every > 0 && since >= flush_every {
            since = 0;
            total += flush_all(&mut c, &mut win);
        }
    }
    total + flush_all(&mut c, &mut win)
}

fn staged(data: &[u8], level: i32, piece: usize, stage: &mut [u8]) -> usize {
    use zstd_safe::zstd_sys as z;
    // SAFETY: a context we create and free here; parameters by their enum.
    let c = unsafe { z::ZSTD_createCCtx() };
    assert!(!c.is_null());
    // SAFETY: `c` is a live context.
    unsafe {
        z::ZSTD_CCtx_setParameter(c, z::ZSTD_cParameter::ZSTD_c_compressionLevel, level);
        z::ZSTD_CCtx_setParameter(c, z::ZSTD_cParameter::ZSTD_c_experimentalParam9, 1);
    }
    let mut win = vec![0u8; 65_527];
    let (mut total, mut fill) = (0usize, 0usize);
    let mut inb = z::ZSTD_inBuffer {
        src: stage.as_ptr().cast(),
        size: 0,
        pos: 0,
    };
    let mut run = |inb: &mut z::ZSTD_inBuffer, end: bool, total: &mut usize| loop {
        let mut o = z::ZSTD_outBuffer {
            dst: win.as_mut_ptr().cast(),
            size: win.len(),
            pos: 0,
        };
        let mode = if end { ZSTD_e_end } else { ZSTD_e_continue };
        // SAFETY: `inb` points into `stage`, which stays put and unchanged
        // below `inb.size` until the frame ends (the stable-input contract);
        // `o` points into `win`.
        let r = unsafe { z::ZSTD_compressStream2(c, &mut o, inb, mode) };
        // SAFETY: a plain function of the code.
        assert_eq!(unsafe { z::ZSTD_isError(r) }, 0);
        *total += o.pos;
        let done = if end {
            r == 0
        } else {
            inb.pos == inb.size || o.pos < o.size
        };
        if done {
            break;
        }
    };
    for p in data.chunks(piece) {
        if fill + p.len() > stage.len() {
            run(&mut inb, true, &mut total);
            fill = 0;
            inb.size = 0;
            inb.pos = 0;
        }
        stage[fill..fill + p.len()].copy_from_slice(p);
        fill += p.len();
        inb.size = fill;
        run(&mut inb, false, &mut total);
    }
    run(&mut inb, true, &mut total);
    // SAFETY: freed once, not used after.
    unsafe { z::ZSTD_freeCCtx(c) };
    total
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 3 {
        eprintln!("usage: zstd_modes FILE LEVEL [PIECE]");
        std::process::exit(2);
    }
    let data = std::fs::read(&a[1]).unwrap();
    let level: i32 = a[2].parse().unwrap();
    let piece: usize = a.get(3).map_or(1500, |p| p.parse().unwrap());
    let mut dst = vec![0u8; zstd_safe::compress_bound(data.len())];
    println!("{} bytes, level {level}, pieces of {piece}", data.len());
    best("one-shot (ZSTD_compress2)", &data, || {
        context(level).compress2(&mut dst[..], &data).unwrap()
    });
    best("streaming, one flush", &data, || {
        streamed(&data, level, piece, 0)
    });
    for every in [65_000, 90_000, 110_000, 125_000, 200_000, 1_000_000] {
        best(&format!("streaming, flush every {every}"), &data, || {
            streamed(&data, level, piece, every)
        });
    }
    let mut stage = vec![0u8; 8 << 20];
    best("stable 8 MiB staging, frame each", &data, || {
        staged(&data, level, piece, &mut stage)
    });
}
