//! User stacks of dwarf recordings (`--call-graph dwarf`), unwound as
//! `perf script` does it: from each sample's user registers and its copy of
//! the stack, with the .eh_frame / .debug_frame of the files the process
//! had mapped at the sample's time, by framehop (the unwinder samply uses).
//! The stack may be cut (perfz keeps only the bytes the kernel wrote): a
//! read past its end ends the unwinding there, as a read past the dump
//! does in perf.
//!
//! One unwinder per process, rebuilt when the process's maps change (an
//! exec, a dlopen); the files' unwind sections are read once per export.

use rustc_hash::FxHashMap;
use std::sync::Arc;

use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{FrameAddress, Unwinder};

use crate::export::files::file::FileBytes;
use crate::export::files::locate::Locate;
use crate::export::recording::process::Mapping;
use crate::export::recording::view::View;
use crate::export::unwind::all_regs;
use crate::export::unwind::cfi_cover::{frame_pointer_step, Leaf};
use crate::export::unwind::image::{Bytes, Image};
use crate::export::unwind::plt::plt_step;
use crate::export::unwind::stack_copy::{cut_short, StackCopy};
use crate::format::endian::Endian;
use crate::format::sample::Sample;

/// perf's x86-64 user register numbers (arch/x86/include/uapi/asm/perf_regs.h).
const REG_BP: u32 = 6;
const REG_SP: u32 = 7;
const REG_IP: u32 = 8;

/// The frame that ends a stack cut by the end of its copy: an address in
/// no mapping, so it is named `[unknown]`, as perf names the one it gives.
pub(crate) const UNKNOWN_ROOT: u64 = 0;

/// perf's default deepest chain (PERF_MAX_STACK_DEPTH).
const MAX_FRAMES: usize = 127;

/// A process's unwinder and the maps it was built from.
struct Process {
    /// The view it was last checked against.
    view: u64,
    /// (start, made at) of each mapping it holds.
    maps: Vec<(u64, u64)>,
    unwinder: UnwinderX86_64<Bytes>,
}

/// Unwinds the user stacks of one export.
pub(crate) struct Unwind {
    locate: Arc<Locate>,
    images: Images,
    processes: FxHashMap<u32, Process>,
    /// framehop's rule caches, each for its own stretches of addresses:
    /// one cache is direct-mapped by address over 509 slots, and a
    /// compiler's hot code takes more (see [`Unwind::cache_for`]).
    caches: Vec<CacheX86_64>,
    /// Whether the frame at an address of a mapping (its address in
    /// memory) keeps its CFA where framehop cannot find it, by stack end
    /// met.
    untracked: FxHashMap<(usize, u64), bool>,
}

/// How many rule caches an export keeps.
const CACHES: u64 = 16;

/// The addresses one rule cache covers in a row: framehop's slot is the
/// address modulo 509.
const CACHE_STRETCH: u64 = 509;

/// One sample's user state: registers (in `mask` order) and stack copy.
pub(crate) struct UserState<'a> {
    /// The sample's body from its first REGS_USER value on (u64 each, in `mask` order).
    pub(crate) regs: &'a [u8],
    /// `sample_regs_user`: which registers `regs` holds, in bit order.
    pub(crate) mask: u64,
    /// The user stack copy: the STACK_USER bytes the kernel filled (`dyn_size`).
    pub(crate) stack: &'a [u8],
    /// Byte order of `regs` (that of the file).
    pub(crate) endian: Endian,
}

impl<'a> UserState<'a> {
    /// A sample's user registers and stack copy, when it has both.
    pub(crate) fn of(s: &Sample, body: &'a [u8], mask: u64, e: Endian) -> Option<UserState<'a>> {
        if s.user_regs_at == 0 || s.user_stack_len == 0 {
            return None;
        }
        let len = usize::try_from(s.user_stack_len.min(s.user_stack_size)).ok()?;
        let at = s.user_stack_at.checked_add(8)?;
        Some(UserState {
            regs: body.get(s.user_regs_at..)?,
            mask,
            stack: body.get(at..at.checked_add(len)?)?,
            endian: e,
        })
    }

    fn reg(&self, n: u32) -> Option<u64> {
        if self.mask & (1 << n) == 0 {
            return None;
        }
        let i = (self.mask & ((1 << n) - 1)).count_ones() as usize * 8;
        Some(self.endian.u64(self.regs.get(i..i + 8)?.try_into().ok()?))
    }
}

impl Unwind {
    /// An unwinder with nothing loaded yet, which finds files with `locate`.
    pub(crate) fn new(locate: Arc<Locate>) -> Unwind {
        Unwind {
            locate,
            images: FxHashMap::default(),
            processes: FxHashMap::default(),
            caches: (0..CACHES).map(|_| CacheX86_64::new()).collect(),
            untracked: FxHashMap::default(),
        }
    }

    /// The user frames of process `pid` at `time`, leaf first: the
    /// sample's ip, then each caller's address as looked up (the return
    /// address less one). Empty when the registers lack ip or sp.
    pub(crate) fn frames(&mut self, view: &View<'_>, pid: u32, u: &UserState<'_>) -> Vec<u64> {
        let (Some(ip), Some(sp)) = (u.reg(REG_IP), u.reg(REG_SP)) else {
            return Vec::new();
        };
        let bp = u.reg(REG_BP).unwrap_or(0);
        let (processes, images) = (&mut self.processes, &mut self.images);
        let process = process(processes, images, &self.locate, view, pid);
        let copy = StackCopy::new(u.stack, u.endian, sp);
        let mut read_stack = |addr: u64| copy.read(addr);
        // A leaf no FDE covers is left by its frame pointer, as perf does,
        // or as the PLT stub it is in.
        let leaf = leaf(&self.images, view, ip);
        let mut regs = UnwindRegsX86_64::new(ip, sp, bp);
        let mut at = FrameAddress::from_instruction_pointer(ip);
        let mut frames = vec![ip];
        // The frames framehop stepped out of by the frame pointer, by
        // index: its rule there, or its fallback where the CFI is beyond it.
        let mut by_fp: u128 = 0;
        while frames.len() < MAX_FRAMES {
            let bp = regs.bp();
            let step = if frames.len() == 1 && leaf != Leaf::Cfi {
                uncovered_leaf(leaf, &mut regs, &mut read_stack)
            } else {
                let cache = cache_for(&mut self.caches, at.address_for_lookup());
                let step = process
                    .unwinder
                    .unwind_frame(at, &mut regs, cache, &mut read_stack);
                step.map_err(|_| ())
            };
            by_fp |= u128::from(regs.sp() == bp.wrapping_add(16)) << (frames.len() - 1);
            let next = match step {
                Ok(Some(ra)) => FrameAddress::from_return_address(ra),
                Ok(None) => break,
                Err(()) => None,
            };
            let Some(next) = next else {
                if cut_short(view, at.address_for_lookup(), copy.outside()) {
                    frames.push(UNKNOWN_ROOT);
                }
                break;
            };
            at = next;
            let addr = next.address_for_lookup();
            // A caller outside every mapping of code is a word past the
            // stack's end (ld.so's _start has no caller) or one of data (a
            // new thread's first instruction in __clone3 has none, the word
            // points into the heap), not a frame: perf 7.3 stops.
            if !view.holds_code(addr) {
                break;
            }
            frames.push(addr);
        }
        if frames.len() < MAX_FRAMES {
            self.again_with_all_regs(view, u, (sp, by_fp), &mut frames);
        }
        frames
    }

    /// Where `frames` meets a frame whose CFA framehop cannot find (see
    /// [`all_regs`]), the stack unwound again from `u` (its stack copy
    /// from `sp`) with every register, and kept as [`all_regs::keep`]
    /// says. Only the frames framehop stepped out of by the frame pointer
    /// (`by_fp`, by index), as its fallback does there, and the last are
    /// looked at.
    fn again_with_all_regs(
        &mut self,
        view: &View<'_>,
        u: &UserState<'_>,
        (sp, by_fp): (u64, u128),
        frames: &mut Vec<u64>,
    ) {
        let (images, untracked) = (&self.images, &mut self.untracked);
        let last = frames.iter().rposition(|&f| f != UNKNOWN_ROOT);
        let looked_at = |i: usize| by_fp & (1 << i) != 0 || Some(i) == last;
        let Some(at) = frames.iter().enumerate().position(|(i, &f)| {
            looked_at(i)
                && view.find(f).is_some_and(|m| {
                    *untracked
                        .entry((m as *const Mapping as usize, f))
                        .or_insert_with(|| {
                            row_at(images, view, f).is_some_and(|r| all_regs::untracked_cfa(&r))
                        })
                })
        }) else {
            return;
        };
        let copy = StackCopy::new(u.stack, u.endian, sp);
        let regs = all_regs::from_perf(|n| u.reg(n));
        let row = |addr| row_at(images, view, addr);
        let holds = |addr| view.holds_code(addr);
        let again = all_regs::frames(regs, MAX_FRAMES, row, holds, &mut |a| copy.read(a));
        let cut = |last| cut_short(view, last, copy.outside());
        all_regs::keep(frames, again, at, MAX_FRAMES, cut);
    }
}

/// The CFI row of the frame at lookup address `addr`, from the file
/// `view` maps there.
fn row_at(images: &Images, view: &View<'_>, addr: u64) -> Option<gimli::UnwindTableRow<usize>> {
    let m = view.find(addr)?;
    let image = images
        .get(&(m.path.clone(), m.build_id.clone()))?
        .as_ref()?;
    let off = addr.checked_sub(m.start)?.checked_add(m.pgoff)?;
    image.cfi_row(image.svma_of(off)?)
}

/// Whether a mapping of `path` may have unwind tables: files and the
/// vDSO; not anonymous memory (perf's `//anon`, which starts with a `/`
/// too: counting it rebuilt the unwinder at every malloc arena mapped).
fn has_unwind_tables(path: &str) -> bool {
    (path.starts_with('/') && !path.starts_with("//")) || path == "[vdso]"
}

/// The rule cache of `addr`: consecutive stretches of 509 addresses go to
/// consecutive caches, so the caches together act as one of 16 × 509
/// slots (cutting rule-cache misses, each a walk of the FDE's CFI).
fn cache_for(caches: &mut [CacheX86_64], addr: u64) -> &mut CacheX86_64 {
    let i = (addr / CACHE_STRETCH) % caches.len() as u64;
    &mut caches[i as usize]
}

/// How the leaf at `ip` is left (by the CFI where its file is unknown).
fn leaf(images: &Images, view: &View<'_>, ip: u64) -> Leaf {
    let Some(m) = view.find(ip) else {
        return Leaf::Cfi;
    };
    let Some(Some(image)) = images.get(&(m.path.clone(), m.build_id.clone())) else {
        return Leaf::Cfi;
    };
    let off = ip.checked_sub(m.start).and_then(|d| d.checked_add(m.pgoff));
    off.map_or(Leaf::Cfi, |off| image.leaf(off))
}

/// The caller of a leaf no FDE covers: by its frame pointer (see
/// [`frame_pointer_step`]), or as its PLT stub (see [`plt_step`]).
/// Ok(None): the stack ends (bp or the return address is 0).
fn uncovered_leaf(
    leaf: Leaf,
    regs: &mut UnwindRegsX86_64,
    read: &mut impl FnMut(u64) -> Result<u64, ()>,
) -> Result<Option<u64>, ()> {
    let (ra, sp, bp) = match leaf {
        Leaf::Plt(cfa) => {
            let (ra, sp) = plt_step(regs.sp(), cfa, read).ok_or(())?;
            (ra, sp, regs.bp())
        }
        _ if regs.bp() == 0 => return Ok(None),
        _ => frame_pointer_step(regs.sp(), regs.bp(), read).ok_or(())?,
    };
    if ra == 0 {
        return Ok(None);
    }
    regs.set_ip(ra);
    regs.set_sp(sp);
    regs.set_bp(bp);
    Ok(Some(ra))
}

type Images = FxHashMap<(Arc<str>, Option<Arc<[u8]>>), Option<Arc<Image>>>;

/// The unwinder of `pid` for its maps in `view`.
fn process<'a>(
    processes: &'a mut FxHashMap<u32, Process>,
    images: &mut Images,
    locate: &Locate,
    view: &View<'_>,
    pid: u32,
) -> &'a mut Process {
    if processes.get(&pid).is_some_and(|p| p.view == view.id) {
        return processes.get_mut(&pid).expect("found above");
    }
    // Of mappings that start at one address, the latest made; only files
    // (and the vDSO) have unwind tables: the heap's changes rebuild
    // nothing.
    let mut held: Vec<&Mapping> = view
        .maps
        .iter()
        .copied()
        .filter(|m| has_unwind_tables(&m.path))
        .collect();
    held.sort_by_key(|m| (m.start, std::cmp::Reverse(m.from)));
    held.dedup_by_key(|m| m.start);
    let key: Vec<(u64, u64)> = held.iter().map(|m| (m.start, m.from)).collect();
    let p = match processes.entry(pid) {
        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::hash_map::Entry::Vacant(e) => e.insert(Process {
            view: view.id,
            maps: Vec::new(),
            unwinder: UnwinderX86_64::new(),
        }),
    };
    p.view = view.id;
    if p.maps == key {
        return p;
    }
    let mut unwinder = UnwinderX86_64::new();
    for m in held {
        let image = images
            .entry((m.path.clone(), m.build_id.clone()))
            .or_insert_with(|| {
                let (bytes, debug) = locate.image(m)?;
                Image::load(bytes, &debug).map(Arc::new)
            });
        if let Some(module) = image.as_ref().and_then(|i| i.module(m)) {
            unwinder.add_module(module);
        }
    }
    p.maps = key;
    p.unwinder = unwinder;
    p
}

/// Unwinds a stack copy through one file mapped at 0x40_0000, with ip,
/// sp and bp taken from the stack's first words: the fuzz target's way to
/// give hostile unwind sections and stacks to the unwinder (framehop's,
/// then the one with every register, from the stack's next words). The
/// most frames either found.
pub fn unwind_one(image: &[u8], stack: &[u8]) -> usize {
    let Some(img) = Image::load(FileBytes::Owned(image.to_vec()), &[]) else {
        return 0;
    };
    let m = Mapping::whole_time(0x40_0000, 0x40_0000 + image.len() as u64, 0, "fuzz");
    let mut unwinder = UnwinderX86_64::new();
    if let Some(module) = img.module(&m) {
        unwinder.add_module(module);
    }
    let word = |i: usize| {
        stack
            .get(i * 8..i * 8 + 8)
            .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap()))
    };
    let (ip, sp, bp) = (word(0), word(1), word(2));
    let mut read_stack = |addr: u64| -> Result<u64, ()> {
        let off = usize::try_from(addr.wrapping_sub(sp)).map_err(|_| ())?;
        let b = stack.get(off..off.checked_add(8).ok_or(())?).ok_or(())?;
        Ok(u64::from_le_bytes(b.try_into().map_err(|_| ())?))
    };
    let mut cache = CacheX86_64::new();
    let mut it = unwinder.iter_frames(
        ip,
        UnwindRegsX86_64::new(ip, sp, bp),
        &mut cache,
        &mut read_stack,
    );
    let mut n = 0;
    while let Ok(Some(_)) = it.next() {
        n += 1;
        if n == MAX_FRAMES {
            break;
        }
    }
    // And with every register (the stack's next words): each frame's CFI
    // row as gimli reads it.
    let mut regs = all_regs::from_perf(|r| Some(word(3 + r as usize)));
    (regs[6], regs[7], regs[16]) = (Some(bp), Some(sp), Some(ip));
    let row = |addr: u64| {
        let off = addr.checked_sub(m.start)?.checked_add(m.pgoff)?;
        img.cfi_row(img.svma_of(off)?)
    };
    let holds = |addr: u64| (m.start..m.end).contains(&addr);
    n.max(all_regs::frames(regs, MAX_FRAMES, row, holds, &mut read_stack).len())
}
