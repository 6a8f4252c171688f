//! Opening the session's events: one fd per (event, CPU, thread), one ring per CPU, every other
//! fd on that CPU redirected into it (PERF_EVENT_IOC_SET_OUTPUT); `--per-thread`: one per task.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::attr_build::{build_attr, AttrOptions};
use super::events::EventSpec;
use super::fd::{cgroup_dirs, open_fd};
use super::ring::Ring;
use super::sys;
use crate::format::{Attr, AttrEntry};
use crate::notes::Notes;

pub use super::open_error::OpenError;

/// One event fd and where its records go.
pub struct EventFd {
    /// The fd perf_event_open(2) returned.
    pub fd: OwnedFd,
    /// Index in [`EventSet::attrs`] of the event it was opened for.
    pub(crate) attr_index: usize,
    /// The kernel's id for the fd (`PERF_EVENT_IOC_ID`), as samples carry it.
    pub id: u64,
    /// The index in [`EventSet::rings`] of the ring its records go to.
    pub ring: usize,
}

/// Which event carries the mmap/comm/task records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tracking {
    /// The first event, as perf does by default.
    First,
    /// An added `dummy` event, so the sampling events can be switched on
    /// and off; with `sampling_waits` they start disabled (`-D`).
    Dummy {
        /// The sampling events start disabled, to be enabled later (`-D`, `--control`).
        sampling_waits: bool,
        /// The CPUs the sampling events are opened on, where the dummy
        /// tracks every CPU (`-C` of some CPUs); `None`: every ring's.
        sampling_cpus: Option<Vec<u32>>,
    },
}

/// The CPU key of a per-thread ring (`--per-thread`: one ring per task, on
/// whatever CPU it runs).
pub const ANY_CPU: u32 = u32::MAX;

/// All open events of a session with their rings.
pub struct EventSet {
    /// Every event's attr, with the ids of its fds, in `-e` order (a tracking dummy last).
    pub attrs: Vec<AttrEntry>,
    /// The last attr is a `dummy` that only tracks (mmap, comm, task): the
    /// sampling events can then be enabled and disabled (`-D`, `--control`)
    /// without losing the record of what was mapped meanwhile.
    pub(crate) tracking_dummy: bool,
    /// Every fd opened, in opening order.
    pub fds: Vec<EventFd>,
    /// One per CPU, in CPU order, with the CPU number; or, per thread, one
    /// per task in the order given, with [`ANY_CPU`].
    pub rings: Vec<(u32, Ring)>,
    /// Data pages per ring actually mapped (may be less than asked).
    pub pages: usize,
    /// Messages for the user (fallbacks taken).
    pub notes: Notes,
}

/// Smallest ring we degrade to when locked memory is short.
pub const MIN_PAGES: usize = 2;

/// Each event's attr, probed once on the first ring's task and CPU to fall
/// back early: a hardware event the PMU refuses becomes its software
/// fallback, kernel sampling not permitted becomes `:u`, a kernel without
/// build-id MMAP2 records without. `waits`: where a tracking dummy is
/// added (it tracks the side band, else the first event does), whether the
/// sampling events wait to be enabled. Each fallback flips one
/// setting, so this ends; an attr still refused is opened (and reported
/// with its context) later.
fn probe(
    events: &[EventSpec],
    mut opts: AttrOptions,
    waits: Option<bool>,
    at: (i32, i32),
    notes: &mut Notes,
) -> (Vec<EventSpec>, Vec<Attr>) {
    let mut specs: Vec<EventSpec> = events.to_vec();
    if waits.is_some() {
        specs.push(EventSpec::parse("dummy").expect("known"));
    }
    let tracker = if waits.is_some() { specs.len() - 1 } else { 0 };
    let mut attrs: Vec<Attr> = Vec::new();
    for (i, ev) in specs.iter_mut().enumerate() {
        // Each fallback flips one setting, so this ends.
        let attr = loop {
            let mut o = opts;
            if let Some(sampling_waits) = waits {
                // Sampling events wait to be enabled; the dummy starts
                // with the workload (or at once).
                o.enable_on_exec = opts.enable_on_exec && (i == tracker || !sampling_waits);
            }
            let attr = build_attr(ev, &o, i == tracker);
            let e = match sys::open(&attr, at.0, at.1, -1) {
                Ok(_) => break attr,
                Err(e) => e,
            };
            if !fall_back(ev, &e, i == tracker, &mut opts, notes) {
                break attr; // reported with context below
            }
        };
        attrs.push(attr);
    }
    (specs, attrs)
}

/// The fallback for `ev`'s attr, refused with `e` (`tracker`: the event
/// tracking the side band), with a note: a refused `cycles` becomes its
/// software event, kernel sampling not permitted becomes `:u`, build-id
/// MMAP2 records unknown go off (in `opts`). False where none applies.
fn fall_back(
    ev: &mut EventSpec,
    e: &io::Error,
    tracker: bool,
    opts: &mut AttrOptions,
    notes: &mut Notes,
) -> bool {
    let errno = e.raw_os_error();
    // perf falls back from cycles alone (its default event); any
    // other event named and refused is an error, as perf's.
    let cycles = ev.type_ == crate::format::attr::TYPE_HARDWARE && ev.config == 0;
    if cycles && matches!(errno, Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV)) {
        let fb = ev.software_fallback();
        notes.push(format!(
            "hardware counters are not available here ({} refused: {e}); recording the software event {} instead",
            ev.name, fb.name
        ));
        *ev = fb;
    } else if !ev.exclude_kernel && matches!(errno, Some(libc::EACCES | libc::EPERM)) {
        let paranoid =
            std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap_or_default();
        notes.push(format!(
            "kernel profiling is not permitted here (perf_event_paranoid = {}); recording user space only, as {}:u",
            paranoid.trim(),
            ev.name
        ));
        ev.exclude_kernel = true;
        ev.name = format!("{}:u", ev.name);
    } else if tracker && opts.build_id && errno == Some(libc::EINVAL) {
        // Kernels before 5.12 know no build-id MMAP2.
        opts.build_id = false;
        notes.push("this kernel cannot put build ids into MMAP2 records; recording without");
    } else {
        return false;
    }
    true
}

/// Each ring: its CPU key, and the (pid, cpu) pairs writing into it.
fn ring_tasks(cpus: &[u32], pids: &[i32], per_thread: bool) -> Vec<(u32, Vec<(i32, i32)>)> {
    if per_thread {
        pids.iter().map(|&p| (ANY_CPU, vec![(p, -1)])).collect()
    } else {
        cpus.iter()
            .map(|&c| (c, pids.iter().map(|&p| (p, c as i32)).collect()))
            .collect()
    }
}

/// The note where locked memory made the rings smaller than `requested`.
fn smaller_rings(requested: usize, pages: usize) -> Option<String> {
    (pages < requested).then(|| {
        format!(
            "locked memory (ulimit -l, perf_event_mlock_kb) refused {requested} pages per ring; using {pages} pages ({} KiB)",
            pages * super::ring::page_size() / 1024
        )
    })
}

/// The attr index of each group member's leader.
fn group_leaders(specs: &[EventSpec]) -> Vec<Option<usize>> {
    specs
        .iter()
        .map(|e| {
            let g = e.group.filter(|g| !g.leader)?;
            specs
                .iter()
                .position(|l| l.group.is_some_and(|lg| lg.id == g.id && lg.leader))
        })
        .collect()
}

/// Maps `fd`'s ring of `pages` pages, halved down to [`MIN_PAGES`] while
/// locked memory refuses it.
fn map_ring(fd: &OwnedFd, pages: &mut usize, cpu: i32) -> Result<Ring, OpenError> {
    loop {
        match Ring::map(fd, *pages) {
            Ok(r) => return Ok(r),
            Err(e)
                if *pages > MIN_PAGES
                    && matches!(
                        e.raw_os_error(),
                        Some(libc::EPERM | libc::ENOMEM | libc::EAGAIN)
                    ) =>
            {
                *pages /= 2;
            }
            Err(err) => {
                return Err(OpenError::Map {
                    cpu,
                    pages: *pages,
                    err,
                })
            }
        }
    }
}

/// What every ring's fds are opened with: each event's attr and spec,
/// its group leader's index and its cgroup, and the CPUs the sampling
/// events are opened on (None: every CPU).
#[derive(Clone, Copy)]
struct Opening<'a> {
    attrs: &'a [Attr],
    specs: &'a [EventSpec],
    group_leader: &'a [Option<usize>],
    cgroups: &'a [Option<std::fs::File>],
    sampling_cpus: Option<&'a [u32]>,
}

impl EventSet {
    /// Opens `events` for `pids` (-1 = any) on `cpus`: one ring per CPU
    /// that every task's events on that CPU write into; or, `per_thread`, one
    /// ring per task with its events on any CPU (`cpus` unused). A hardware
    /// event the PMU refuses is replaced by its software fallback with a
    /// note; a ring the locked-memory limit refuses is halved down to
    /// [`MIN_PAGES`], with a note.
    pub fn open(
        events: &[EventSpec],
        opts: &AttrOptions,
        cpus: &[u32],
        pids: &[i32],
        pages: usize,
        per_thread: bool,
        tracking: Tracking,
    ) -> Result<EventSet, OpenError> {
        let (tracking_dummy, sampling_waits, sampling_cpus) = match tracking {
            Tracking::First => (false, false, None),
            Tracking::Dummy {
                sampling_waits,
                sampling_cpus,
            } => (true, sampling_waits, sampling_cpus),
        };
        let rings_of = ring_tasks(cpus, pids, per_thread);
        let mut notes = Notes::new();
        let waits = tracking_dummy.then_some(sampling_waits);
        let (specs, attrs) = probe(events, *opts, waits, rings_of[0].1[0], &mut notes);
        // Each attr's ids are gathered as its fds open.
        let entries: Vec<AttrEntry> = attrs
            .iter()
            .zip(&specs)
            .map(|(a, s)| AttrEntry::new(a.clone(), Some(s.name.clone())))
            .collect();
        let group_leader = group_leaders(&specs);
        let cgroups = cgroup_dirs(&specs)?;
        let mut set = EventSet {
            attrs: entries,
            tracking_dummy,
            fds: Vec::new(),
            rings: Vec::new(),
            pages,
            notes,
        };
        let opening = Opening {
            attrs: &attrs,
            specs: &specs,
            group_leader: &group_leader,
            cgroups: &cgroups,
            sampling_cpus: sampling_cpus.as_deref(),
        };
        let mut gone = None;
        for (key, tasks) in &rings_of {
            set.open_ring(*key, tasks, &opening, &mut gone)?;
        }
        // Every task listed had exited: nothing to record.
        if let Some(e) = gone.filter(|_| set.fds.is_empty()) {
            return Err(e);
        }
        set.notes.extend(smaller_rings(pages, set.pages));
        Ok(set)
    }

    /// Opens every event's fds for `tasks`, the (pid, cpu) pairs writing
    /// into the ring of CPU key `key`: the first fd maps the ring (halved
    /// while locked memory refuses it), the others write into it. Each
    /// attr comes with its group leader's index and its cgroup; the
    /// sampling events skip CPUs not in `sampling_cpus`. A task gone since
    /// it was listed is skipped, its error kept in `gone`.
    fn open_ring(
        &mut self,
        key: u32,
        tasks: &[(i32, i32)],
        how: &Opening<'_>,
        gone: &mut Option<OpenError>,
    ) -> Result<(), OpenError> {
        let Opening {
            attrs,
            specs,
            group_leader,
            cgroups,
            sampling_cpus,
        } = *how;
        let mut leader: Option<usize> = None;
        // (attr index, pid, cpu) -> index in fds, for group leaders.
        let mut opened: std::collections::HashMap<(usize, i32, i32), usize> =
            std::collections::HashMap::new();
        for (ai, attr) in attrs.iter().enumerate() {
            let dummy = self.tracking_dummy && ai == attrs.len() - 1;
            if !dummy && sampling_cpus.is_some_and(|c| !c.contains(&key)) {
                continue;
            }
            for &(pid, cpu) in tasks {
                let group_fd = group_leader[ai]
                    .and_then(|l| opened.get(&(l, pid, cpu)))
                    .map_or(-1, |&i| self.fds[i].fd.as_raw_fd());
                let fd = match open_fd(attr, &specs[ai], (pid, cpu), group_fd, cgroups[ai].as_ref())
                {
                    Ok(fd) => fd,
                    // A listed task (-p, -u) that exited since it was
                    // listed is left out, as perf leaves out a missing
                    // thread.
                    Err(e) if pid > 0 && e.no_such_process() => {
                        gone.get_or_insert(e);
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                let id = sys::id(&fd)?;
                self.attrs[ai].ids.push(id);
                opened.insert((ai, pid, cpu), self.fds.len());
                match leader {
                    None => {
                        self.rings.push((key, map_ring(&fd, &mut self.pages, cpu)?));
                        leader = Some(self.fds.len());
                    }
                    Some(l) => sys::set_output(&fd, &self.fds[l].fd)?,
                }
                self.fds.push(EventFd {
                    fd,
                    attr_index: ai,
                    id,
                    ring: self.rings.len() - 1,
                });
            }
        }
        Ok(())
    }

    /// Enables every fd (`PERF_EVENT_IOC_ENABLE`).
    pub fn enable(&self) -> io::Result<()> {
        self.fds.iter().try_for_each(|f| sys::enable(&f.fd))
    }

    /// Disables every fd (`PERF_EVENT_IOC_DISABLE`).
    pub fn disable(&self) -> io::Result<()> {
        self.fds.iter().try_for_each(|f| sys::disable(&f.fd))
    }

    /// The fds of the sampling events (all but a tracking dummy).
    fn sampling_fds(&self) -> impl Iterator<Item = &EventFd> {
        let dummy = self.tracking_dummy.then(|| self.attrs.len() - 1);
        self.fds.iter().filter(move |f| Some(f.attr_index) != dummy)
    }

    /// Enables only the tracking dummy (the sampling events wait).
    pub fn enable_tracking(&self) -> io::Result<()> {
        let dummy = self.tracking_dummy.then(|| self.attrs.len() - 1);
        self.fds
            .iter()
            .filter(|f| Some(f.attr_index) == dummy)
            .try_for_each(|f| sys::enable(&f.fd))
    }

    /// `enable` of `-D` / `--control`: the sampling events start counting.
    pub fn enable_sampling(&self) -> io::Result<()> {
        self.sampling_fds().try_for_each(|f| sys::enable(&f.fd))
    }

    /// `disable` of `--control`: the sampling events stop; tracking goes on.
    pub fn disable_sampling(&self) -> io::Result<()> {
        self.sampling_fds().try_for_each(|f| sys::disable(&f.fd))
    }
}
