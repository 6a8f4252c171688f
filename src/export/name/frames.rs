//! Every distinct frame of an export, named once: a callchain's addresses
//! (with perf's context markers) become ids of a table of frames named as
//! `perf script` prints them, so names are looked up (and tidied, by
//! folded) once per frame, not once per sample.
//!
//! Each distinct (mapping, address) is interned during the second pass and
//! named after it (`FrameTable::name_new`), the user frames first, so the
//! kernel's symbols, read beside the pass (kallsyms.rs), are waited for last.
//! `FrameTable::holders` counts the samples that hold each frame.

use std::sync::Arc;

use crate::export::name::jit::{is_anon, map_path as jit_map_path};
use crate::export::name::symbols::Symbols;
use crate::export::recording::process::Mapping;
use crate::export::recording::view::View;
use crate::format::record::KERNEL_MAPS;

/// perf's callchain context markers (`PERF_CONTEXT_*`, as u64).
pub(crate) const CONTEXT_HV: u64 = -32i64 as u64;
/// `PERF_CONTEXT_KERNEL`: the frames after it are kernel addresses.
pub(crate) const CONTEXT_KERNEL: u64 = -128i64 as u64;
/// `PERF_CONTEXT_USER`: the frames after it are user addresses.
pub(crate) const CONTEXT_USER: u64 = -512i64 as u64;
/// Everything from here up is a marker, not an address.
pub(crate) const CONTEXT_MAX: u64 = -4095i64 as u64;

/// One frame, named: its address, the functions there (innermost first;
/// empty: unknown), its mapping, and its module as perf prints it.
pub(crate) struct Named<'a> {
    /// The frame's address, as the callchain (or the unwinder) gives it.
    pub(crate) ip: u64,
    /// The functions at `ip`, innermost (inlined) first; empty if unknown.
    pub(crate) funcs: Vec<Arc<str>>,
    /// The mapping `ip` falls in, if any.
    pub(crate) map: Option<&'a Mapping>,
    /// The module perf prints (the mapped path, `[kernel.kallsyms]`, a JIT's map).
    pub(crate) module: Option<Arc<str>>,
    /// A kernel address (after `PERF_CONTEXT_KERNEL`).
    pub(crate) kernel: bool,
}

/// A frame as samples hold it, until it is named.
struct Raw<'a> {
    ip: u64,
    pid: u32,
    kernel: bool,
    map: Option<&'a Mapping>,
}

impl Named<'_> {
    /// A frame not (yet) named.
    fn unknown(ip: u64, kernel: bool) -> Self {
        Named {
            ip,
            funcs: Vec::new(),
            map: None,
            module: None,
            kernel,
        }
    }
}

/// Every distinct frame of an export, named once: by (mapping, address,
/// kernel) where the mapping is the Timeline's (its address: the
/// Timeline does not change once built) or none. Frames are named after
/// they are interned ([`FrameTable::name_new`]), so that the kernel's
/// symbols, read on a thread of their own, are waited for at the end of the
/// pass, if at all.
#[derive(Default)]
pub(crate) struct FrameTable<'a> {
    index: rustc_hash::FxHashMap<(usize, u64, bool), u32>,
    raw: Vec<Raw<'a>>,
    /// How many samples hold each frame.
    pub(crate) holders: Vec<u64>,
    /// The frames named so far, by id.
    pub(crate) named: Vec<Named<'a>>,
    /// The user mappings frames were first found in since the last
    /// [`FrameTable::take_new_maps`], and every one so far (by address).
    new_maps: Vec<&'a Mapping>,
    maps: rustc_hash::FxHashSet<usize>,
}

impl<'a> FrameTable<'a> {
    /// The ids of a callchain's frames, leaf first, of process `pid` whose
    /// maps (and the kernel's) at the sample's time are `views`.
    pub(crate) fn intern(
        &mut self,
        chain: &[u64],
        pid: u32,
        user: &View<'a>,
        kernel_maps: &View<'a>,
        ids: &mut Vec<u32>,
    ) {
        ids.clear();
        let mut kernel = false;
        for &ip in chain {
            match ip {
                CONTEXT_KERNEL | CONTEXT_HV => {
                    kernel = true;
                    continue;
                }
                CONTEXT_USER => {
                    kernel = false;
                    continue;
                }
                ip if ip >= CONTEXT_MAX => continue,
                _ => {}
            }
            let map = if kernel { kernel_maps } else { user }.find(ip);
            let key = (map.map_or(0, |m| m as *const Mapping as usize), ip, kernel);
            let next = self.raw.len() as u32;
            let id = *self.index.entry(key).or_insert(next);
            if id == next {
                if let Some(m) = map.filter(|_| !kernel) {
                    if self.maps.insert(key.0) {
                        self.new_maps.push(m);
                    }
                }
                self.raw.push(Raw {
                    ip,
                    pid,
                    kernel,
                    map,
                });
                self.holders.push(0);
            }
            self.holders[id as usize] += 1;
            ids.push(id);
        }
    }

    /// The user mappings frames were first found in since the last call
    /// (their symbols can be loaded beside the pass).
    pub(crate) fn take_new_maps(&mut self) -> std::vec::Drain<'_, &'a Mapping> {
        self.new_maps.drain(..)
    }

    /// Names the frames interned since the last call, as perf script
    /// prints them: the user frames first, so that the kernel's symbols
    /// (read on a thread of their own) are waited for last.
    pub(crate) fn name_new(&mut self, syms: &mut Symbols) {
        let from = self.named.len();
        let new = &self.raw[from..];
        for r in new {
            self.named.push(if r.kernel {
                Named::unknown(r.ip, true)
            } else {
                name_frame(r.ip, r.pid, false, r.map, syms)
            });
        }
        for (i, r) in new.iter().enumerate().filter(|(_, r)| r.kernel) {
            self.named[from + i] = name_frame(r.ip, r.pid, true, r.map, syms);
        }
    }
}

/// One frame as perf script prints it.
fn name_frame<'a>(
    ip: u64,
    pid: u32,
    kernel: bool,
    map: Option<&'a Mapping>,
    syms: &mut Symbols,
) -> Named<'a> {
    // Code in anonymous memory is a JIT's: perf names it from the process's
    // map, and calls that map its module.
    // Where the process's map names it, by the map's text as written
    // (Erlang's `$fibm:fib/1`), as perf script names a recording: its
    // jitdump (`fibm:fib/1`) is perf's only after `perf inject --jit`, so
    // names what no map does (node --perf-prof writes no map).
    let jit = !kernel && map.is_some_and(|m| is_anon(&m.path));
    let from_map = jit.then(|| syms.jit(pid, ip)).flatten();
    let jitted = (!kernel && from_map.is_none())
        .then(|| syms.jitted(pid, ip))
        .flatten();
    let func = if from_map.is_some() {
        from_map
    } else if let Some((func, _)) = &jitted {
        Some(func.clone())
    } else if kernel {
        syms.kernel(ip)
    } else if jit {
        None
    } else {
        map.and_then(|m| syms.user(m, ip))
    };
    // The functions DWARF says were inlined there, innermost first, above
    // the frame's own function, which keeps the symbol table's name (as
    // perf 7.3 keeps it): --inline adds frames, never renames one.
    let mut funcs = match (func.is_some(), map) {
        (true, Some(m)) if !kernel && jitted.is_none() => syms.inlined(m, ip),
        _ => Vec::new(),
    };
    funcs.extend(func);
    let module = match map {
        _ if jitted.is_some() => jitted.map(|(_, dump)| dump),
        Some(_) if jit => Some(jit_map_path(pid).to_string_lossy().into()),
        // The kernel's map is `[kernel.kallsyms]_text`; perf's module the
        // kernel itself.
        Some(m) if kernel && m.path.starts_with(KERNEL_MAPS) => Some(KERNEL_MAPS.into()),
        Some(m) => Some(m.path.clone()),
        // A kernel address no map of the recording holds: the kernel's
        // where its symbols are this kernel's; of another kernel perf
        // knows only the maps the recording gives (`[unknown]` outside).
        None if kernel && syms.kernel_named() => Some(KERNEL_MAPS.into()),
        None => None,
    };
    Named {
        ip,
        funcs,
        map,
        module,
        kernel,
    }
}
